package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmload/llmload/engine/secrettest"
	"github.com/llmload/llmload/engine/sim"
)

// Credentials of TestE2ESecretsNeverLeak: a password that every escaping
// changes and a key that no redaction of plain words would catch.
const (
	leakUser = "alice"
	leakPass = `sk-pw/e2e+odd&<pass>"`
	leakKey  = "sk-e2e-Bearer_0123456789abcdefXYZ"
)

// hostileServer passes the preflight, then answers each request with the
// next failure, quoting the Authorization and X-Api-Key headers and the
// URL it received.
func hostileServer(t *testing.T) *httptest.Server {
	return echoingServer(t, func(path string) bool { return strings.HasSuffix(path, "/completions") || path == "/v1/messages" },
		func(echo secrettest.Echo, r *http.Request) string {
			return echo.Quote(r.Header.Get("Authorization")) + " and " + echo.Quote(r.Header.Get("X-Api-Key")) +
				" at " + echo.Quote(r.URL.String())
		})
}

// echoingServer is the simulator, but for the requests to the paths api
// accepts: past the first (the preflight's), each fails with the next of
// secrettest's answers, its message what quote makes of the request.
func echoingServer(t *testing.T, api func(path string) bool, quote func(secrettest.Echo, *http.Request) string) *httptest.Server {
	var n atomic.Int64
	simulator := sim.New(sim.Config{DecodeBase: -1, PrefillBase: -1})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api(r.URL.Path) {
			simulator.ServeHTTP(w, r)
			return
		}
		i := n.Add(1) - 2
		if i < 0 { // the preflight
			simulator.ServeHTTP(w, r)
			return
		}
		echo := secrettest.Echoes[int(i)%len(secrettest.Echoes)]
		answer := secrettest.Answers[int(i)/len(secrettest.Echoes)%len(secrettest.Answers)]
		answer.Write(w, quote(echo, r))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestE2ESecretsNeverLeak runs the binary against a server that quotes
// the credentials back in every encoding and every kind of failure: no
// output — stdout, stderr, result JSON, CSV, JSONL, HTML — holds any form.
func TestE2ESecretsNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const chatScenario = `local llm = require("llmload")
options = { stages = { { name = "c1", target = 2, duration = "2s" } } }
function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 } end
`
	tests := map[string]struct {
		target   func(srv string) string
		env      []string
		scenario string
	}{
		// Anthropic's Messages API sends the key in x-api-key, not as a
		// Bearer token: a server that quotes that header is hunted too.
		"x-api-key": {func(srv string) string { return srv + "/v1" }, []string{"LLMLOAD_API_KEY=" + leakKey}, `local llm = require("llmload")
options = { stages = { { name = "c1", target = 2, duration = "2s" } } }
function iteration(vu) llm.messages { messages = { { role = "user", content = "hi" } }, max_tokens = 3 } end
`},
		"basic auth": {func(srv string) string {
			return strings.Replace(srv, "://", "://"+url.UserPassword(leakUser, leakPass).String()+"@", 1) + "/v1"
		}, nil, ""},
		"bearer key": {func(srv string) string { return srv + "/v1" }, []string{"LLMLOAD_API_KEY=" + leakKey}, ""},
		"query key":  {func(srv string) string { return srv + "/v1?api_key=" + url.QueryEscape(leakPass) }, nil, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := hostileServer(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "scenario.lua")
			scenario := tt.scenario
			if scenario == "" {
				scenario = chatScenario
			}
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
			forms := secrettest.Forms(leakUser, leakPass, leakKey)
			for out, text := range outputs {
				for _, form := range forms {
					if strings.Contains(text, form) {
						t.Errorf("%s holds the credential form %q", out, form)
					}
				}
			}
		})
	}
}
