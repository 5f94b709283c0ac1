package openai

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestValidateHeader(t *testing.T) {
	tests := map[string]struct {
		name, value, want string // want: the error, "<nil>" for none
	}{
		"ok":            {"X-Gateway-Token", "t\tok ", "<nil>"},
		"token chars":   {"X_Odd.Name!#$%&'*+^`|~", "v", "<nil>"},
		"user agent":    {"User-Agent", "mine", "<nil>"},
		"authorization": {"authorization", "Bearer x", "<nil>"},
		"empty name":    {"", "v", "a header has an empty name"},
		"space":         {"X Token", "v", `header name "X Token" has a space; a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"colon":         {"X-Token:", "v", `header name "X-Token:" has a colon (write the name alone; its value goes apart); a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"control":       {"X-\x01", "v", `header name "X-\x01" has the control character U+0001; a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"non-ascii":     {"X-Tök", "v", `header name "X-Tök" has the character 'ö'; a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"CR":            {"X-Token", "secret\rX: y", "header X-Token: its value holds a line break, which would end the header early"},
		"LF":            {"X-Token", "secret\n", "header X-Token: its value holds a line break, which would end the header early"},
		"NUL":           {"X-Token", "sec\x00ret", "header X-Token: its value holds a NUL byte"},
		"DEL":           {"X-Token", "sec\x7fret", "header X-Token: its value holds the control character U+007F"},
		"content-length": {"content-length", "3",
			"header content-length is the client's own: the client computes it from the body"},
		"host": {"HOST", "h", "header HOST is the client's own: the client sends the base URL's host; put the name the server wants in base_url (and server_name for TLS)"},
		"transfer-encoding": {"Transfer-Encoding", "chunked",
			"header Transfer-Encoding is the client's own: the client frames the body itself"},
		"connection": {"Connection", "close",
			"header Connection is the client's own: the client manages its connections (a hop-by-hop header)"},
		"accept-encoding": {"Accept-Encoding", "gzip",
			"header Accept-Encoding is the client's own: the client asks for identity: a compressed stream is buffered by its decoder, which shifts every token's time"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := errString(ValidateHeader(tt.name, tt.value)); got != tt.want {
				t.Errorf("ValidateHeader(%q, %q):\n got %s\nwant %s", tt.name, tt.value, got, tt.want)
			}
		})
	}
}

// TestNewRefusesBadTransportOptions: every bad header, query, auth, TLS
// and HTTP/2 setting is an error that starts with the option's name, and
// shows no header value or file content.
func TestNewRefusesBadTransportOptions(t *testing.T) {
	pki, other := newPKI(t, "test"), newPKI(t, "other")
	cert, key := pki.validClient("client")
	otherCert, _ := other.validClient("other")
	expired, expiredKey := pki.client("expired", time.Now().Add(-48*time.Hour), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	future, futureKey := pki.client("future", time.Date(2099, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	notPEM := pki.write("ca.der", []byte("\x30\x82 not pem"))
	https, http := "https://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"
	tests := map[string]struct {
		cfg  Config
		want string // the whole error, "<nil>" for none
	}{
		"header name": {Config{BaseURL: https, Headers: []plan.Header{{Name: "X Key", Value: "s3cret"}}},
			`headers: header name "X Key" has a space; a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"header value": {Config{BaseURL: https, Headers: []plan.Header{{Name: "X-Key", Value: "s3cret\r\n"}}},
			"headers: header X-Key: its value holds a line break, which would end the header early"},
		"reserved header": {Config{BaseURL: https, Headers: []plan.Header{{Name: "Content-Length", Value: "1"}}},
			"headers: header Content-Length is the client's own: the client computes it from the body"},
		"query name": {Config{BaseURL: https, Query: []plan.Header{{Name: "", Value: "s3cret"}}},
			"query: a parameter has an empty name"},
		"auth": {Config{BaseURL: https, Auth: "basic"},
			`auth: "basic" is not a way to send the key: want one of bearer, api-key, x-api-key, none`},
		"auth_header with none": {Config{BaseURL: https, Auth: plan.AuthNone, AuthHeader: "X-Key"},
			"auth_header: auth = none sends no key, so no header carries it; drop one of the two"},
		"auth_header name": {Config{BaseURL: https, AuthHeader: "X:Key"},
			`auth_header: header name "X:Key" has a colon (write the name alone; its value goes apart); a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		"auth_header reserved": {Config{BaseURL: https, AuthHeader: "host"},
			"auth_header: header host is the client's own: the client sends the base URL's host; put the name the server wants in base_url (and server_name for TLS)"},
		"ca_cert missing": {Config{BaseURL: https, TLS: plan.TLS{CACert: pki.dir + "/nope.pem"}},
			"ca_cert: cannot read " + pki.dir + "/nope.pem: no such file or directory"},
		"ca_cert unreadable": {Config{BaseURL: https, TLS: plan.TLS{CACert: pki.dir}},
			"ca_cert: cannot read " + pki.dir + ": is a directory"},
		"ca_cert not PEM": {Config{BaseURL: https, TLS: plan.TLS{CACert: notPEM}},
			"ca_cert: " + notPEM + " is not a PEM file (no -----BEGIN ...----- block); a DER file converts with openssl x509 -inform der"},
		"ca_cert without certificate": {Config{BaseURL: https, TLS: plan.TLS{CACert: key}},
			"ca_cert: " + key + " holds no certificate (only PRIVATE KEY)"},
		"client_cert without key": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: cert}},
			"client_cert: set client_key too: a client certificate is sent with its private key"},
		"client_key without cert": {Config{BaseURL: https, TLS: plan.TLS{ClientKey: key}},
			"client_key: set client_cert too: a private key alone proves nothing to the server"},
		"client_cert is a key": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: key, ClientKey: key}},
			"client_cert: " + key + " holds no certificate (only PRIVATE KEY)"},
		"client_key is a cert": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: cert, ClientKey: cert}},
			"client_key: " + cert + " holds no private key (only CERTIFICATE)"},
		"pair mismatch": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: otherCert, ClientKey: key}},
			"client_key: " + key + " is not the key of the certificate in client_cert " + otherCert},
		"client_cert expired": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: expired, ClientKey: expiredKey}},
			"client_cert: " + expired + " expired on 2026-01-02 03:04:05 UTC (its NotAfter); renew it"},
		"client_cert not yet valid": {Config{BaseURL: https, TLS: plan.TLS{ClientCert: future, ClientKey: futureKey}},
			"client_cert: " + future + " is not valid before 2099-01-02 03:04:05 UTC (its NotBefore); is this machine's clock right?"},
		"server_name": {Config{BaseURL: https, TLS: plan.TLS{ServerName: "https://llm.internal"}},
			`server_name: "https://llm.internal" is not a host name: it has '/' (write the name alone, without scheme, port or path)`},
		"http2 on http": {Config{BaseURL: http, HTTP2: true},
			"http2: the base URL http://127.0.0.1:9/v1 is http://, and HTTP/2 is negotiated over TLS; use https://, or set h2c too for HTTP/2 in clear text (prior knowledge)"},
		"ca_cert on http": {Config{BaseURL: http, TLS: plan.TLS{CACert: pki.CAFile}},
			"ca_cert: the base URL http://127.0.0.1:9/v1 is http://, where no TLS is spoken; use https://, or drop the TLS options"},
		"insecure on http": {Config{BaseURL: http, TLS: plan.TLS{InsecureSkipVerify: true}},
			"insecure_skip_verify: the base URL http://127.0.0.1:9/v1 is http://, where no TLS is spoken; use https://, or drop the TLS options"},
		"h2c on https": {Config{BaseURL: https, H2C: true},
			"h2c: the base URL https://127.0.0.1:9/v1 is https://, and h2c is HTTP/2 in clear text (prior knowledge); for HTTP/2 over TLS set http2 instead"},
		"all good": {Config{BaseURL: https, Auth: plan.AuthAPIKey, AuthHeader: "X-Key", HTTP2: true,
			Headers: []plan.Header{{Name: "X-Gateway", Value: "v"}}, Query: []plan.Header{{Name: "api-version", Value: "1"}},
			TLS: plan.TLS{CACert: pki.CAFile, ClientCert: cert, ClientKey: key, ServerName: "llm.internal"}}, "<nil>"},
		"h2c on http":       {Config{BaseURL: http, H2C: true}, "<nil>"},
		"h2c and http2":     {Config{BaseURL: http, H2C: true, HTTP2: true}, "<nil>"},
		"insecure and a CA": {Config{BaseURL: https, TLS: plan.TLS{CACert: pki.CAFile, InsecureSkipVerify: true}}, "<nil>"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.cfg.Tokenizer = TokenizerNone
			c, err := New(tt.cfg)
			if got := errString(err); got != tt.want {
				t.Errorf("New:\n got %s\nwant %s", got, tt.want)
			}
			if strings.Contains(errString(err), "s3cret") || strings.Contains(errString(err), "BEGIN CERT") || strings.Contains(errString(err), "BEGIN PRIV") {
				t.Errorf("the error shows a value or a file's content: %s", errString(err))
			}
			if c != nil {
				c.CloseIdle()
			}
		})
	}
}

