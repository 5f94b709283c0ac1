package engine

import "testing"

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
