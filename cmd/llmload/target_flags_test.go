package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/tlstest"
)

// writeCertPair writes a certificate of a CA of its own and its key as
// PEM files dir/name.pem and dir/name-key.pem and returns their paths.
func writeCertPair(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	return tlstest.NewCA(t, name).Issue(t, tlstest.Leaf{CommonName: name, Client: true}).Write(t, dir, name)
}

func TestParseHeaderFlag(t *testing.T) {
	tests := []struct {
		arg  string
		want plan.Header
		err  string
	}{
		{"X-Tenant: acme", plan.Header{Name: "X-Tenant", Value: "acme"}, ""},
		{"  X-Tenant :  a b  ", plan.Header{Name: "X-Tenant", Value: "a b"}, ""},
		{"Authorization: Bearer a:b", plan.Header{Name: "Authorization", Value: "Bearer a:b"}, ""},
		{"X-Empty:", plan.Header{Name: "X-Empty"}, ""},
		{"Authorization Bearer sk-flag-secret", plan.Header{}, "wants 'Name: value', and the 35 characters given hold no colon"},
		{"X Bad: v", plan.Header{}, `"X Bad": the name holds a space at position 2`},
		{": v", plan.Header{}, `"": the name is empty`},
		{"Host: evil.example", plan.Header{}, `"Host": llmload sets Host from the base URL`},
	}
	for _, tt := range tests {
		got, err := parseHeaderFlag(tt.arg)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("parseHeaderFlag(%q) = %v", tt.arg, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseHeaderFlag(%q) = %v, want an error containing %q", tt.arg, err, tt.err)
		case err == nil && got != tt.want:
			t.Errorf("parseHeaderFlag(%q) = %+v, want %+v", tt.arg, got, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-flag-secret") {
			t.Errorf("parseHeaderFlag(%q): the error quotes the value: %v", tt.arg, err)
		}
	}
}

func TestTargetFlagsParseErrors(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCertPair(t, dir, "a")
	_, otherKey := writeCertPair(t, dir, "b")
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name  string
		flags targetFlags
		usage bool // a usage error (exit 2), else an error (exit 1)
		want  string
	}{
		{"header twice", targetFlags{headerArgs: []string{"X-Tenant: a", "x-tenant: b"}}, true,
			`run: --header "x-tenant" given twice (header names are case-insensitive)`},
		{"bad header", targetFlags{headerArgs: []string{"X\tY: v"}}, true, `run: --header "X\tY": the name holds a tab at position 2`},
		{"auth typo", targetFlags{auth: "barer"}, true, `run: --auth "barer": want bearer, api-key, x-api-key or none (did you mean bearer?)`},
		{"auth far", targetFlags{auth: "mtls-and-more"}, true, `run: --auth "mtls-and-more": want bearer, api-key, x-api-key or none`},
		{"cert alone", targetFlags{clientCert: cert}, true, "run: --client-cert needs --client-key"},
		{"key alone", targetFlags{clientKey: key}, true, "run: --client-key needs --client-cert"},
		{"ca missing", targetFlags{caCert: missing}, false, "run: --ca-cert: " + missing + ": no such file or directory"},
		{"ca a key", targetFlags{caCert: key}, false, "run: --ca-cert: " + key + ": holds no PEM certificate"},
		{"key missing", targetFlags{clientCert: cert, clientKey: missing}, false, "run: --client-key: " + missing + ": no such file"},
		{"pair mismatched", targetFlags{clientCert: cert, clientKey: otherKey}, false,
			"run: --client-cert, --client-key: " + cert + " and " + otherKey + " are not a certificate and its private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.flags.parse("run")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parse() = %v, want an error containing %q", err, tt.want)
			}
			if _, usage := err.(*usageError); usage != tt.usage {
				t.Errorf("parse() = %T, usage error %v, want %v", err, usage, tt.usage)
			}
		})
	}
	ok := targetFlags{headerArgs: []string{"X-Tenant: a"}, auth: plan.AuthAPIKey, caCert: cert, clientCert: cert, clientKey: key}
	if err := ok.parse("run"); err != nil {
		t.Errorf("parse() of good flags = %v", err)
	}
}

