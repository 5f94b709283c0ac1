package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedDelayServer streams a role chunk at once, the first token after
// ttft, then tokens-1 more every gap, usage, and [DONE].
func fixedDelayServer(ttft, gap time.Duration, tokens int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) {
			fmt.Fprintf(w, "data: %s\n\n", s)
			w.(http.Flusher).Flush()
		}
		flush(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
		time.Sleep(ttft)
		for i := 0; i < tokens; i++ {
			if i > 0 {
				time.Sleep(gap)
			}
			flush(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"t%d "}}]}`, i))
		}
		flush(`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`)
		flush(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`, tokens, tokens+5))
		flush("[DONE]")
	}))
}

// TestReportedTimesMatchAFixedDelayServer checks the whole path, script to
// result file, against a server whose TTFT and token gaps are known.
func TestReportedTimesMatchAFixedDelayServer(t *testing.T) {
	srv := fixedDelayServer(200*time.Millisecond, 20*time.Millisecond, 10)
	defer srv.Close()
	script := writeScript(t, `
local llm = require("llmload")
options = { stages = { { name = "c2", target = 2, duration = "1500ms" } } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 10 }
end
`)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runInProcess(t, "run", "--quiet", "--target", srv.URL+"/v1", "--model", "m", "--out", out, script)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Stages []struct {
			OK                   int64 `json:"ok"`
			TTFT, TPOT, ITL, E2E struct {
				Count int64   `json:"count"`
				P50   float64 `json:"p50"`
			}
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) != 1 || res.Stages[0].OK < 4 {
		t.Fatalf("stages = %+v", res.Stages)
	}
	s := res.Stages[0]
	checks := []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"TTFT p50", s.TTFT.P50, 195, 300},
		{"TPOT p50", s.TPOT.P50, 19, 40},
		{"ITL p50", s.ITL.P50, 19, 40},
		{"E2E p50", s.E2E.P50, 375, 550},
	}
	for _, c := range checks {
		if c.got < c.min || c.got > c.max {
			t.Errorf("%s = %.1f ms, want within [%v, %v]", c.name, c.got, c.min, c.max)
		}
	}
	if got, want := s.ITL.Count, 9*s.OK; got != want {
		t.Errorf("ITL samples = %d, want %d (9 gaps per request)", got, want)
	}
}

// TestCompletionsNonStreamingAndGoodputEndToEnd runs llm.complete and a
// stream=false chat against the built-in simulator and reads the result
// file: a non-streamed answer has E2E but no TTFT, and goodput is set.
func TestCompletionsNonStreamingAndGoodputEndToEnd(t *testing.T) {
	script := writeScript(t, `
local llm = require("llmload")
options = {
  slo = { ttft = "10s", e2e = "30s" },
  stages = { { name = "s", target = 2, duration = "1500ms" } },
}
function iteration(vu)
  llm.complete { prompt = "Once upon a time", max_tokens = 8, tags = { kind = "complete" } }
  local r = llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 8, stream = false, tags = { kind = "whole" } }
  llm.check(r, { ["not streamed"] = r.streamed == false and r.ttft_ms == nil and r.e2e_ms ~= nil })
end
`)
	out := filepath.Join(t.TempDir(), "r.json")
	csv := filepath.Join(t.TempDir(), "r.csv")
	stdout, stderr, code := runInProcess(t, "run", "--quiet", "--out", out, "--csv", csv, script)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	type dist struct {
		Count int64 `json:"count"`
	}
	var res struct {
		SLOSet bool `json:"slo_set"`
		Checks []struct {
			Name  string `json:"name"`
			Fails int64  `json:"fails"`
		} `json:"checks"`
		Stages []struct {
			GoodShare float64 `json:"good_share"`
			ByTag     map[string]map[string]struct {
				OK   int64 `json:"ok"`
				TTFT dist  `json:"ttft"`
				E2E  dist  `json:"e2e"`
			} `json:"by_tag"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	// Half the requests are not streamed: with a TTFT objective they cannot
	// show it met, so they never count as good.
	if !res.SLOSet || len(res.Stages) != 1 || res.Stages[0].GoodShare != 0.5 {
		t.Fatalf("slo_set %v, stages %+v", res.SLOSet, res.Stages)
	}
	kinds := res.Stages[0].ByTag["kind"]
	if c := kinds["complete"]; c.OK == 0 || c.TTFT.Count != c.OK {
		t.Errorf("completions: %+v, want every one with a TTFT", c)
	}
	if w := kinds["whole"]; w.OK == 0 || w.TTFT.Count != 0 || w.E2E.Count != w.OK {
		t.Errorf("stream=false: %+v, want E2E only", w)
	}
	if len(res.Checks) != 1 || res.Checks[0].Fails != 0 {
		t.Errorf("checks = %+v", res.Checks)
	}
	rows, err := os.ReadFile(csv)
	if err != nil || strings.Count(string(rows), "\n") < 3 {
		t.Errorf("per-request CSV: %v, %d lines", err, strings.Count(string(rows), "\n"))
	}
}
