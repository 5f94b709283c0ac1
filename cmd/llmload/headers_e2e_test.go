package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/llmload/llmload/engine/secrettest"
	"github.com/llmload/llmload/engine/sim"
)

// Credentials of the header tests: neither looks like an "sk-" key or a
// Bearer token, so only a redaction told of them can hide them.
const (
	headerKey   = "azure-e2e-Key_0123456789abcdefXYZ"
	headerToken = "gw-e2e-Token_0123456789/+&<tok>"
)

// headersScenario sends options.target's headers and query, the key as
// api-key, and headers of its own on each request.
const headersScenario = `local llm = require("llmload")
options = {
  target = {
    api_key = llm.env("E2E_KEY"), auth = "api-key",
    headers = { ["X-Tenant"] = "acme", ["OpenAI-Project"] = "proj_script", ["X-Region"] = "eu" },
    query = { ["api-version"] = "2024-10-21" },
  },
  stages = { { name = "c1", target = 2, duration = "1s" } },
}
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3,
             headers = { ["X-Request"] = "r" .. vu.request_id, ["X-Tenant"] = "per-request" } }
end
`

// seen is what a recording server saw of one request.
type seen struct {
	header http.Header
	query  string
}

// recordingServer is the simulator, requiring the key, behind a handler
// that records each chat request's headers and query.
func recordingServer(t *testing.T) (*httptest.Server, func() []seen) {
	simulator := sim.New(sim.Config{DecodeBase: -1, PrefillBase: -1, APIKey: headerKey, Model: "m"})
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			mu.Lock()
			got = append(got, seen{header: r.Header.Clone(), query: r.URL.RawQuery})
			mu.Unlock()
		}
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

// TestE2EHeadersReachTheServer: the script's headers and query, the
// flags' headers over them and each request's own over both, and the key
// in api-key rather than as a Bearer token, are what the server gets.
// It needs the client's side of issue 25 (engine/openai sending
// Target.Headers, Query, Auth and ChatRequest.Headers).
func TestE2EHeadersReachTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	srv, requests := recordingServer(t)
	path := writeScript(t, headersScenario)
	stdout, stderr, code := runBinary(t, []string{"E2E_KEY=" + headerKey}, "run", path, "--target", srv.URL+"/v1", "--model", "m",
		"--header", "openai-project: proj_flag", "--header", "X-Gateway-Token: "+headerToken)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	reqs := requests()
	if len(reqs) < 2 {
		t.Fatalf("%d chat requests reached the server", len(reqs))
	}
	for i, r := range reqs {
		want := map[string]string{"Api-Key": headerKey, "Authorization": "", "X-Region": "eu", "Openai-Project": "proj_flag",
			"X-Gateway-Token": headerToken}
		if i > 0 { // the first is the preflight's, which no iteration sent
			want["X-Tenant"] = "per-request"
			if !strings.HasPrefix(r.header.Get("X-Request"), "r") {
				t.Errorf("request %d: X-Request = %q, want the request's own", i, r.header.Get("X-Request"))
			}
		}
		for name, v := range want {
			if got := r.header.Get(name); got != v {
				t.Errorf("request %d: %s = %q, want %q", i, name, got, v)
			}
		}
		if len(r.header.Values("X-Tenant")) > 1 || len(r.header.Values("Openai-Project")) > 1 {
			t.Errorf("request %d: a header sent twice: %v", i, r.header)
		}
		if r.query != "api-version=2024-10-21" {
			t.Errorf("request %d: query %q, want api-version=2024-10-21", i, r.query)
		}
		if t.Failed() {
			break // the others would say the same
		}
	}
}

// headerEchoServer passes the preflight, then answers each request with
// the next failure, quoting the api-key, X-Gateway-Token and Cookie
// headers it received.
func headerEchoServer(t *testing.T) *httptest.Server {
	return echoingServer(t, func(path string) bool { return path == "/v1/chat/completions" },
		func(echo secrettest.Echo, r *http.Request) string {
			return echo.Quote(r.Header.Get("Api-Key")) + " and " + echo.Quote(r.Header.Get("X-Gateway-Token")) +
				" and " + echo.Quote(r.Header.Get("Cookie"))
		})
}

