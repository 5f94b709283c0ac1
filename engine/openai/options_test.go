package openai

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestValidateHeader(t *testing.T) {
	tests := map[string]struct {
		name, value, want string // want: in the error, "<nil>" for none
	}{
		"ok":              {"X-Gateway-Token", "t\tok ", "<nil>"},
		"token chars":     {"X_Odd.Name!#$%&'*+^`|~", "v", "<nil>"},
		"user agent":      {"User-Agent", "mine", "<nil>"},
		"authorization":   {"authorization", "Bearer x", "<nil>"},
		"empty name":      {"", "v", `header "": the name is empty`},
		"space":           {"X Token", "v", `header "X Token": the name holds a space at position 2`},
		"colon":           {"X-Token:", "v", `header "X-Token:": the name holds`},
		"CR":              {"X-Token", "secret\rX: y", `header "X-Token": the value holds`},
		"NUL":             {"X-Token", "sec\x00ret", `header "X-Token": the value holds`},
		"content-length":  {"content-length", "3", `header "content-length": llmload sets Content-Length from the body it sends`},
		"host":            {"HOST", "h", `header "HOST": llmload sets Host from the base URL`},
		"accept-encoding": {"Accept-Encoding", "gzip", `header "Accept-Encoding": llmload asks for identity`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := errString(ValidateHeader(tt.name, tt.value))
			if tt.want == "<nil>" && got != tt.want || !strings.Contains(got, tt.want) {
				t.Errorf("ValidateHeader(%q, %q):\n got %s\nwant %s", tt.name, tt.value, got, tt.want)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("the error quotes the value: %s", got)
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
			`headers: header "X Key": the name holds a space at position 2: a header name is a token (letters, digits and !#$%&'*+-.^_` + "`|~)"},
		"header value": {Config{BaseURL: https, Headers: []plan.Header{{Name: "X-Key", Value: "s3cret\r\n"}}},
			`headers: header "X-Key": the value holds a carriage return (CR) at position 7: a header value cannot hold CR, LF, NUL or another control character`},
		"reserved header": {Config{BaseURL: https, Headers: []plan.Header{{Name: "Content-Length", Value: "1"}}},
			`headers: header "Content-Length": llmload sets Content-Length from the body it sends`},
		"query name": {Config{BaseURL: https, Query: []plan.Header{{Name: "", Value: "s3cret"}}},
			"query: a parameter has an empty name"},
		"auth": {Config{BaseURL: https, Auth: "basic"},
			`auth: "basic" is not a way to send the key: want one of bearer, api-key, x-api-key, none`},
		"auth_header with none": {Config{BaseURL: https, Auth: plan.AuthNone, AuthHeader: "X-Key"},
			"auth_header: auth = none sends no key, so no header carries it; drop one of the two"},
		"auth_header name": {Config{BaseURL: https, AuthHeader: "X:Key"},
			`auth_header: header "X:Key": the name holds a colon at position 2: a header name is a token (letters, digits and !#$%&'*+-.^_` + "`|~)"},
		"auth_header reserved": {Config{BaseURL: https, AuthHeader: "host"},
			`auth_header: header "host": llmload sets Host from the base URL (to verify TLS against another name, set server_name)`},
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
