package luabind

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// targetKeys are the keys of options.target, and of each endpoint a
// scenario names.
var targetKeys = []string{"base_url", "api_key", "model", "connect_timeout", "ttft_timeout", "idle_timeout", "timeout",
	"tokenizer", "continuous_usage", "metrics_url", "metrics_every", "on_unreachable",
	"headers", "query", "auth", "auth_header", "ca_cert", "client_cert", "client_key", "server_name",
	"insecure_skip_verify", "http2", "h2c", "trace_context"}

// target decodes one endpoint's table at path (options.target, or an
// entry of a list of targets) into a plan.Target. dir is what relative
// file paths (tokenizer, ca_cert, client_cert, client_key) are relative
// to: the script's directory, as for every data file.
func (d *decoder) target(path string, v lua.LValue, dir string) plan.Target {
	f := d.Record(path, v, targetKeys)
	var t plan.Target
	d.targetStrings(path, f, &t)
	d.targetDurations(path, f, &t)
	t.Tokenizer = plan.DefaultTokenizer
	if v := f["tokenizer"]; v != nil {
		t.Tokenizer = api.DecodeTokenizer(&d.Decoder, luaval.Child(path, "tokenizer"), v, dir)
	}
	if v := f["continuous_usage"]; v != nil {
		t.ContinuousUsage = d.Boolean(luaval.Child(path, "continuous_usage"), v)
	}
	if v := f["trace_context"]; v != nil {
		t.NoTraceContext = !d.Boolean(luaval.Child(path, "trace_context"), v)
	}
	d.metricsURL(luaval.Child(path, "metrics_url"), f["metrics_url"], &t)
	if v := f["headers"]; v != nil {
		t.Headers = api.DecodeHeaders(&d.Decoder, luaval.Child(path, "headers"), v)
	}
	if v := f["query"]; v != nil {
		t.Query = d.query(luaval.Child(path, "query"), v)
	}
	d.auth(path, f, &t)
	t.TLS = d.tls(path, f, dir)
	for _, b := range []struct {
		key string
		dst *bool
	}{{"http2", &t.HTTP2}, {"h2c", &t.H2C}} {
		if v := f[b.key]; v != nil {
			*b.dst = d.Boolean(luaval.Child(path, b.key), v)
		}
	}
	d.checkTarget(path, f, t)
	return t
}

// targetStrings reads the target's plain string keys.
func (d *decoder) targetStrings(path string, f map[string]lua.LValue, t *plan.Target) {
	for _, sf := range []struct {
		key string
		dst *string
	}{{"base_url", &t.BaseURL}, {"api_key", &t.APIKey}, {"model", &t.Model}} {
		if v := f[sf.key]; v != nil {
			*sf.dst = d.Str(luaval.Child(path, sf.key), v)
		}
	}
}

// targetDurations reads the target's timeouts and scrape interval.
func (d *decoder) targetDurations(path string, f map[string]lua.LValue, t *plan.Target) {
	for _, df := range []struct {
		key string
		dst *time.Duration
	}{{"connect_timeout", &t.ConnectTimeout}, {"ttft_timeout", &t.TTFTTimeout},
		{"idle_timeout", &t.IdleTimeout}, {"timeout", &t.TotalTimeout}, {"metrics_every", &t.MetricsEvery}} {
		if v := f[df.key]; v != nil {
			*df.dst = d.PositiveDuration(luaval.Child(path, df.key), v)
		}
	}
}

// metricsURL reads metrics_url: the server's Prometheus URL, or false to
// scrape nothing at all (not even the /metrics found at the target's
// origin). true would say nothing of where to scrape, so it is refused.
func (d *decoder) metricsURL(path string, v lua.LValue, t *plan.Target) {
	switch x := v.(type) {
	case nil:
	case lua.LString:
		t.MetricsURL = string(x)
	case lua.LBool:
		if x {
			d.Errorf(path, "true names no URL: give the server's Prometheus URL, or false to scrape no metrics")
			return
		}
		t.NoMetrics = true
	default:
		d.Errorf(path, "expected a URL (string) or false, got %s", v.Type())
	}
}

// query reads query parameters added to every request's URL, sorted by
// name. The client escapes them, so any text goes; a number is refused as
// a header value is.
func (d *decoder) query(path string, v lua.LValue) []plan.Header {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected a table of parameter names to values, got %s", v.Type())
		return nil
	}
	var out []plan.Header
	for _, k := range luaval.SortedKeys(tbl) {
		name, isStr := k.(lua.LString)
		if !isStr || name == "" {
			d.Errorf(luaval.KeyPath(path, k), "parameter names are non-empty strings")
			continue
		}
		at := api.HeaderPath(path, string(name))
		switch val := tbl.RawGet(k).(type) {
		case lua.LString:
			out = append(out, plan.Header{Name: string(name), Value: string(val)})
		case lua.LNumber:
			d.Errorf(at, "expected string, got number (a query value is text: write it in quotes)")
		default:
			d.Errorf(at, "expected string, got %s", val.Type())
		}
	}
	return out
}

