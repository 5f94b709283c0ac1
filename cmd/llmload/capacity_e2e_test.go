package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixedRateScenario sends capacity.lua's requests at one constant rate
// and gates on the search's own criteria, so its exit code says whether
// the SLO held at that rate: 0 held, 99 broke.
const fixedRateScenario = `
local llm = require("llmload")
local prompts = llm.synthetic {
  input_tokens = llm.dist.normal(256, 32), output_tokens = llm.dist.fixed(32), unique_prefix = true,
}
options = {
  target = { model = "Qwen/Qwen2.5-7B-Instruct" },
  warmup = { duration = "2s" },
  slo = { ttft = "500ms", tpot = "50ms" },
  scenarios = { fixed = { executor = "constant-arrival-rate", exec = "ask", rate = llm.param("rate", 1),
    duration = "15s", arrival = "constant", pre_allocated_vus = 32, max_vus = 512 } },
  thresholds = { good_share = "rate >= 0.95", ["ttft.p95"] = "< 1s" },
}
function ask(vu)
  local p = prompts:next()
  llm.chat { messages = { { role = "user", content = p.prompt } }, max_tokens = p.max_tokens,
    min_tokens = p.max_tokens, ignore_eos = true, temperature = 0.7, seed = llm.rand_int() }
end
`

// TestE2ECapacitySearch runs scenarios/capacity.lua against the simulator
// with 8 decode slots, then holds the capacity it reports against
// independent fixed-rate runs judged by the same SLO: at 0.85× the lower
// bound of its interval the SLO holds, at 1.25× the upper bound it
// breaks. Arrivals are evenly spaced in both, so the answer is the
// server's, not a Poisson burst's: with random arrivals a 15 s run near
// capacity passes or fails by chance.
func TestE2ECapacitySearch(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search and two fixed-rate runs take about 2 minutes")
	}
	dir := t.TempDir()
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--max-batch", "8", "--model", "Qwen/Qwen2.5-7B-Instruct")
	target := mock.mockURL(t)
	defer mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)

	result := filepath.Join(dir, "capacity.json")
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/capacity.lua", "--target", target, "--out", result,
		"--set", "window=6s", "--set", "probe_warmup=2s", "--set", "precision=10%", "--set", "start=8",
		"--set", "output_tokens=32", "--set", "capacity_rate=2", "--set", "arrival=constant")
	if code != 0 {
		t.Fatalf("capacity search exited %d:\n%s\n%s", code, stdout, stderr)
	}
	res := loadResult(t, result)
	if len(res.Capacity) != 1 {
		t.Fatalf("result has %d capacity searches, want 1", len(res.Capacity))
	}
	c := res.Capacity[0]
	t.Logf("capacity %.2f req/s, between %.2f and %.2f, %d probes", c.Capacity, c.Lo, c.Hi, len(c.Probes))
	if c.Stopped != "" || c.AtLeast || c.Lo <= 0 || c.Hi <= c.Lo || (c.Hi-c.Lo)/c.Lo > 0.10+1e-9 {
		t.Fatalf("search did not converge to 10%%: %+v", c)
	}
	if !strings.Contains(stdout, fmt.Sprintf("capacity %s req/s", trimFloat(c.Capacity))) {
		t.Errorf("summary lacks the capacity line:\n%s", stdout)
	}

	scenario := writeFile(t, dir, "fixed.lua", fixedRateScenario)
	args := func(rate float64) []string {
		return []string{"run", scenario, "--target", target, "--set", fmt.Sprintf("rate=%.3f", rate), "-q"}
	}
	// A check that disagrees is run once more, and two in a row fail: the
	// machine is shared. (Twice CI saw a good share just under 95% at 0.85×;
	// the cause was the simulator's, which kept the prefills of the
	// warmup's canceled requests booked and so served the first second of
	// the measured stage behind them. It now gives them back.)
	failed := aroundCapacity(t, c.Lo, c.Hi, args)
	if len(failed) > 0 {
		t.Logf("the fixed-rate checks disagree with the search's [%.2f, %.2f] req/s (%d failed): checking again", c.Lo, c.Hi, len(failed))
		failed = aroundCapacity(t, c.Lo, c.Hi, args)
	}
	for _, f := range failed {
		t.Error(f)
	}
}

// aroundCapacity holds a search's answer, the bracket [lo, hi] the
// capacity lies in, against independent fixed-rate runs (args gives the
// command line for a rate) judged by the same SLO: at 0.85× lo they pass,
// at 1.25× hi they fail (99). It returns what failed. A run that llmload
// itself flags MACHINE-BUSY (go test ./... runs other packages beside
// this one on two cores) measured the machine, not the server: it is run
// again, at most twice more.
func aroundCapacity(t *testing.T, lo, hi float64, args func(rate float64) []string) []string {
	t.Helper()
	var failed []string
	for _, tt := range []struct {
		rate   float64
		factor string
		want   int
	}{{0.85 * lo, "0.85× its lower bound", 0}, {1.25 * hi, "1.25× its upper bound", 99}} {
		rate := tt.rate
		var out, errOut string
		var code int
		for attempt := 1; attempt <= 3; attempt++ {
			out, errOut, code = runBinary(t, nil, args(rate)...)
			t.Logf("%s (%.2f req/s): exit %d", tt.factor, rate, code)
			if code == tt.want || !strings.Contains(out, "MACHINE-BUSY") {
				break
			}
		}
		if code != tt.want {
			failed = append(failed, fmt.Sprintf("at %s (%.2f req/s) the fixed-rate run exited %d, want %d:\n%s\n%s",
				tt.factor, rate, code, tt.want, out, errOut))
		}
	}
	return failed
}

// trimFloat prints v as the summary does: up to three significant
// digits, no trailing zeros.
func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3g", v), "0"), ".")
}
