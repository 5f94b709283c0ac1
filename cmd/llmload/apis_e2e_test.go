package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/sim"
)

// apiStage is what the end-to-end tests read of a stage in result.json.
type apiStage struct {
	Stage        string  `json:"stage"`
	OK           int64   `json:"ok"`
	Failed       int64   `json:"failed"`
	Inputs       int64   `json:"inputs"`
	InputsPerSec float64 `json:"inputs_per_sec"`
	ToolCalls    int64   `json:"tool_calls"`
	OutputTokens int64   `json:"output_tokens"`
	TTFT         struct {
		Count int64 `json:"count"`
	} `json:"ttft"`
	E2E struct {
		Count int64 `json:"count"`
	} `json:"e2e"`
	ByAPI map[string]struct {
		Requests int64 `json:"requests"`
	} `json:"by_api"`
	Media *struct {
		Images      int64   `json:"images"`
		AudioInS    float64 `json:"audio_in_s"`
		AudioOutS   float64 `json:"audio_out_s"`
		BodyBytes   int64   `json:"body_bytes"`
		MediaTokens int64   `json:"media_tokens"`
	} `json:"media"`
}

// runAPIScenario runs a scenario of the library on the built-in simulator
// for a second a stage, and returns its stages, each checked to have
// requests and no failure, how many requests went to each API, and the
// summary it printed.
func runAPIScenario(t *testing.T, name, seed string) ([]apiStage, map[string]int, string) {
	t.Helper()
	dir := t.TempDir()
	out, jsonl := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.jsonl")
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/"+name, "--set", "duration=1s",
		"--out", out, "--requests-jsonl", jsonl, "--seed", seed)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res struct {
		Stages []apiStage `json:"stages"`
	}
	data, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(data, &res) != nil || len(res.Stages) == 0 {
		t.Fatalf("result.json: %v\n%s", err, data)
	}
	for _, s := range res.Stages {
		if s.OK == 0 || s.Failed != 0 {
			t.Errorf("stage %s: %d ok, %d failed", s.Stage, s.OK, s.Failed)
		}
	}
	return res.Stages, requestAPIs(t, jsonl), stdout
}

// TestE2EGatewayScenarios runs each scenario of the APIs beyond chat
// completions on the built-in simulator: every request succeeds, the
// result and the per-request records name the API, and each API's own
// figures are there (tool calls, inputs/s, no TTFT for embeddings).
func TestE2EGatewayScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	tests := map[string]struct {
		api   string // the requests' api column
		check func(t *testing.T, s apiStage)
	}{
		"responses.lua": {"responses", func(t *testing.T, s apiStage) {
			if s.ByAPI["responses"].Requests != s.OK || s.TTFT.Count != s.OK || s.OutputTokens == 0 {
				t.Errorf("stage %+v: want every request a streamed Responses one", s)
			}
		}},
		"anthropic_messages.lua": {"messages", func(t *testing.T, s apiStage) {
			if s.ByAPI["messages"].Requests != s.OK || s.TTFT.Count != s.OK || s.OutputTokens == 0 {
				t.Errorf("stage %+v: want every request a streamed Messages one", s)
			}
		}},
		"agent_tools.lua": {"chat", func(t *testing.T, s apiStage) {
			if s.ToolCalls == 0 || s.ToolCalls*2 != s.OK || s.ByAPI != nil {
				t.Errorf("stage %+v: want a tool call in every other request, all chat", s)
			}
		}},
		"embeddings.lua": {"embeddings", func(t *testing.T, s apiStage) {
			if s.Inputs == 0 || s.InputsPerSec <= 0 || s.TTFT.Count != 0 || s.E2E.Count != s.OK || s.OutputTokens != 0 {
				t.Errorf("stage %+v: want inputs, inputs/s and E2E only", s)
			}
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stages, apis, stdout := runAPIScenario(t, name, "3")
			for _, s := range stages {
				tt.check(t, s)
			}
			if len(apis) != 1 || apis[tt.api] == 0 {
				t.Errorf("requests.jsonl api column: %v, want only %s", apis, tt.api)
			}
			if tt.api != "chat" && !strings.Contains(stdout, "api: "+tt.api) {
				t.Errorf("summary does not name the API:\n%s", stdout)
			}
		})
	}
}

// requestAPIs counts the per-request records by their api column.
func requestAPIs(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	apis := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			API string `json:"api"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("record %s: %v", sc.Text(), err)
		}
		apis[rec.API]++
	}
	return apis
}

// TestE2EMessagesKeyStaysSecret runs the Messages scenario with a key on
// the built-in simulator, which then wants it in x-api-key: the run
// succeeds, so the key went as Anthropic wants it, and no output holds it.
func TestE2EMessagesKeyStaysSecret(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const key = "sk-ant-e2e-secret-do-not-print"
	dir := t.TempDir()
	files := map[string]string{"--out": "result.json", "--csv": "requests.csv", "--html": "report.html"}
	args := []string{"run", "../../scenarios/anthropic_messages.lua", "--set", "duration=500ms"}
	for flag, name := range files {
		args = append(args, flag, filepath.Join(dir, name))
	}
	stdout, stderr, code := runBinary(t, []string{"LLMLOAD_API_KEY=" + key}, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	outputs := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = string(b)
	}
	for name, text := range outputs {
		if strings.Contains(text, key) {
			t.Errorf("the x-api-key leaked into %s", name)
		}
	}
}

// TestE2EPreflightNamesTheMissingAPI: the Responses scenario against a
// server that serves chat completions only fails before any load, saying
// the server lacks the Responses API.
func TestE2EPreflightNamesTheMissingAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	simulator := sim.New(sim.Config{})
	t.Cleanup(func() { simulator.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/responses" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"detail":"Not Found"}`))
			return
		}
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/responses.lua", "--target", srv.URL+"/v1")
	if code != exitError || !strings.Contains(stderr, "does not serve OpenAI's Responses API") {
		t.Errorf("exit %d, want %d with the missing API named\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
	}
	if got := simulator.Stats().Requests; got != 0 {
		t.Errorf("%d requests reached the server's other routes; the preflight of responses should come first", got)
	}
}
