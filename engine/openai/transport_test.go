package openai

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewExplainsBadBaseURL(t *testing.T) {
	tests := map[string]struct {
		base, want string // want: the whole error, "" for none
	}{
		"space in path": {"http://127.0.0.1:18290/v 1",
			`openai: base URL "http://127.0.0.1:18290/v 1" has a space after "http://127.0.0.1:18290/v"; remove it, or percent-encode it (a space is %20)`},
		"trailing tab": {"http://h/v1\t/x",
			`openai: base URL "http://h/v1\t/x" has a tab after "http://h/v1"; remove it, or percent-encode it (a space is %20)`},
		"pipe":    {"http://h/v1|", `openai: base URL "http://h/v1|" has the character '|' after "http://h/v1"; remove it, or percent-encode it (a space is %20)`},
		"control": {"http://h\x00/v1", `openai: base URL "http://h\x00/v1" has the control character U+0000 after "http://h"; remove it, or percent-encode it (a space is %20)`},
		"space in password": {"http://u:pa ss@h/v1",
			`openai: base URL "http://h/v1" has a space in its user name or password; remove it, or percent-encode it (a space is %20)`},
		"bad escape":      {"http://h/v%zz1", `openai: invalid base URL "http://h/v%zz1": invalid URL escape "%zz"`},
		"fragment":        {"http://h/v1#models", `openai: base URL "http://h/v1#models" has a fragment (#models), which is never sent to a server; remove it (a query starts with ?)`},
		"empty fragment":  {"http://h/v1#", `openai: base URL "http://h/v1#" has a fragment (#), which is never sent to a server; remove it (a query starts with ?)`},
		"query is kept":   {"https://h/openai/v1?api-version=2024-06-01", ""},
		"escaped space":   {"http://h/my%20api/v1", ""},
		"outer spaces ok": {"  http://h/v1 ", ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{BaseURL: tt.base, Tokenizer: TokenizerNone})
			if got := errString(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
				t.Errorf("New(%q):\n got %s\nwant %s", tt.base, got, tt.want)
			}
			if strings.Contains(errString(err), "pa ss") {
				t.Error("the error shows the password")
			}
		})
	}
}

// TestPreflightExplainsTransport: scheme and certificate mistakes are
// named, with the --target to try.
func TestPreflightExplainsTransport(t *testing.T) {
	plain := serve(t, streamingTarget())
	tlsSrv := httptest.NewTLSServer(streamingTarget()) // its certificate is trusted by nobody
	t.Cleanup(tlsSrv.Close)
	plainAddr, tlsAddr := plain.Listener.Addr().String(), tlsSrv.Listener.Addr().String()
	tests := map[string]struct {
		base string
		want string
	}{
		"https to plain http": {"https://" + plainAddr + "/v1",
			"preflight request to https://" + plainAddr + "/v1/chat/completions failed: the server speaks plain HTTP, not HTTPS; try --target http://" + plainAddr + "/v1"},
		"http to https": {"http://" + tlsAddr + "/v1",
			"preflight request to http://" + tlsAddr + "/v1/chat/completions failed: the server speaks HTTPS, not plain HTTP; try --target https://" + tlsAddr + "/v1"},
		"untrusted certificate": {"https://" + tlsAddr + "/v1",
			"preflight request to https://" + tlsAddr + "/v1/chat/completions failed: the server's TLS certificate is signed by an authority llmload does not trust " +
				"(tls: failed to verify certificate: x509: certificate signed by unknown authority): give that CA's PEM file as ca_cert (options.target.ca_cert or --ca-cert), " +
				"or add it to SSL_CERT_FILE or the system trust store; as a last resort, insecure_skip_verify (options.target.insecure_skip_verify or --insecure) turns verification off"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := testClient(t, tt.base).Preflight(context.Background(), "m")
			if got := errString(err); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
