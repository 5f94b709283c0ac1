package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// budgetScript runs 16 VUs for a minute against the built-in simulator,
// each request of 64 max_tokens, priced so that the budget of 0.05 USD
// stops it after some forty requests.
const budgetScript = `
local llm = require("llmload")
options = {
  warmup = { requests = 2 },
  cost = { input_per_mtok = 3, output_per_mtok = 15, cached_input_per_mtok = 0.3, budget = 0.05 },
  scenarios = { load = { executor = "constant-vus", exec = "chat", vus = 16, duration = "1m" } },
}
function chat(vu)
  llm.chat { messages = { { role = "user", content = ("[req_%d] Explain, in some detail, how a B-tree index speeds up a query."):format(vu.request_id) } },
             max_tokens = 64, ignore_eos = true }
end
`

// TestE2EBudgetStopsTheRunWithinOneRequest runs budgetScript through the
// binary: the budget stops the run (exit 99) long before its minute, the
// result file is written and marked, its spend is within the budget —
// the in-flight requests' worst cases were reserved — and no closer to it
// than the requests that were in flight, and every request it let through
// is a record while those it refused are none.
func TestE2EBudgetStopsTheRunWithinOneRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := t.TempDir()
	path, out, records := filepath.Join(dir, "budget.lua"), filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.jsonl")
	if err := os.WriteFile(path, []byte(budgetScript), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stdout, stderr, code := runBinary(t, nil, "run", path, "--out", out, "--requests-jsonl", records, "--seed", "3")
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitThreshold, stdout, stderr)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("the run took %v: the budget did not stop it", d)
	}
	var res struct {
		Run struct {
			Complete bool   `json:"complete"`
			Aborted  string `json:"aborted"`
		} `json:"run"`
		Cost struct {
			Budget          float64 `json:"budget"`
			Total           float64 `json:"total"`
			Requests        int64   `json:"requests"`
			MaxRequest      float64 `json:"max_request"`
			StoppedByBudget bool    `json:"stopped_by_budget"`
			Refused         int64   `json:"refused"`
			Stop            struct {
				InFlight int `json:"in_flight"`
			} `json:"stop"`
		} `json:"cost"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result file: %v", err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	c := res.Cost
	if !c.StoppedByBudget || c.Refused == 0 || res.Run.Complete || !strings.HasPrefix(res.Run.Aborted, "spend budget reached: ") {
		t.Fatalf("result: %+v", res)
	}
	if c.Total > c.Budget+c.MaxRequest {
		t.Errorf("spent %v: more than one request's worst case (%v) over the budget %v", c.Total, c.MaxRequest, c.Budget)
	}
	if c.Total > c.Budget {
		t.Errorf("spent %v over the budget %v, although every request's worst case was reserved", c.Total, c.Budget)
	}
	if low := c.Budget - float64(16+1)*c.MaxRequest; c.Total < low {
		t.Errorf("spent %v: stopped further below the budget than the in-flight requests' worst cases allow (%v)", c.Total, low)
	}
	if n := countLines(t, records); int64(n) != c.Requests {
		t.Errorf("%d per-request records, %d requests metered: a refused request was recorded, or a sent one lost", n, c.Requests)
	}
	for _, want := range []string{"spend (estimated): ", "budget: the run stopped before sending", "run incomplete: spend budget reached: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "spend budget reached") {
		t.Errorf("stderr does not say why the run failed:\n%s", stderr)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}
