package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/dataset"
)

// agentTreeScenario replays scenarios/data/agent_tree.jsonl, llmload's
// own tree format, with each record's prompt built to its length.
const agentTreeScenario = `local llm = require("llmload")
local trace = llm.trace.agent(%q, { block_tokens = 16 })
options = {
  target = { model = "Qwen/Qwen2.5-7B-Instruct" },
  scenarios = { replay = { executor = "trace", exec = "replay", trace = trace, pre_allocated_vus = 24, max_vus = 64 } },
  thresholds = { ["errors.rate"] = "< 1%%" },
}
function replay(vu)
  local r = vu.record
  llm.complete { prompt = r.prompt, max_tokens = r.max_tokens, min_tokens = r.max_tokens, ignore_eos = true }
end
`

// TestE2ETraceTreeReplay replays a trace of agent trees (42 records: six
// planners, each with three workers and a tool round after each) against
// a simulator with a fixed TTFT that logs what it received, and holds
// every child against its parent at the server: it arrives at its
// parent's completion plus its recorded gap.
func TestE2ETraceTreeReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against a mock for 3 s")
	}
	dir := t.TempDir()
	data, err := filepath.Abs("../../scenarios/data/agent_tree.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "tree.lua")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(agentTreeScenario, data)), 0o600); err != nil {
		t.Fatal(err)
	}
	truthLog, out := filepath.Join(dir, "truth.jsonl"), filepath.Join(dir, "tree.json")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "20ms", "--fixed-itl", "2ms",
		"--tokenizer", "cl100k_base", "--truth-log", truthLog, "--truth-log-prompts", "--model", "Qwen/Qwen2.5-7B-Instruct")
	url := mock.mockURL(t)
	_, stderr, code := runBinary(t, nil, "run", script, "--target", url, "--out", out, "-q")
	if code != 0 {
		t.Fatalf("run exited %d:\n%s", code, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	tr, err := dataset.LoadTrace(data, dataset.TraceFormat{Kind: dataset.TraceAgent, BlockTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	server := readTruth(t, truthLog)
	if len(server) != len(tr.Records)+1 {
		t.Fatalf("the server saw %d requests, the trace has %d records (and the preflight 1)", len(server), len(tr.Records))
	}
	prompter, err := dataset.NewTracePrompter("cl100k_base", 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	matched := matchRecords(t, tr, prompter, server)
	var devs []float64
	for i, rec := range tr.Records {
		if rec.Parent == 0 {
			continue
		}
		parent := matched[rec.Parent-1]
		answered := parent.Arrival.Add(time.Duration(parent.E2EMS * float64(time.Millisecond)))
		due := answered.Add(rec.Delay)
		off := float64(matched[i].Arrival.Sub(due)) / float64(time.Millisecond)
		if off < -1 {
			t.Errorf("record %s (line %d) arrived %.2f ms before its parent's answer plus %v", rec.ID, rec.Line, -off, rec.Delay)
		}
		devs = append(devs, math.Abs(off))
	}
	if len(devs) != tr.Children || tr.Children != 36 {
		t.Fatalf("%d children measured, the trace has %d (want 36)", len(devs), tr.Children)
	}
	slices.Sort(devs)
	p50, p99 := devs[len(devs)/2], devs[int(math.Ceil(0.99*float64(len(devs))))-1]
	t.Logf("child arrival vs parent's completion + gap at the server: p50 %.3f ms, p99 %.3f ms, max %.3f ms", p50, p99, devs[len(devs)-1])
	if busy := machineBusy(loadResult(t, out)); busy != "" {
		t.Logf("the run's self-check: %s", busy)
	}
	// The gap is the client's: its read of the answer's end, the
	// iteration's return and a timer; generous bounds for a busy machine.
	if p50 > 5 || p99 > 25 {
		t.Errorf("children p50 %.2f ms, p99 %.2f ms after parent's completion + gap; want ≤ 5 ms and ≤ 25 ms", p50, p99)
	}
	res := loadResult(t, out)
	if len(res.Traces) != 1 || res.Traces[0].Children != 36 {
		t.Errorf("result traces %+v, want one with 36 children", res.Traces)
	}
}
