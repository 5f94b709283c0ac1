package engine

import (
	"testing"
)

func TestHTTPErrorClass(t *testing.T) {
	tests := map[int]string{
		401: "http_4xx:401", 404: "http_4xx:404", 429: "http_4xx:429",
		500: "http_5xx:500", 503: "http_5xx:503", 301: "http_3xx:301",
	}
	for status, want := range tests {
		if got := HTTPErrorClass(status); got != want {
			t.Errorf("HTTPErrorClass(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"200", Result{Status: 200}, VerdictAccepted},
		{"clean 400", Result{Status: 400, Err: &Error{Class: "http_4xx:400", Message: "messages must not be empty"}}, VerdictHandled},
		{"bare 400", Result{Status: 400, Err: &Error{Class: "http_4xx:400"}}, VerdictDefect},
		{"413", Result{Status: 413, Err: &Error{Class: "http_4xx:413", Message: "too large"}}, VerdictHandled},
		{"500", Result{Status: 500, Err: &Error{Class: "http_5xx:500", Message: "boom"}}, VerdictDefect},
		{"timeout", Result{Err: &Error{Class: ErrTimeoutTTFT}}, VerdictDefect},
		{"reset", Result{Err: &Error{Class: ErrConnReset}}, VerdictDefect},
		{"api error in a 200", Result{Status: 200, Err: &Error{Class: ErrAPI, Message: "x"}}, VerdictDefect},
		{"canceled", Result{Err: &Error{Class: ErrCanceled}}, VerdictCanceled},
	}
	for _, tt := range tests {
		if got := Verdict(&tt.r); got != tt.want {
			t.Errorf("%s: Verdict = %q, want %q", tt.name, got, tt.want)
		}
	}
}
