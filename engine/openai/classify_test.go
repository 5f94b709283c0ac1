package openai

import (
	"strings"
	"testing"
)

func TestServerMessage(t *testing.T) {
	tests := map[string]struct {
		body, want string
	}{
		"OpenAI":            {`{"error":{"message":"Invalid model","type":"invalid_request_error"}}`, "Invalid model"},
		"error string":      {`{"error":"Input validation error","error_type":"validation"}`, "Input validation error"},
		"vLLM":              {`{"object":"error","message":"too long","code":400}`, "too long"},
		"FastAPI detail":    {`{"detail":"Not Found"}`, "Not Found"},
		"FastAPI list":      {`{"detail":[{"loc":["body","model"],"msg":"field required"}]}`, `[{"loc":["body","model"],"msg":"field required"}]`},
		"message list":      {`{"error":{"message":["a","b"]}}`, `["a","b"]`},
		"error without msg": {`{"error":{"code":42}}`, `{"code":42}`},
		"plain text":        {"  bad\n\tgateway  ", "bad gateway"},
		"empty":             {"", ""},
		"null error":        {`{"error":null,"message":"fallback"}`, "fallback"},
		"long":              {strings.Repeat("é", 300), strings.Repeat("é", 100) + "…"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := serverMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("serverMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"}, // never split a rune
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestRedactScrubsURLCredentialsAndCutKeys(t *testing.T) {
	c, err := New(Config{BaseURL: "http://u:pw-secret@127.0.0.1:9/v1?api_key=qsecret123", APIKey: "sk-ABCDEFGH", Tokenizer: TokenizerNone})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"bad key sk-ABCDEFGH":                 "bad key [redacted]",
		"path=/v1/chat?api_key=qsecret123 no": "path=/v1/chat?api_key=[redacted] no",
		"auth u:pw-secret":                    "auth [redacted]", // the pair, as Basic auth sends it
		"echo: Bearer sk-ABCD…":               "echo: Bearer [redacted]…",
		"ends with sk…":                       "ends with sk…",
	}
	for in, want := range tests {
		if got := c.redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
