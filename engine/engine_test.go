package engine

import (
	"testing"
	"time"
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

func TestFormatDuration(t *testing.T) {
	tests := map[time.Duration]string{
		0: "0s", 90 * time.Second: "1m30s", 5 * time.Minute: "5m", 2 * time.Hour: "2h",
		90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s", 61*time.Minute + time.Second: "1h1m1s",
	}
	for d, want := range tests {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSLOMet(t *testing.T) {
	slo := SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}
	tests := []struct {
		name string
		r    Result
		want bool
	}{
		{"all met", Result{TTFT: 400 * time.Millisecond, TPOT: 40 * time.Millisecond, E2E: 5 * time.Second}, true},
		{"ttft missed", Result{TTFT: 600 * time.Millisecond, TPOT: 40 * time.Millisecond, E2E: 5 * time.Second}, false},
		{"tpot missed", Result{TTFT: 400 * time.Millisecond, TPOT: 60 * time.Millisecond, E2E: 5 * time.Second}, false},
		{"e2e missed", Result{TTFT: 400 * time.Millisecond, E2E: 11 * time.Second}, false},
		{"one token, no tpot", Result{TTFT: 400 * time.Millisecond, E2E: time.Second}, true},
		{"failed", Result{TTFT: time.Millisecond, E2E: time.Millisecond, Err: &Error{Class: ErrTimeoutIdle}}, false},
		{"not streamed", Result{E2E: time.Second}, false},
	}
	for _, tt := range tests {
		if got := slo.Met(&tt.r); got != tt.want {
			t.Errorf("%s: Met = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !(SLO{}).Met(&Result{}) || !(SLO{}).IsZero() {
		t.Error("an empty SLO must accept any success")
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
