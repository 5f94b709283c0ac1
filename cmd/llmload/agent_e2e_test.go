package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EAgentSwarm runs scenarios/agent_swarm.lua on the built-in
// simulator: every task (the swarm and its four workers) succeeds, a
// swarm task makes its planner's, workers' and join's calls, each worker
// two tool delays, and the summary shows the tasks table.
func TestE2EAgentSwarm(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/agent_swarm.lua", "--set", "duration=2s",
		"--set", "tool=100ms", "--seed", "5", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res struct {
		Stages []struct {
			Stage  string `json:"stage"`
			OK     int64  `json:"ok"`
			Failed int64  `json:"failed"`
			Tasks  *struct {
				Tasks  int64 `json:"tasks"`
				OK     int64 `json:"ok"`
				Failed int64 `json:"failed"`
				ByName map[string]struct {
					Tasks    int64 `json:"tasks"`
					OK       int64 `json:"ok"`
					Duration struct {
						P50 float64 `json:"p50"`
					} `json:"duration"`
				} `json:"by_name"`
				Calls struct {
					Max float64 `json:"max"`
				} `json:"calls"`
				Tool struct {
					Max float64 `json:"max"`
				} `json:"tool"`
			} `json:"tasks"`
		} `json:"stages"`
	}
	data, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(data, &res) != nil || len(res.Stages) != 1 {
		t.Fatalf("result.json: %v\n%.2000s", err, data)
	}
	st := res.Stages[0]
	if st.Tasks == nil {
		t.Fatalf("stage %s has no tasks\n%s", st.Stage, stdout)
	}
	swarm, worker := st.Tasks.ByName["swarm"], st.Tasks.ByName["worker"]
	if swarm.Tasks == 0 || swarm.OK != swarm.Tasks || worker.Tasks != 4*swarm.Tasks || worker.OK != worker.Tasks || st.Failed != 0 {
		t.Errorf("tasks %+v, requests ok %d failed %d: want every swarm and its four workers done, no failure", st.Tasks, st.OK, st.Failed)
	}
	// A swarm: planner 1 + 4 workers × (2 tool rounds + an answer) + join 1.
	if st.Tasks.Calls.Max != 14 {
		t.Errorf("calls per task max %v, want a swarm's 14", st.Tasks.Calls.Max)
	}
	// A swarm's tool time is its four workers' two delays of 100 ms.
	if got := st.Tasks.Tool.Max; got < 790 || got > 900 {
		t.Errorf("tool time per task max %v ms, want the swarm's 8 × 100 ms", got)
	}
	// The workers run at once: a swarm takes about one worker's time
	// plus the planner's and the join's, far less than four workers'.
	if swarm.Duration.P50 >= 3*worker.Duration.P50 {
		t.Errorf("swarm p50 %v ms against a worker's %v ms: the workers did not run in parallel", swarm.Duration.P50, worker.Duration.P50)
	}
	if !strings.Contains(stdout, "tasks") || !strings.Contains(stdout, "swarm") {
		t.Errorf("the summary has no tasks table:\n%s", stdout)
	}
}

// TestE2EFanOutArrivesAtOnce: the 16 branches of an llm.parallel reach
// the server together (its truth log's arrivals), not one after another's
// answer; the figure (within 1 ms on a quiet machine) is measured in
// docs/agents.md, the bound here is for a busy one under the race
// detector.
func TestE2EFanOutArrivesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := t.TempDir()
	truthLog := filepath.Join(dir, "truth.jsonl")
	mock, url := startMock(t, truthLog)
	script := filepath.Join(dir, "fan.lua")
	writeTestFile(t, script, `local llm = require("llmload")
options = { scenarios = { fan = { executor = "per-vu-iterations", vus = 1, iterations = 6, exec = "fan" } } }
local fns = {}
for i = 1, 16 do
  fns[i] = function() return llm.chat { messages = { { role = "user", content = "branch " .. i } }, max_tokens = 5 } end
end
function fan() llm.parallel(fns) end
`)
	stdout, stderr, code := runBinary(t, nil, "run", script, "--target", url, "-q")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	var arrivals []time.Time
	for _, r := range readTruth(t, truthLog) {
		if r.Status == 200 && r.MaxTokens == 5 {
			arrivals = append(arrivals, r.Arrival)
		}
	}
	if len(arrivals) != 6*16 {
		t.Fatalf("%d fan-out requests in the truth log, want 96", len(arrivals))
	}
	slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	// One VU: each fan-out's 16 arrivals, then the next's after its
	// answers (20 ms TTFT and more).
	var spreads []time.Duration
	for i := 0; i < len(arrivals); i += 16 {
		spreads = append(spreads, arrivals[i+15].Sub(arrivals[i]))
	}
	t.Logf("fan-out spreads (first arrival to sixteenth): %v", spreads)
	sorted := slices.Clone(spreads[1:]) // the first dials its 16 connections
	slices.Sort(sorted)
	if median := sorted[len(sorted)/2]; median > 15*time.Millisecond {
		t.Errorf("median spread %v of a fan-out's 16 arrivals, want them together (the mock answers in 20 ms)", median)
	}
}
