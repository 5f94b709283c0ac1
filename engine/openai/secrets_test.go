package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
)

// Credentials of the echo tests: a password with characters that every
// escaping changes, and a key long enough for a Bearer suffix.
const (
	echoUser = "alice"
	echoPass = `sk-pw/with+odd&<chars>"`
	echoKey  = "sk-echo-Key_0123456789abcdefXYZ"
)

// echoes are the ways a server quotes what it received, from a header
// value (or a URL): as is, percent-encoded (both hex cases), JSON- and
// HTML-escaped, and, for Basic auth, decoded.
var echoes = map[string]func(string) string{
	"raw":          func(s string) string { return s },
	"query":        url.QueryEscape,
	"path":         url.PathEscape,
	"lower hex":    func(s string) string { return lowerPct(url.QueryEscape(s)) },
	"json slashes": func(s string) string { return strings.ReplaceAll(strings.Trim(jsonText(s), `"`), "/", `\/`) },
	"html":         html.EscapeString,
	"basic decoded": func(s string) string {
		b64, ok := strings.CutPrefix(s, "Basic ")
		if !ok {
			return s
		}
		pair, _ := base64.StdEncoding.DecodeString(b64)
		return "pair " + string(pair)
	},
}

func lowerPct(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// echoServer answers every request with its Authorization header and URL
// quoted through echo, in the shape answer names.
func echoServer(answer string, echo func(string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		quoted := echo(r.Header.Get("Authorization")) + " at " + echo(r.URL.String())
		switch answer {
		case "401":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":%s}}`, jsonText("bad credentials: "+quoted))
		case "500":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "<html>crash while serving "+quoted+"</html>")
		case "api_error":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ev(`{"error":{"message":`+jsonText("stream failed for "+quoted)+`}}`))
		case "malformed":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {not json "+quoted+"\n\n")
		case "long":
			// The credential lands where the 200-byte message is cut.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"error":%s}`, jsonText(strings.Repeat("x", 180)+" "+quoted))
		}
	})
}

// credentialForms are every encoding of every credential that must not
// appear in a message; computed here, independently of engine.Redactor.
func credentialForms() []string {
	pair := echoUser + ":" + echoPass
	var forms []string
	for _, v := range []string{echoKey, echoPass, pair} {
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v), lowerPct(url.QueryEscape(v)),
			strings.Trim(jsonText(v), `"`), html.EscapeString(v))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(pair)))
	}
	return forms
}

// leaked returns the credential forms (or their first 8 bytes, for cut
// ones) that msg contains.
func leaked(msg string) []string {
	var out []string
	for _, f := range credentialForms() {
		if strings.Contains(msg, f) || (len(f) > 8 && strings.HasSuffix(strings.TrimSuffix(msg, "…"), f[:8])) {
			out = append(out, f)
		}
	}
	return out
}

// TestNoCredentialInAnyErrorMessage sends Bearer and Basic credentials to
// a server that quotes them back in every encoding and every kind of
// failure; no message keeps any form of them.
func TestNoCredentialInAnyErrorMessage(t *testing.T) {
	creds := map[string]func(srv string) Config{
		"bearer": func(srv string) Config { return Config{BaseURL: srv + "/v1", APIKey: echoKey} },
		"basic": func(srv string) Config {
			return Config{BaseURL: strings.Replace(srv, "://", "://"+url.UserPassword(echoUser, echoPass).String()+"@", 1) + "/v1"}
		},
		"query key": func(srv string) Config { return Config{BaseURL: srv + "/v1?api_key=" + url.QueryEscape(echoPass)} },
	}
	for _, answer := range []string{"401", "500", "api_error", "malformed", "long"} {
		for echoName, echo := range echoes {
			srv := serve(t, echoServer(answer, echo))
			for credName, cfg := range creds {
				t.Run(answer+"/"+echoName+"/"+credName, func(t *testing.T) {
					c := testClient(t, cfg(srv.URL).BaseURL, func(c *Config) { *c = cfg(srv.URL); c.Tokenizer = TokenizerNone })
					res := c.Chat(context.Background(), &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}})
					if res.Err == nil {
						t.Fatal("request succeeded, want a failure")
					}
					if got := leaked(res.Err.Message); len(got) > 0 {
						t.Errorf("message %q keeps %q", res.Err.Message, got)
					}
					_, err := c.Preflight(context.Background(), "m")
					if got := leaked(errString(err)); len(got) > 0 {
						t.Errorf("preflight error %q keeps %q", errString(err), got)
					}
				})
			}
		}
	}
}
