package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
)

// llamaPartsScenario sweeps 1, 4 and 16 VUs over the real llama-server's 4
// slots with short prompts and 32-token answers.
const llamaPartsScenario = `
local llm = require("llmload")
options = {
  target = { model = "stories260K", tokenizer = "none", metrics_url = llm.param("metrics_url", ""), metrics_every = "250ms" },
  scenarios = { sweep = { executor = "ramping-vus", exec = "ask", stages = {
    { name = "c1", target = 1, duration = "4s" }, { name = "c4", target = 4, duration = "4s" },
    { name = "c16", target = 16, duration = "4s" } } } },
}
function ask(vu)
  llm.chat { messages = { { role = "user", content = ("[%d] Once upon a time"):format(vu.request_id) } },
    max_tokens = 32, min_tokens = 32, ignore_eos = true, temperature = 0.7, seed = llm.rand_int() }
end
`

// TestLlamaServerParts: against the real llama-server, every request's
// TTFT is split by the timings of its own answer (prompt_ms, predicted_ms);
// the server's /metrics says requests were deferred once the 16 VUs
// outnumber its 4 slots, and that wait shows in the residual — llama.cpp
// does not time it apart — while prompt processing stays comparable.
func TestLlamaServerParts(t *testing.T) {
	base := llamaServer(t)
	dir := t.TempDir()
	scenario := writeFile(t, dir, "parts.lua", llamaPartsScenario)
	out, jsonl := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	stdout, stderr, code := runBinaryWithin(t, 4*time.Minute, nil, "run", scenario, "--target", base+"/v1",
		"--set", "metrics_url="+base+"/metrics", "--out", out, "--requests-jsonl", jsonl)
	if code != 0 {
		t.Fatalf("run exited %d:\n%s\n%s", code, stdout, stderr)
	}
	split := 0
	for _, r := range requestRecords(t, jsonl) {
		if r["warmup"] == true || r["error_class"] != nil {
			continue
		}
		ttft, _ := num(r, "ttft_ms")
		upload, _ := num(r, "upload_ms")
		residual, okR := num(r, "residual_ms")
		prefill, okP := num(r, "prefill_ms")
		serverPrompt, _ := num(r, "server_prompt_ms")
		if r["parts_source"] != "timings" || !okR || !okP || r["queue_ms"] != nil || prefill != serverPrompt {
			t.Errorf("request at %v ms: parts %v residual %v prefill %v (server_prompt_ms %v) queue %v: want llama.cpp's timings",
				r["start_offset_ms"], r["parts_source"], r["residual_ms"], r["prefill_ms"], serverPrompt, r["queue_ms"])
			continue
		}
		if d := ttft - (upload + residual + prefill); d > 0.003 || d < -0.003 {
			t.Errorf("upload %v + residual %v + prefill %v ≠ TTFT %v", upload, residual, prefill, ttft)
		}
		split++
	}
	res := loadResult(t, out)
	byStage := map[string][2]float64{} // residual p50, prefill p50
	for _, st := range res.Stages {
		bd := st.Breakdown
		if bd == nil || bd.FromTimings != st.OK || st.OK == 0 {
			t.Fatalf("stage %s: breakdown %+v over %d ok requests, want every one from timings", st.Stage, bd, st.OK)
		}
		byStage[st.Stage] = [2]float64{bd.Residual.P50, bd.Prefill.P50}
		t.Logf("%s: %d requests, residual p50 %.2f p99 %.2f ms, prefill p50 %.2f ms, decode p50 %.1f ms, tail p50 %.2f ms",
			st.Stage, bd.Requests, bd.Residual.P50, bd.Residual.P99, bd.Prefill.P50, bd.Decode.P50, bd.Tail.P50)
	}
	if split == 0 {
		t.Fatal("no request was split")
	}
	// 16 VUs on 4 slots: three of four requests wait for a slot, as long as
	// a whole answer takes; within the slots none waits.
	c1, c16 := byStage["c1"], byStage["c16"]
	if c16[0] < 4*max(c1[0], 1) {
		t.Errorf("residual p50 %.2f ms at 16 VUs, %.2f at 1: want the wait for a slot in it", c16[0], c1[0])
	}
	if waiting := serverWaiting(res); waiting < 1 {
		t.Errorf("the server's deferred requests peaked at %v at 16 VUs: want its queue beyond the slots", waiting)
	}
	for _, s := range res.Analysis.Sweeps {
		t.Logf("knee: %s; cliff: %s", s.Knee.Text, s.Cliff.Text)
		if c := s.Cliff; c.Found && c.Stage == "c16" && strings.HasPrefix(c.Metric, "ttft_") {
			if c.Explained == nil || c.Explained.Grew != "residual" || !strings.Contains(c.Text, "llama.cpp's timings do not time the wait apart") {
				t.Errorf("cliff at 16 VUs %q (explained %+v): want the residual named", c.Text, c.Explained)
			}
		}
	}
}

// serverWaiting is the highest reading of the server's waiting requests
// (llamacpp:requests_deferred) in res.
func serverWaiting(res *result.Result) float64 {
	peak := 0.0
	if res.ServerMetrics == nil {
		return peak
	}
	for _, s := range res.ServerMetrics.Series {
		if s.Role == servermetrics.RoleWaiting {
			for _, v := range s.V {
				peak = max(peak, v)
			}
		}
	}
	return peak
}
