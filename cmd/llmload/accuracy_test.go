package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverTimes is what a timedDelayServer really did: on a busy machine its
// sleeps overrun, so a test compares llmload's figures with these, not
// with the delays asked for.
type serverTimes struct {
	mu                    sync.Mutex
	ttft, tpot, e2e, gaps []time.Duration
}

func (s *serverTimes) add(ttft, e2e time.Duration, gaps []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	s.ttft, s.e2e, s.gaps = append(s.ttft, ttft), append(s.e2e, e2e), append(s.gaps, gaps...)
	s.tpot = append(s.tpot, sum/time.Duration(max(len(gaps), 1)))
}

// p50, lowest and highest are the median, least and greatest of ds, in ms.
func p50(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return millis(s[len(s)/2])
}

func lowest(ds []time.Duration) float64  { return millis(slices.Min(ds)) }
func highest(ds []time.Duration) float64 { return millis(slices.Max(ds)) }
func millis(d time.Duration) float64     { return float64(d) / float64(time.Millisecond) }

// timedDelayServer streams a role chunk at once, the first token after
// ttft, then tokens-1 more every gap, usage, and [DONE], recording, per
// request, the times from the handler's start to its first token and to
// [DONE], the gaps between tokens and their mean, as the server's own
// clock saw them.
func timedDelayServer(ttft, gap time.Duration, tokens int) (*httptest.Server, *serverTimes) {
	times := &serverTimes{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		began := time.Now()
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) time.Time {
			fmt.Fprintf(w, "data: %s\n\n", s)
			w.(http.Flusher).Flush()
			return time.Now()
		}
		flush(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
		time.Sleep(ttft)
		var first, last time.Time
		var gaps []time.Duration
		for i := 0; i < tokens; i++ {
			if i > 0 {
				time.Sleep(gap)
			}
			at := flush(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"t%d "}}]}`, i))
			if i == 0 {
				first = at
			} else {
				gaps = append(gaps, at.Sub(last))
			}
			last = at
		}
		flush(`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`)
		flush(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`, tokens, tokens+5))
		done := flush("[DONE]")
		times.add(first.Sub(began), done.Sub(began), gaps)
	})), times
}

// TestReportedTimesMatchAFixedDelayServer checks the whole path, script to
// result file, against a server whose TTFT and token gaps are known. The
// server's own record of what it did is the reference, so the test holds
// on a busy machine: llmload may add only the loopback's delivery delay.
func TestReportedTimesMatchAFixedDelayServer(t *testing.T) {
	srv, times := timedDelayServer(200*time.Millisecond, 20*time.Millisecond, 10)
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
	if len(res.Stages) != 1 || res.Stages[0].OK < 2 {
		t.Fatalf("stages = %+v", res.Stages)
	}
	s := res.Stages[0]
	times.mu.Lock()
	defer times.mu.Unlock()
	// Each request's TTFT, TPOT and E2E lie between the server's own figure
	// for it and that plus the loopback's delivery delay, so their medians
	// lie between the server's least and greatest (the server also saw the
	// preflight, so its median is of another set) plus a delay generous
	// enough for a load average of 15: far below what a wrong clock start
	// (the role chunk, the iteration's start) would add. Gaps are many, so
	// their medians are compared directly.
	checks := []struct {
		name    string
		got     float64
		lo, hi  float64 // ms
		against string
	}{
		{"TTFT p50", s.TTFT.P50, lowest(times.ttft) - 1, highest(times.ttft) + 100, "the server's TTFTs"},
		{"TPOT p50", s.TPOT.P50, lowest(times.tpot) - 5, highest(times.tpot) + 15, "the server's mean gaps"},
		{"ITL p50", s.ITL.P50, p50(times.gaps) - 5, p50(times.gaps) + 15, "the server's median gap ± delivery"},
		{"E2E p50", s.E2E.P50, lowest(times.e2e) - 1, highest(times.e2e) + 100, "the server's E2Es"},
	}
	for _, c := range checks {
		if c.got < c.lo || c.got > c.hi {
			t.Errorf("%s = %.1f ms, want within [%.1f, %.1f] ms (%s)", c.name, c.got, c.lo, c.hi, c.against)
		}
	}
	// The delays asked for are floors, whatever the load.
	if s.TTFT.P50 < 199 || s.ITL.P50 < 19 {
		t.Errorf("TTFT p50 %.1f ms, ITL p50 %.1f ms: below the server's 200 ms and 20 ms delays", s.TTFT.P50, s.ITL.P50)
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
