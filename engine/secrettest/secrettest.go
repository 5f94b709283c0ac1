// Package secrettest is the kit of the "secrets never leave" tests, as
// net/http/httptest is of HTTP tests: the ways a hostile server quotes
// what it received, the failures that carry the quote, and every encoding
// of a credential that no output may hold. One definition serves the
// client's tests and the binary's end-to-end test, so both hunt the same
// leaks.
package secrettest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Echo is one way a server quotes a value it received (a header, a URL).
type Echo struct {
	Name  string
	Quote func(string) string
}

// Echoes quote as is, percent-encoded (both hex cases), JSON-escaped with
// escaped slashes, HTML-escaped, and, for Basic auth, decoded.
var Echoes = []Echo{
	{"raw", func(s string) string { return s }},
	{"query", url.QueryEscape},
	{"path", url.PathEscape},
	{"lower hex", func(s string) string { return lowerHex(url.QueryEscape(s)) }},
	{"json slashes", func(s string) string { return strings.ReplaceAll(strings.Trim(jsonText(s), `"`), "/", `\/`) }},
	{"html", html.EscapeString},
	{"basic decoded", func(s string) string {
		b64, ok := strings.CutPrefix(s, "Basic ")
		if !ok {
			return s
		}
		pair, _ := base64.StdEncoding.DecodeString(b64)
		return "pair " + string(pair)
	}},
}

// Answer is one failure that carries a quote back to the client.
type Answer struct {
	Name  string
	Write func(w http.ResponseWriter, quoted string)
}

// Answers are a 401 with a JSON error, a 500 in HTML and in plain text, an
// error event in a stream, a malformed stream, quotes that land where a
// 200-byte message is cut (an "error" and a "detail" body), and the error
// shapes of Anthropic's Messages API (a 529, an error event) and of the
// Responses API (response.failed).
var Answers = []Answer{
	{"401", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, jsonText("bad credentials: "+q))
	}},
	{"500 html", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "<html>crash while serving "+q+"</html>")
	}},
	{"500 text", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "crash while serving "+q)
	}},
	{"api_error", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+`{"error":{"message":`+jsonText("stream failed for "+q)+`}}`+"\n\n")
	}},
	{"malformed", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {not json "+q+"\n\n")
	}},
	{"long error", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"error":%s}`, jsonText(strings.Repeat("x", 180)+" "+q))
	}},
	{"long detail", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"detail":%s}`, jsonText(strings.Repeat("x", 185)+" "+q))
	}},
	{"anthropic 529", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"overloaded_error","message":%s}}`, jsonText("overloaded by "+q))
	}},
	{"anthropic error event", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: error\ndata: "+`{"type":"error","error":{"type":"api_error","message":`+jsonText("failed for "+q)+`}}`+"\n\n")
	}},
	{"responses failed", func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":`+
			jsonText("failed for "+q)+`}}}`+"\n\n")
	}},
}

// Forms are every encoding of a key, a password and the user:password
// pair that must not appear anywhere: computed here, independently of
// engine.Redactor, which they test.
func Forms(user, pass, key string) []string {
	pair := user + ":" + pass
	var forms []string
	for _, v := range []string{key, pass, pair} {
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v), lowerHex(url.QueryEscape(v)),
			strings.Trim(jsonText(v), `"`), html.EscapeString(v))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(pair)))
	}
	return forms
}

// Leaked returns the forms that text holds, also a form's first 8 bytes
// where a cut ("…") ends the text.
func Leaked(text string, forms []string) []string {
	var out []string
	for _, f := range forms {
		if strings.Contains(text, f) || (len(f) > 8 && strings.HasSuffix(strings.TrimSuffix(text, "…"), f[:8])) {
			out = append(out, f)
		}
	}
	return out
}

var upperHex = regexp.MustCompile(`%[0-9A-F]{2}`)

func lowerHex(s string) string { return upperHex.ReplaceAllStringFunc(s, strings.ToLower) }

func jsonText(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
