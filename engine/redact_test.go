package engine

import (
	"slices"
	"testing"
)

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
		"http://user:SECRET/KEY123@127.0.0.1:9/v1":         "http://127.0.0.1:9/v1",
	}
	for in, want := range tests {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	got := URLSecrets("https://u:p4ss@h/v1?api_key=k1&model=m&token=t2")
	slices.Sort(got)
	if want := []string{"k1", "p4ss", "t2"}; !slices.Equal(got, want) {
		t.Errorf("URLSecrets = %v, want %v", got, want)
	}
	if got := URLSecrets("http://127.0.0.1:8000/v1"); len(got) != 0 {
		t.Errorf("URLSecrets of a plain URL = %v", got)
	}
}