// auth reads how the API key is sent: auth, one of plan.AuthStyles, and
// auth_header, the header's name when not the style's own.
func (d *decoder) auth(path string, f map[string]lua.LValue, t *plan.Target) {
	if v := f["auth"]; v != nil {
		t.Auth = d.oneOf(luaval.Child(path, "auth"), v, plan.AuthStyles())
	}
	if v := f["auth_header"]; v != nil {
		at := luaval.Child(path, "auth_header")
		name := d.Str(at, v)
		if err := plan.CheckHeader(name, ""); err != nil {
			d.Errorf(at, "%q: %v", name, err)
			return
		}
		t.AuthHeader = name
	}
}

// tls reads the TLS keys. Certificate and key files are read now, so that
// a wrong path or a mismatched pair stops `llmload check`; their contents
// are read again when the client is made.
func (d *decoder) tls(path string, f map[string]lua.LValue, dir string) plan.TLS {
	var c plan.TLS
	files := []struct {
		key string
		dst *string
	}{{"ca_cert", &c.CACert}, {"client_cert", &c.ClientCert}, {"client_key", &c.ClientKey}}
	for _, ff := range files {
		if v := f[ff.key]; v != nil {
			*ff.dst = d.tlsFile(luaval.Child(path, ff.key), v, dir)
		}
	}
	if c.CACert != "" {
		if err := plan.CheckCACert(c.CACert); err != nil {
			d.Errorf(luaval.Child(path, "ca_cert"), "%v", err)
		}
	}
	if c.ClientCert != "" && c.ClientKey != "" {
		if err := plan.CheckClientCert(c.ClientCert, c.ClientKey); err != nil {
			d.Errorf(path, "client_cert, client_key: %v", err)
		}
	}
	if v := f["server_name"]; v != nil {
		at := luaval.Child(path, "server_name")
		c.ServerName = d.Str(at, v)
		if _, isStr := v.(lua.LString); isStr && (c.ServerName == "" || strings.ContainsAny(c.ServerName, "/: \t")) {
			d.Errorf(at, "%q is not a host name (write the name alone, e.g. \"llm.internal.example\"; omit it to verify the URL's host)", c.ServerName)
		}
	}
	if v := f["insecure_skip_verify"]; v != nil {
		c.InsecureSkipVerify = d.Boolean(luaval.Child(path, "insecure_skip_verify"), v)
	}
	return c
}

// tlsFile reads a PEM file's path, relative to dir, and checks the file
// can be read; "" when it cannot, which stops the compile.
func (d *decoder) tlsFile(path string, v lua.LValue, dir string) string {
	name := d.Str(path, v)
	if _, isStr := v.(lua.LString); !isStr {
		return ""
	}
	if name == "" {
		d.Errorf(path, "empty: give the path of a PEM file, relative to the script")
		return ""
	}
	file := api.ResolveData(dir, name)
	if err := plan.CheckPEMFile(file); err != nil {
		d.Errorf(path, "%v", err)
		return ""
	}
	return file
}

// checkTarget reports settings of one target that contradict each other.
func (d *decoder) checkTarget(path string, f map[string]lua.LValue, t plan.Target) {
	switch {
	case f["client_cert"] != nil && f["client_key"] == nil:
		d.Errorf(luaval.Child(path, "client_cert"), "needs client_key, the certificate's private key")
	case f["client_key"] != nil && f["client_cert"] == nil:
		d.Errorf(luaval.Child(path, "client_key"), "needs client_cert, the certificate it is the key of")
	}
	if t.Auth == plan.AuthNone && t.AuthHeader != "" {
		d.Errorf(luaval.Child(path, "auth_header"), "has no effect with auth = \"none\", which sends no key")
	}
	scheme := ""
	if u, err := url.Parse(t.BaseURL); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if t.HTTP2 && !t.H2C && scheme == "http" {
		d.Errorf(luaval.Child(path, "http2"), "base_url is plain http://, and HTTP/2 is negotiated in TLS: "+
			"set h2c = true to speak it in clear text (prior knowledge), or use https://")
	}
	if t.H2C && scheme == "https" {
		d.Errorf(luaval.Child(path, "h2c"), "h2c is HTTP/2 in clear text, but base_url is https://: set http2 = true instead")
	}
	d.checkAuthHeaderTwice(path, t)
}

// checkAuthHeaderTwice reports a header that would replace the one
// api_key is sent in: which of the two was meant cannot be told.
func (d *decoder) checkAuthHeaderTwice(path string, t plan.Target) {
	auth := t.AuthHeaderName()
	if t.APIKey == "" || auth == "" {
		return
	}
	for _, h := range t.Headers {
		if strings.EqualFold(h.Name, auth) {
			d.Errorf(api.HeaderPath(luaval.Child(path, "headers"), h.Name),
				"api_key is sent in this header too (auth %s): set one of them", authStyle(t.Auth))
		}
	}
}

// authStyle names an auth style as a script writes it, "" being bearer.
func authStyle(s string) string {
	if s == "" {
		return plan.AuthBearer
	}
	return s
}

// oneOf reads a string that must be one of valid, suggesting the nearest
// on a typo; "" when it is not.
func (d *decoder) oneOf(path string, v lua.LValue, valid []string) string {
	s := d.Str(path, v)
	if _, isStr := v.(lua.LString); !isStr {
		return ""
	}
	if luaval.Contains(valid, s) {
		return s
	}
	msg := fmt.Sprintf("%q: want %s", s, orList(valid))
	if best, ok := luaval.Nearest(s, valid); ok {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	}
	d.Errorf(path, "%s", msg)
	return ""
}

// orList writes "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
