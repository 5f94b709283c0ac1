package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/luabind/luaval"
)

// targetFlags are the flags that reach a real deployment — headers, the
// auth style, TLS files, HTTP/2 — over the script's options.target. They
// apply to every target of a plan alike.
type targetFlags struct {
	headerArgs                    []string
	auth                          string
	caCert, clientCert, clientKey string
	insecure, http2               bool

	headers []plan.Header // headerArgs, parsed
}

func (f *targetFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.headerArgs, "header", nil, "send this header on every request, 'Name: value'; repeatable; replaces the\n"+
		"script's header of that name (a value whose name means a credential is never printed)")
	fs.StringVar(&f.auth, "auth", "", "how the API key is sent: bearer (Authorization: Bearer, the default), api-key (Azure\n"+
		"OpenAI), x-api-key (Anthropic, some gateways) or none")
	fs.StringVar(&f.caCert, "ca-cert", "", "trust the server certificates this PEM bundle signs, instead of the system's roots")
	fs.StringVar(&f.clientCert, "client-cert", "", "client certificate (PEM) for mutual TLS, with --client-key")
	fs.StringVar(&f.clientKey, "client-key", "", "private key (PEM) of --client-cert")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's TLS certificate (a test server's only: anyone in\n"+
		"the path could read the key)")
	fs.BoolVar(&f.http2, "http2", false, "speak HTTP/2: negotiated in TLS for https://, in clear text (h2c) for http://")
}

// parse checks the flags before any script runs. A malformed one is a
// usage error (exit 2); a file that cannot serve is an error (exit 1).
// cmd names the subcommand in the messages.
func (f *targetFlags) parse(cmd string) error {
	for _, arg := range f.headerArgs {
		h, err := parseHeaderFlag(arg)
		if err != nil {
			return usagef("%s: --header %v", cmd, err)
		}
		for _, o := range f.headers {
			if strings.EqualFold(o.Name, h.Name) {
				return usagef("%s: --header %q given twice (header names are case-insensitive)", cmd, h.Name)
			}
		}
		f.headers = append(f.headers, h)
	}
	if styles := plan.AuthStyles(); f.auth != "" && !luaval.Contains(styles, f.auth) {
		msg := fmt.Sprintf("%s: --auth %q: want %s or %s", cmd, f.auth, strings.Join(styles[:len(styles)-1], ", "), styles[len(styles)-1])
		if best, ok := luaval.Nearest(f.auth, styles); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		return usagef("%s", msg)
	}
	return f.checkFiles(cmd)
}

// parseHeaderFlag splits 'Name: value' at its first colon. The error never
// quotes the value, which may be a credential.
func parseHeaderFlag(arg string) (plan.Header, error) {
	name, value, ok := strings.Cut(arg, ":")
	if !ok {
		return plan.Header{}, fmt.Errorf("wants 'Name: value', and the %d characters given hold no colon", len(arg))
	}
	h := plan.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
	if err := plan.CheckHeader(h.Name, h.Value); err != nil {
		return plan.Header{}, fmt.Errorf("%q: %v", h.Name, err)
	}
	return h, nil
}

// checkFiles reads the TLS files now, so that a wrong path stops the run
// before the script does anything.
func (f *targetFlags) checkFiles(cmd string) error {
	if (f.clientCert == "") != (f.clientKey == "") {
		if f.clientKey == "" {
			return usagef("%s: --client-cert needs --client-key, the certificate's private key", cmd)
		}
		return usagef("%s: --client-key needs --client-cert, the certificate it is the key of", cmd)
	}
	if f.caCert != "" {
		if err := plan.CheckCACert(f.caCert); err != nil {
			return fmt.Errorf("%s: --ca-cert: %w", cmd, err)
		}
	}
	if f.clientCert == "" {
		return nil
	}
	for _, file := range []struct{ flag, path string }{{"--client-cert", f.clientCert}, {"--client-key", f.clientKey}} {
		if err := plan.CheckPEMFile(file.path); err != nil {
			return fmt.Errorf("%s: %s: %w", cmd, file.flag, err)
		}
	}
	if err := plan.CheckClientCert(f.clientCert, f.clientKey); err != nil {
		return fmt.Errorf("%s: --client-cert, --client-key: %w", cmd, err)
	}
	return nil
}

// applyPlan applies the flags to the plan's target and to each of its
// targets, once the target's URL and key are resolved (flag, environment,
// script).
func (f *targetFlags) applyPlan(cmd string, p *plan.Plan) error {
	if err := f.apply(cmd, &p.Target); err != nil {
		return err
	}
	for i := range p.Targets {
		if err := f.apply(cmd, &p.Targets[i]); err != nil {
			return fmt.Errorf("target %s: %w", p.Targets[i].Name, err)
		}
	}
	return nil
}

// apply puts the flags over one target's settings and checks what they
// make together.
func (f *targetFlags) apply(cmd string, t *plan.Target) error {
	for _, h := range f.headers {
		t.Headers = plan.SetHeader(t.Headers, h.Name, h.Value)
	}
	if f.auth != "" {
		t.Auth = f.auth
	}
	if f.caCert != "" {
		t.TLS.CACert = f.caCert
	}
	if f.clientCert != "" {
		t.TLS.ClientCert, t.TLS.ClientKey = f.clientCert, f.clientKey
	}
	t.TLS.InsecureSkipVerify = t.TLS.InsecureSkipVerify || f.insecure
	plain := urlScheme(t.BaseURL) == "http"
	if f.http2 {
		t.HTTP2, t.H2C = true, t.H2C || plain
	}
	return checkResolved(cmd, *t, plain)
}

// checkResolved reports what only the resolved target shows: HTTP/2
// asked of a plain-HTTP URL given by a flag or the environment, and a
// header that would replace the one the API key goes in.
func checkResolved(cmd string, t plan.Target, plain bool) error {
	if t.HTTP2 && !t.H2C && plain {
		return usagef("%s: options.target.http2: the target %s is plain http://, and HTTP/2 is negotiated in TLS: "+
			"add --http2 to speak it in clear text (h2c), or use https://", cmd, redact.URL(t.BaseURL))
	}
	auth := t.AuthHeaderName()
	if auth == "" || t.APIKey == "" {
		return nil
	}
	for _, h := range t.Headers {
		if strings.EqualFold(h.Name, auth) {
			return usagef("%s: header %q (--header or options.target.headers) is also the one the API key "+
				"(--api-key, LLMLOAD_API_KEY or options.target.api_key) is sent in: drop one, or set --auth none", cmd, h.Name)
		}
	}
	return nil
}

// urlScheme is raw's scheme in lower case, "" when it has none.
func urlScheme(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme)
}
