package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckHeader(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // a part of the error; "" for none
	}{
		{"X-Tenant", "acme", ""},
		{"OpenAI-Organization", "org-123", ""},
		{"x-api-key", "sk-123", ""},
		{"X-Weird!#$%&'*+-.^_`|~1", "v", ""},
		{"X-Empty", "", ""},
		{"X-Tab", "a\tb", ""},
		{"X-Unicode", "café", ""},
		{"", "v", "the name is empty"},
		{"X Tenant", "v", "the name holds a space at position 2: a header name is a token"},
		{"X-Tenant:", "v", "the name holds a colon at position 9"},
		{"X\nY", "v", "the name holds a line feed (LF) at position 2"},
		{"X\x01", "v", "the name holds the control character U+0001 at position 2"},
		{"Größe", "v", `the name holds the non-ASCII character 'ö' (U+00F6) at position 3`},
		{"X(Y)", "v", `the name holds '(' at position 2`},
		{"X\xff", "v", "the name is not valid UTF-8"},
		{"Host", "example.com", "llmload sets Host from the base URL"},
		{"content-length", "3", "llmload sets Content-Length from the body it sends"},
		{"Transfer-Encoding", "chunked", "framing"},
		{"CONNECTION", "close", "Connection is hop-by-hop"},
		{"keep-alive", "timeout=5", "Keep-Alive is hop-by-hop"},
		{"Upgrade", "h2c", "for HTTP/2 set http2 or h2c"},
		{"te", "trailers", "TE is hop-by-hop"},
		{"Trailer", "X", "llmload sends no trailers"},
		{"X-Tenant", "a\r\nInjected: 1", "the value holds a carriage return (CR) at position 2"},
		{"X-Tenant", "ab\n", "the value holds a line feed (LF) at position 3"},
		{"X-Tenant", "a\x00", "the value holds a NUL byte at position 2"},
		{"X-Tenant", "é\x7f", "the value holds the control character U+007F at position 2"},
	}
	for _, tt := range tests {
		err := CheckHeader(tt.name, tt.value)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckHeader(%q, %q) = %v, want nil", tt.name, tt.value, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckHeader(%q, %q) = %v, want an error containing %q", tt.name, tt.value, err, tt.want)
		}
	}
}

// TestCheckHeaderNeverQuotesTheValue: whatever is wrong, the error holds
// no part of the value, which may be a credential.
func TestCheckHeaderNeverQuotesTheValue(t *testing.T) {
	const secret = "sk-secret-0123456789"
	for _, value := range []string{secret + "\n", "\r" + secret, secret + "\x00x"} {
		for _, name := range []string{"Authorization", "X-Plain"} {
			err := CheckHeader(name, value)
			if err == nil {
				t.Fatalf("CheckHeader(%q, %q) = nil", name, value)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("CheckHeader(%q, ...) = %q: it quotes the value", name, err)
			}
		}
	}
}

func TestSensitiveName(t *testing.T) {
	tests := map[string]bool{
		"Authorization": true, "proxy-authorization": true, "api-key": true, "X-API-KEY": true,
		"Cookie": true, "Set-Cookie": true, "Ocp-Apim-Subscription-Key": true, "X-Auth-Token": true,
		"client_secret": true, "X-Goog-Api-Key": true, "sig-token": true, "X-Password": true,
		"Proxy-Credentials": true, "api_key": true,
		"X-Tenant": false, "OpenAI-Organization": false, "OpenAI-Project": false, "api-version": false,
		"Cookies-Consent": false, "anthropic-version": false, "": false,
	}
	for name, want := range tests {
		if got := SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestAuthHeaderName(t *testing.T) {
	tests := []struct {
		auth, header, want string
	}{
		{"", "", "Authorization"},
		{AuthBearer, "", "Authorization"},
		{AuthAPIKey, "", "api-key"},
		{AuthXAPIKey, "", "x-api-key"},
		{AuthNone, "", ""},
		{AuthBearer, "X-Gateway-Auth", "X-Gateway-Auth"},
		{AuthAPIKey, "Ocp-Apim-Subscription-Key", "Ocp-Apim-Subscription-Key"},
	}
	for _, tt := range tests {
		if got := (Target{Auth: tt.auth, AuthHeader: tt.header}).AuthHeaderName(); got != tt.want {
			t.Errorf("auth %q, auth_header %q: AuthHeaderName() = %q, want %q", tt.auth, tt.header, got, tt.want)
		}
	}
}

func TestTargetSecrets(t *testing.T) {
	tgt := Target{
		APIKey:  "sk-key",
		Headers: []Header{{"Authorization", "Basic abc"}, {"X-Empty-Token", ""}, {"X-Tenant", "acme"}, {"x-api-key", "xk"}},
		Query:   []Header{{"api-version", "2024-10-21"}, {"sig_token", "qs"}},
	}
	if got, want := tgt.Secrets(), []string{"sk-key", "Basic abc", "xk", "qs"}; !slices.Equal(got, want) {
		t.Errorf("Secrets() = %q, want %q", got, want)
	}
	if got := (Target{}).Secrets(); len(got) != 0 {
		t.Errorf("Secrets() of an empty target = %q, want none", got)
	}
}

func TestSetHeader(t *testing.T) {
	base := []Header{{"A", "1"}, {"X-Tenant", "acme"}, {"Z", "26"}}
	tests := []struct {
		name, value string
		want        []Header
	}{
		{"x-tenant", "beta", []Header{{"A", "1"}, {"Z", "26"}, {"x-tenant", "beta"}}},
		{"X-Tenant", "beta", []Header{{"A", "1"}, {"X-Tenant", "beta"}, {"Z", "26"}}},
		{"M", "m", []Header{{"A", "1"}, {"M", "m"}, {"X-Tenant", "acme"}, {"Z", "26"}}},
		{"0", "zero", []Header{{"0", "zero"}, {"A", "1"}, {"X-Tenant", "acme"}, {"Z", "26"}}},
	}
	for _, tt := range tests {
		got := SetHeader(base, tt.name, tt.value)
		if !slices.Equal(got, tt.want) {
			t.Errorf("SetHeader(%s: %s) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
	if got := SetHeader(nil, "X", "1"); !slices.Equal(got, []Header{{"X", "1"}}) {
		t.Errorf("SetHeader(nil, X: 1) = %v", got)
	}
	if base[1].Value != "acme" {
		t.Errorf("SetHeader changed its argument: %v", base)
	}
}
