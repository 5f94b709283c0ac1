package run

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// TestCapacityRun runs a search of VUs end to end against a fake server
// whose TTFT is 150 ms per request in flight: with a 1 s TTFT objective
// it holds up to 6 VUs and breaks from 7, which the search must find,
// report and gate on. The verdicts depend on the VU count, not on time.
func TestCapacityRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a capacity search for a few seconds")
	}
	s := plan.CapacitySearch{Load: plan.CapacityVUs, Start: 1, Max: 32, Growth: 2, Precision: 0.1,
		Warmup: 100 * time.Millisecond, Window: 400 * time.Millisecond, MaxWindow: 1600 * time.Millisecond,
		GoodShare: 0.9, MinSamples: 20}
	p := plan.Plan{Script: "capacity.lua", Seed: 1, Target: plan.Target{Model: "m"}, SLO: plan.SLO{TTFT: time.Second},
		Scenarios: []plan.Scenario{{Name: "cap", Executor: plan.ExecutorCapacity, Exec: "chat", Capacity: &s,
			GracefulStop: time.Second}},
		Thresholds: []plan.ThresholdSpec{{Expr: "capacity.vus", Conditions: []string{">= 4"}}}}
	var inFlight atomic.Int64
	r := &fakeRunner{}
	r.iterate = func(ctx context.Context, it engine.Iteration) error {
		// The most VUs in flight at either end of the iteration: a VU
		// between two iterations at one end is back at the other.
		n := inFlight.Add(1)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
		n = max(n, inFlight.Add(-1)+1)
		ttft := time.Duration(n) * 150 * time.Millisecond
		r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: engine.Result{
			Start: time.Now(), Status: 200, TTFT: ttft, TTFB: ttft, E2E: ttft + time.Millisecond, OutputTokens: 1}})
		return nil
	}
	cfg := testConfig(t, p, r)
	var summary strings.Builder
	cfg.Summary = &summary
	res, out, err := Run(testContext(t), cfg)
	defer func() {
		if t.Failed() {
			t.Log(summary.String())
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Capacity) != 1 {
		t.Fatalf("capacity = %+v, want one search", res.Capacity)
	}
	c := res.Capacity[0]
	if c.Lo != 6 || c.Hi != 7 || c.Stopped != "" || c.AtLeast {
		t.Errorf("capacity %s (lo %v, hi %v, stopped %q), want between 6 and 7", c.Answer(), c.Lo, c.Hi, c.Stopped)
	}
	if out.Verdict != Passed || !res.Thresholds[0].Passed {
		t.Errorf("outcome %+v, thresholds %+v: want capacity.vus >= 4 to pass", out, res.Thresholds)
	}
	for _, pr := range c.Probes {
		if pr.Verdict != result.ProbePass && pr.Verdict != result.ProbeFail {
			t.Errorf("probe %s at %v VUs: %s (%s %s)", probeLabel(pr), pr.Load, pr.Verdict, pr.Why, pr.Stop)
		}
	}
	if back := readBack(t, cfg.Outputs.Out); len(back.Capacity) != 1 || back.Capacity[0].Lo != c.Lo {
		t.Errorf("the result file's capacity = %+v", back.Capacity)
	}
}

func probeLabel(p result.CapacityProbe) string { return strings.Join(p.Stages, ",") }