// TestE2EHeaderSecretsNeverLeak: a key sent as api-key and sensitive
// headers from the script and the flags, quoted back in every encoding
// and kind of failure, appear in no output. Like TestE2EHeadersReachTheServer
// it needs the client's side of issue 25: until the headers are sent
// there is nothing to quote, and the check that something was redacted
// fails.
func TestE2EHeaderSecretsNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const cookie = "session=e2e-Cookie_0123456789abcdef"
	srv := headerEchoServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "scenario.lua")
	scenario := `local llm = require("llmload")
options = { target = { auth = "api-key", headers = { Cookie = llm.env("E2E_COOKIE") } },
            stages = { { name = "c1", target = 2, duration = "2s" } } }
function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 } end
`
	if err := os.WriteFile(path, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"--out": "result.json", "--csv": "requests.csv", "--requests-jsonl": "requests.jsonl", "--html": "report.html"}
	args := []string{"run", path, "--target", srv.URL + "/v1", "--header", "X-Gateway-Token: " + headerToken}
	for flag, file := range files {
		args = append(args, flag, filepath.Join(dir, file))
	}
	stdout, stderr, code := runBinary(t, []string{"LLMLOAD_API_KEY=" + headerKey, "E2E_COOKIE=" + cookie}, args...)
	outputs := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, file := range files {
		body, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s not written (exit %d): %v\nstderr:\n%s", file, code, err, stderr)
		}
		outputs[file] = string(body)
	}
	if !strings.Contains(outputs["requests.csv"], "[redacted]") {
		t.Errorf("requests.csv redacted nothing: were the headers sent and quoted?\n%s", outputHead(outputs["requests.csv"]))
	}
	forms := append(secrettest.Forms("gateway", headerToken, headerKey), secrettest.Forms("cookie", cookie, headerKey)...)
	for out, text := range outputs {
		for _, form := range secrettest.Leaked(text, forms) {
			t.Errorf("%s holds the credential form %q", out, form)
		}
	}
}

// azureServer stands in for an Azure OpenAI resource: the deployment
// path wants ?api-version and the key in api-key, never as a Bearer
// token, and is served by the simulator; the rest (its /metrics) too.
func azureServer(t *testing.T, deployment string) (*httptest.Server, *atomic.Int64) {
	simulator := sim.New(sim.Config{Model: deployment, DecodeBase: -1, PrefillBase: -1}) // the deployment serves its model, whatever the body names
	var served atomic.Int64
	prefix := "/openai/deployments/" + deployment
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		switch {
		case !ok:
		case r.URL.Query().Get("api-version") == "":
			http.Error(w, `{"error":{"code":"404","message":"Resource not found"}}`, http.StatusNotFound)
			return
		case r.Header.Get("Api-Key") != headerKey || r.Header.Get("Authorization") != "":
			http.Error(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key"}}`, http.StatusUnauthorized)
			return
		default:
			served.Add(1)
			r.URL.Path, r.URL.RawQuery = "/v1"+rest, ""
		}
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &served
}

// TestE2EAzureScenario runs scenarios/azure_openai.lua: against a
// stand-in Azure resource (the deployment path, api-version and api-key:
// this part needs the client's side of issue 25), and, with no endpoint
// but a key, against the built-in simulator, which takes the key in
// api-key too.
func TestE2EAzureScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const scenario = "../../scenarios/azure_openai.lua"
	t.Run("simulator", func(t *testing.T) {
		stdout, stderr, code := runBinary(t, []string{"AZURE_OPENAI_API_KEY=" + headerKey}, "run", scenario, "--set", "duration=300ms", "-q")
		if code != exitOK || !strings.Contains(stdout, "built-in simulator") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("deployment path", func(t *testing.T) {
		srv, served := azureServer(t, "dep-e2e")
		stdout, stderr, code := runBinary(t, []string{"AZURE_OPENAI_ENDPOINT=" + srv.URL + "/", "AZURE_OPENAI_API_KEY=" + headerKey},
			"run", scenario, "--set", "duration=300ms", "--set", "deployment=dep-e2e", "-q")
		if code != exitOK || served.Load() == 0 {
			t.Errorf("exit %d, %d requests served on the deployment path\nstdout:\n%s\nstderr:\n%s", code, served.Load(), stdout, stderr)
		}
		if strings.Contains(stdout+stderr, headerKey) {
			t.Error("the output holds the key")
		}
	})
}

// outputHead is the start of a long output, enough to see its shape.
func outputHead(s string) string {
	if len(s) > 800 {
		return s[:800] + "…"
	}
	return s
}
