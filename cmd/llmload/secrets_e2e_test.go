package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmload/llmload/engine/sim"
)

// Credentials of TestE2ESecretsNeverLeak: a password that every escaping
// changes and a key that no redaction of plain words would catch.
const (
	leakUser = "alice"
	leakPass = `sk-pw/e2e+odd&<pass>"`
	leakKey  = "sk-e2e-Bearer_0123456789abcdefXYZ"
)

func lowerPercent(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// leakEchoes are the ways the hostile server quotes what it received.
var leakEchoes = []func(string) string{
	func(s string) string { return s },
	url.QueryEscape,
	url.PathEscape,
	func(s string) string { return lowerPercent(url.QueryEscape(s)) },
	func(s string) string { return strings.ReplaceAll(strings.Trim(jsonQuote(s), `"`), "/", `\/`) },
	html.EscapeString,
	func(s string) string { // the Basic pair, decoded
		if b64, ok := strings.CutPrefix(s, "Basic "); ok {
			pair, _ := base64.StdEncoding.DecodeString(b64)
			return string(pair)
		}
		return s
	},
}

// leakAnswers are the failures that carry the quote: 4xx, 5xx, an error
// in the stream, a malformed stream, and a quote at the 200-byte cut.
var leakAnswers = []func(w http.ResponseWriter, quoted string){
	func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, jsonQuote("bad credentials "+q))
	},
	func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "<html>crash serving "+q+"</html>")
	},
	func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+`{"error":{"message":`+jsonQuote("stream failed for "+q)+`}}`+"\n\n")
	},
	func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {not json "+q+"\n\n")
	},
	func(w http.ResponseWriter, q string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"detail":%s}`, jsonQuote(strings.Repeat("x", 185)+" "+q))
	},
}

// hostileServer passes the preflight, then answers each request with the
// next failure, quoting the Authorization header and the URL it received.
func hostileServer(t *testing.T) *httptest.Server {
	var n atomic.Int64
	simulator := sim.New(sim.Config{DecodeBase: -1, PrefillBase: -1})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			simulator.ServeHTTP(w, r)
			return
		}
		i := n.Add(1) - 2
		if i < 0 { // the preflight
			simulator.ServeHTTP(w, r)
			return
		}
		echo := leakEchoes[int(i)%len(leakEchoes)]
		answer := leakAnswers[int(i)/len(leakEchoes)%len(leakAnswers)]
		answer(w, echo(r.Header.Get("Authorization"))+" at "+echo(r.URL.String()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// leakForms are every encoding of the credentials sent.
func leakForms() []string {
	pair := leakUser + ":" + leakPass
	var forms []string
	for _, v := range []string{leakKey, leakPass, pair} {
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v), lowerPercent(url.QueryEscape(v)),
			strings.Trim(jsonQuote(v), `"`), html.EscapeString(v))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(pair)))
	}
	return forms
}

// TestE2ESecretsNeverLeak runs the binary against a server that quotes
// the credentials back in every encoding and every kind of failure: no
// output — stdout, stderr, result JSON, CSV, JSONL, HTML — holds any form.
func TestE2ESecretsNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const scenario = `local llm = require("llmload")
options = { stages = { { name = "c1", target = 2, duration = "2s" } } }
function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 } end
`
	tests := map[string]struct {
		target func(srv string) string
		env    []string
	}{
		"basic auth": {func(srv string) string {
			return strings.Replace(srv, "://", "://"+url.UserPassword(leakUser, leakPass).String()+"@", 1) + "/v1"
		}, nil},
		"bearer key": {func(srv string) string { return srv + "/v1" }, []string{"LLMLOAD_API_KEY=" + leakKey}},
		"query key":  {func(srv string) string { return srv + "/v1?api_key=" + url.QueryEscape(leakPass) }, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := hostileServer(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "scenario.lua")
			if err := os.WriteFile(path, []byte(scenario), 0o600); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"--out": "result.json", "--csv": "requests.csv", "--requests-jsonl": "requests.jsonl", "--html": "report.html"}
			args := []string{"run", path, "--target", tt.target(srv.URL)}
			for flag, file := range files {
				args = append(args, flag, filepath.Join(dir, file))
			}
			stdout, stderr, code := runBinary(t, tt.env, args...)
			outputs := map[string]string{"stdout": stdout, "stderr": stderr}
			for _, file := range files {
				body, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatalf("%s not written (exit %d): %v\nstderr:\n%s", file, code, err, stderr)
				}
				outputs[file] = string(body)
			}
			if !strings.Contains(outputs["requests.csv"], "[redacted]") {
				t.Errorf("requests.csv redacted nothing; did the server quote anything?\n%s", outputs["requests.csv"])
			}
			for out, text := range outputs {
				for _, form := range leakForms() {
					if strings.Contains(text, form) {
						t.Errorf("%s holds the credential form %q", out, form)
					}
				}
			}
		})
	}
}
