package openai

import (
	"strings"
	"testing"
)

func TestHTTPClass(t *testing.T) {
	tests := map[int]string{
		401: "http_4xx:401", 404: "http_4xx:404", 429: "http_4xx:429",
		500: "http_5xx:500", 503: "http_5xx:503", 301: "http_3xx:301",
	}
	for status, want := range tests {
		if got := HTTPClass(status); got != want {
			t.Errorf("HTTPClass(%d) = %q, want %q", status, got, want)
		}
	}
}

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

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"http://127.0.0.1:8000/v1":                         "http://127.0.0.1:8000/v1",
		"http://user:pass@h:8000/v1":                       "http://h:8000/v1",
		"https://user@h/v1":                                "https://h/v1",
		"http://proxy-user:p%40ss@proxy:3128":              "http://proxy:3128",
		"https://h/v1?api-version=2024&api_key=abc":        "https://h/v1?api-version=2024&api_key=REDACTED",
		"https://h/?key=1&token=2&apikey=3&secret=4":       "https://h/?key=REDACTED&token=REDACTED&apikey=REDACTED&secret=REDACTED",
		"https://h/?password=1&sig=2&X-Amz-Signature=3":    "https://h/?password=REDACTED&sig=REDACTED&X-Amz-Signature=REDACTED",
		"https://h/?access_token=1&subscription-key=2&a=b": "https://h/?access_token=REDACTED&subscription-key=REDACTED&a=b",
		"https://h/?Key=1#token=2":                         "https://h/?Key=REDACTED#token=REDACTED",
		"https://h/path@x/?model=m":                        "https://h/path@x/?model=m",
		"user:pass@h:8000/v1":                              "h:8000/v1",
		"not a url":                                        "not a url",
		"":                                                 "",
		"http://h/?key":                                    "http://h/?key",
		"http://h/?%6Bey=1":                                "http://h/?%6Bey=REDACTED",
	}
	for in, want := range tests {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