func TestTargetFlagsApply(t *testing.T) {
	script := plan.Target{BaseURL: "https://h/v1", Headers: []plan.Header{{Name: "X-Region", Value: "eu"}, {Name: "X-Tenant", Value: "acme"}},
		TLS: plan.TLS{CACert: "/script/ca.pem", ServerName: "llm.internal"}}
	tests := []struct {
		name   string
		flags  targetFlags
		target plan.Target
		want   func(*plan.Target)
	}{
		{"none", targetFlags{}, script, func(*plan.Target) {}},
		{"header replaces the script's, in any case", targetFlags{headers: []plan.Header{{Name: "x-tenant", Value: "beta"}, {Name: "A", Value: "1"}}},
			script, func(t *plan.Target) {
				t.Headers = []plan.Header{{Name: "A", Value: "1"}, {Name: "X-Region", Value: "eu"}, {Name: "x-tenant", Value: "beta"}}
			}},
		{"auth", targetFlags{auth: plan.AuthXAPIKey}, script, func(t *plan.Target) { t.Auth = plan.AuthXAPIKey }},
		{"tls", targetFlags{caCert: "ca.pem", clientCert: "me.pem", clientKey: "me-key.pem", insecure: true}, script, func(t *plan.Target) {
			t.TLS = plan.TLS{CACert: "ca.pem", ClientCert: "me.pem", ClientKey: "me-key.pem", ServerName: "llm.internal", InsecureSkipVerify: true}
		}},
		{"http2 over TLS", targetFlags{http2: true}, script, func(t *plan.Target) { t.HTTP2 = true }},
		{"http2 in clear text", targetFlags{http2: true}, plan.Target{BaseURL: "http://h/v1"},
			func(t *plan.Target) { t.HTTP2, t.H2C = true, true }},
		{"http2 on the simulator", targetFlags{http2: true}, plan.Target{}, func(t *plan.Target) { t.HTTP2 = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.target
			got.Headers = append([]plan.Header(nil), tt.target.Headers...)
			if err := tt.flags.apply("run", &got); err != nil {
				t.Fatal(err)
			}
			want := tt.target
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("target =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestTargetFlagsApplyErrors(t *testing.T) {
	tests := []struct {
		name   string
		flags  targetFlags
		target plan.Target
		want   string
	}{
		{"script http2 on a plain URL from a flag", targetFlags{}, plan.Target{BaseURL: "http://u:pw@h/v1", HTTP2: true},
			"run: options.target.http2: the target http://h/v1 is plain http://, and HTTP/2 is negotiated in TLS: add --http2 to speak it in clear text (h2c), or use https://"},
		{"a header where the key goes", targetFlags{headers: []plan.Header{{Name: "authorization", Value: "Bearer sk-other"}}},
			plan.Target{APIKey: "sk-key"}, `run: header "authorization" (--header or options.target.headers) is also the one the API key`},
		{"the same with api-key", targetFlags{auth: plan.AuthAPIKey}, plan.Target{APIKey: "sk-key", Headers: []plan.Header{{Name: "Api-Key", Value: "x"}}},
			`run: header "Api-Key"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := tt.target
			err := tt.flags.apply("run", &target)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("apply() = %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-") || strings.Contains(err.Error(), "pw") {
				t.Errorf("apply() = %q: it quotes a secret", err)
			}
		})
	}
	none := targetFlags{auth: plan.AuthNone}
	target := plan.Target{APIKey: "k", Headers: []plan.Header{{Name: "Authorization", Value: "Bearer gw"}}}
	if err := none.apply("run", &target); err != nil {
		t.Errorf("with --auth none, a header of Authorization is the only one: %v", err)
	}
}

// TestTargetFlagsApplyEveryTarget: the flags reach the plan's target and
// each of its targets alike.
func TestTargetFlagsApplyEveryTarget(t *testing.T) {
	f := targetFlags{headers: []plan.Header{{Name: "X-Run", Value: "r1"}}, auth: plan.AuthAPIKey, insecure: true}
	p := plan.Plan{Targets: []plan.Target{{Name: "a", BaseURL: "https://a/v1"}, {Name: "b", BaseURL: "https://b/v1"}}}
	if err := f.applyPlan("run", &p); err != nil {
		t.Fatal(err)
	}
	for _, tgt := range append([]plan.Target{p.Target}, p.Targets...) {
		if len(tgt.Headers) != 1 || tgt.Headers[0].Value != "r1" || tgt.Auth != plan.AuthAPIKey || !tgt.TLS.InsecureSkipVerify {
			t.Errorf("target %q: %+v, want the flags applied", tgt.Name, tgt)
		}
	}
	bad := plan.Plan{Targets: []plan.Target{{Name: "plain", BaseURL: "http://p/v1", HTTP2: true}}}
	if err := (&targetFlags{}).applyPlan("run", &bad); err == nil || !strings.HasPrefix(err.Error(), "target plain: run: options.target.http2") {
		t.Errorf("applyPlan() = %v, want the target named", err)
	}
}

// TestCheckShowsHeadersRedacted: llmload check names every header, flag
// or script, and shows no value whose name is sensitive; a bad --header
// is a usage error naming the flag.
func TestCheckShowsHeadersRedacted(t *testing.T) {
	const secret = "sk-check-secret-0123456789"
	path := writeScript(t, strings.Replace(okScript, "options = {", `options = { target = { headers = { ["X-Tenant"] = "acme",
  ["X-Api-Key"] = "`+secret+`" }, query = { ["api-version"] = "2024-10-21" }, auth = "none" },`, 1))
	stdout, stderr, code := runInProcess(t, "check", "--header", "Authorization: Bearer "+secret, "--header", "x-tenant: beta", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"headers Authorization: [redacted], X-Api-Key: [redacted], x-tenant: beta\n",
		"query   api-version=2024-10-21\n", "auth    none: no API key is sent\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("check printed a sensitive header's value:\n%s\n%s", stdout, stderr)
	}
	runExitCases(t, []exitCase{
		{"bad --header", []string{"check", "--header", "X Tenant: a", path}, exitUsage, `check: --header "X Tenant": the name holds a space at position 2`},
		{"bad --auth", []string{"run", "--auth", "apikey", path}, exitUsage, `run: --auth "apikey": want bearer, api-key, x-api-key or none (did you mean api-key?)`},
		{"missing --ca-cert", []string{"run", "--ca-cert", "/nonexistent/ca.pem", path}, exitError, "run: --ca-cert: /nonexistent/ca.pem: no such file or directory"},
		{"--http2 on a plain script target", []string{"check", writeScript(t, strings.Replace(okScript, "options = {",
			`options = { target = { http2 = true },`, 1)), "--target", "http://127.0.0.1:1/v1"}, exitUsage, "check: options.target.http2: the target http://127.0.0.1:1/v1 is plain http://"},
	})
}
