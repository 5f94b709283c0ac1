package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
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
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
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

// credentialForms returns every way a test expects a credential to be
// echoed, computed independently of the Redactor.
func credentialForms(user, pass, key string) map[string]string {
	pair := user + ":" + pass
	forms := map[string]string{
		"bearer key":          "Bearer " + key,
		"key":                 key,
		"password":            pass,
		"pair":                pair,
		"basic std":           "Basic " + base64.StdEncoding.EncodeToString([]byte(pair)),
		"basic std raw":       "Basic " + base64.RawStdEncoding.EncodeToString([]byte(pair)),
		"basic url":           "Basic " + base64.URLEncoding.EncodeToString([]byte(pair)),
		"basic url raw":       "Basic " + base64.RawURLEncoding.EncodeToString([]byte(pair)),
		"basic query-escaped": url.QueryEscape("Basic " + base64.StdEncoding.EncodeToString([]byte(pair))),
		"password query":      url.QueryEscape(pass),
		"password path":       url.PathEscape(pass),
		"password lower hex":  lowerHex(url.QueryEscape(pass)),
		"pair userinfo":       url.UserPassword(user, pass).String(),
		"key query":           url.QueryEscape(key),
		"key all escaped":     allEscaped(key),
		"password json":       strings.Trim(mustJSON(pass), `"`),
		"password html":       html.EscapeString(pass),
	}
	return forms
}

// pctChars counts the characters of s with %hh as one and a cut escape as none.
func pctChars(s string) int {
	s = regexp.MustCompile(`%[0-9A-Fa-f]{2}`).ReplaceAllString(s, "x")
	return len(regexp.MustCompile(`%[0-9A-Fa-f]?$`).ReplaceAllString(s, ""))
}

func lowerHex(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

func allEscaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s) // escapes <, > and & as \u00XX, as Go servers do
	return string(b)
}

func TestRedactorCoversEveryEncoding(t *testing.T) {
	const user, pass, key = "alice", `p@ss w/rd&<"x+`, "sk-test-Key_0123456789abcdef"
	r := New(key, "http://"+url.UserPassword(user, pass).String()+"@127.0.0.1:9/v1")
	for name, form := range credentialForms(user, pass, key) {
		t.Run(name, func(t *testing.T) {
			in := "error: got header " + form + " from you"
			got := r.Redact(in)
			if strings.Contains(got, form) || !strings.Contains(got, Redacted) {
				t.Errorf("Redact(%q) = %q", in, got)
			}
			if !strings.HasPrefix(got, "error: got header ") || !strings.HasSuffix(got, " from you") {
				t.Errorf("Redact(%q) = %q, lost the text around the credential", in, got)
			}
			// Cut by a truncation after 3 or more bytes of the secret
			// (the scheme word of a header form is not secret).
			head := 0
			for _, scheme := range []string{"Basic ", "Basic+", "Bearer "} {
				if strings.HasPrefix(form, scheme) {
					head = len(scheme)
				}
			}
			for n := head + 3; n < len(form); n++ {
				if pctChars(form[head:n]) < 3 {
					continue // two characters of a secret are left, by design
				}
				cut := "error: " + form[:n] + "…"
				if got := r.Redact(cut); strings.Contains(got, form[head:n]) {
					t.Fatalf("Redact(%q) = %q", cut, got)
				}
			}
		})
	}
}

func TestRedactorKeepsOrdinaryText(t *testing.T) {
	r := New("sk-test-Key_0123456789abcdef", "http://alice:hunter22@h/v1")
	for _, s := range []string{
		"Basic authentication required", "Bearer token required", "Bearer realm=\"api\"",
		"model 'nope' does not exist", "user alice is unknown", "rate limited, retry in 2s…", "",
	} {
		if got := r.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
	if got, want := (*Redactor)(nil).Redact("ok"), "ok"; got != want {
		t.Errorf("nil Redact = %q, want %q", got, want)
	}
}

func TestRedactCredentials(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("bob:secret-pw"))
	tests := map[string]string{
		"Authorization: Basic " + basic:            "Authorization: Basic [redacted]",
		"Authorization: Basic " + basic[:10] + "…": "Authorization: Basic [redacted]…",
		"auth=Bearer%20abc.def-123456":             "auth=Bearer%20[redacted]",
		"key sk-proj-abcdefghijklmnop rejected":    "key [redacted] rejected",
		"Basic authentication required":            "Basic authentication required",
		"Bearer token required":                    "Bearer token required",
		"no credentials here":                      "no credentials here",
	}
	for in, want := range tests {
		if got := Credentials(in); got != want {
			t.Errorf("Credentials(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewRedactorUserOnly(t *testing.T) {
	r := New("", "http://sk-as-user-name@h/v1")
	in := "echo: sk-as-user-name / Basic " + base64.StdEncoding.EncodeToString([]byte("sk-as-user-name:"))
	if got := r.Redact(in); strings.Contains(got, "sk-as-user-name") || strings.Contains(got, "c2stYXMtdXNlci1uYW1lOg") {
		t.Errorf("Redact(%q) = %q", in, got)
	}
}

func TestSensitiveName(t *testing.T) {
	tests := map[string]bool{
		"Authorization": true, "proxy-authorization": true, "api-key": true, "X-API-KEY": true,
		"Cookie": true, "Set-Cookie": true, "X-Goog-Api-Key": true, "Ocp-Apim-Subscription-Key": true,
		"x-auth-token": true, "X-Client-Secret": true, "access_token": true, "sig": true, "X-Amz-Signature": true,
		"password": true, "Content-Type": false, "api-version": false, "X-Request-Id": false,
		"anthropic-version": false, "User-Agent": false, "model": false, "": false,
	}
	for name, want := range tests {
		if got := SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %t, want %t", name, got, want)
		}
	}
}

func TestHeaderSecrets(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("bob:pw-1234"))
	tests := map[string]struct {
		name, value string
		want        []string
	}{
		"plain key":    {"X-Api-Key", " k-123 ", []string{"k-123"}},
		"bearer":       {"Authorization", "Bearer tok-9", []string{"Bearer tok-9", "tok-9"}},
		"basic":        {"Proxy-Authorization", "Basic " + basic, []string{"Basic " + basic, basic, "bob:pw-1234", "pw-1234"}},
		"cookie list":  {"Cookie", "session=s3cr3t-id; theme=dark; x=1", []string{"session=s3cr3t-id; theme=dark; x=1", "s3cr3t-id", "dark"}},
		"padded token": {"X-Token", "abc==", []string{"abc=="}},
		"not secret":   {"X-Request-Id", "r-1", nil},
		"empty":        {"X-Api-Key", "", nil},
	}
	for name, tt := range tests {
		if got := HeaderSecrets(tt.name, tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("%s: HeaderSecrets(%q, %q) = %q, want %q", name, tt.name, tt.value, got, tt.want)
		}
	}
}

// TestNewForCoversEveryEncoding: a header's secret, as NewFor is given it,
// is scrubbed in every encoding a server may quote it in.
func TestNewForCoversEveryEncoding(t *testing.T) {
	const secret = `gw/Secret+val&<"ue>0123`
	r := NewFor(HeaderSecrets("X-Gateway-Token", secret), "http://127.0.0.1:9/v1")
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), lowerHex(url.QueryEscape(secret)),
		strings.Trim(mustJSON(secret), `"`), html.EscapeString(secret), allEscaped(secret)} {
		in := "echo " + form + " end"
		if got := r.Redact(in); got != "echo "+Redacted+" end" {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
}