// TestFromTarget: every setting of a plan's target reaches the Config.
func TestFromTarget(t *testing.T) {
	tgt := plan.Target{BaseURL: "https://h/v1", APIKey: "k", Model: "m", ConnectTimeout: 1, TTFTTimeout: 2, IdleTimeout: 3,
		TotalTimeout: 4, Tokenizer: "o200k_base", ContinuousUsage: true, Auth: plan.AuthAPIKey, AuthHeader: "X-Key",
		Headers: []plan.Header{{Name: "A", Value: "1"}}, Query: []plan.Header{{Name: "q", Value: "2"}},
		TLS:   plan.TLS{CACert: "ca", ClientCert: "c", ClientKey: "k", ServerName: "s", InsecureSkipVerify: true},
		HTTP2: true, H2C: true}
	got := FromTarget(tgt, 12)
	want := Config{BaseURL: "https://h/v1", APIKey: "k", ConnectTimeout: 1, TTFTTimeout: 2, IdleTimeout: 3, TotalTimeout: 4,
		MaxConns: 12, Tokenizer: "o200k_base", ContinuousUsage: true, Auth: plan.AuthAPIKey, AuthHeader: "X-Key",
		Headers: tgt.Headers, Query: tgt.Query, TLS: tgt.TLS, HTTP2: true, H2C: true}
	if got.String() != want.String() || got.APIKey != want.APIKey || got.Headers[0] != want.Headers[0] || got.Query[0] != want.Query[0] {
		t.Errorf("FromTarget:\n got %s\nwant %s", got, want)
	}
}
