package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

func testPlan() plan.Plan {
	return plan.Plan{
		Script: "scenarios/mixed.lua", Seed: 42,
		Target: plan.Target{BaseURL: "https://user:pw@llm.example:8443/v1", Model: "m"},
		Warmup: plan.Warmup{Requests: 5},
		Scenarios: []plan.Scenario{
			{Name: "chat", Executor: plan.ExecutorRampingVUs, Exec: "chat", GracefulStop: 30 * time.Second,
				Tags: map[string]string{"team": "a"},
				Stages: []plan.Stage{
					{Name: "c1", Target: 1, Duration: time.Minute},
					{Name: "c8", Target: 8, Duration: 2 * time.Minute, Ramp: 30 * time.Second},
				}},
			{Name: "open", Executor: plan.ExecutorRampingArrivalRate, Exec: "rag", GracefulStop: 10 * time.Second,
				StartTime: 30 * time.Second, TimeUnit: time.Minute, StartRate: 60, PreAllocatedVUs: 4, MaxVUsCap: 32,
				Arrival: plan.ArrivalGamma, Burstiness: 0.5,
				Stages: []plan.Stage{
					{Name: "r2", Rate: 120, Duration: time.Minute, Ramp: time.Minute},
					{Name: "r4", Rate: 240, Duration: 90 * time.Second},
				}},
			{Name: "batch", Executor: plan.ExecutorPerVUIterations, Exec: "batch", VUs: 3, Iterations: 10,
				GracefulStop: time.Second, Stages: []plan.Stage{{Name: "batch", Target: 3, Duration: 10 * time.Minute}}},
			planTraceScenario(),
			{Name: "search", Executor: plan.ExecutorCapacity, Exec: "chat", GracefulStop: 30 * time.Second,
				TimeUnit: time.Second, PreAllocatedVUs: 2, MaxVUsCap: 1000, Capacity: &plan.CapacitySearch{
					Load: plan.CapacityRate, Start: 2, Max: 64, Growth: 2, Precision: 0.1, Warmup: 5 * time.Second,
					Window: 20 * time.Second, MaxWindow: 5 * time.Minute, GoodShare: 0.95,
					Conditions: []string{"ttft.p99 < 1s"}, MinSamples: 30}},
			{Name: "vus", Executor: plan.ExecutorCapacity, Exec: "chat", GracefulStop: 30 * time.Second,
				Capacity: &plan.CapacitySearch{Load: plan.CapacityVUs, Start: 1, Max: 32, Growth: 2, Precision: 0.05,
					Warmup: 10 * time.Second, Window: 30 * time.Second, MaxWindow: 5 * time.Minute,
					Conditions: []string{"ttft.p99 < 2s", "errors.rate < 1%"}, MinSamples: 30}},
		},
		SLO: plan.SLO{TTFT: time.Second},
	}
}

// planTraceScenario replays 40 records of 3.9 s at half speed, as luabind
// makes it: one stage of the replay's length.
func planTraceScenario() plan.Scenario {
	tr := &plan.Trace{Source: "scenarios/data/trace_mooncake.jsonl (mooncake)", Digest: "22212fcdbef80cf8",
		Speedup: 0.5, Limit: 40}
	for k := range 40 {
		tr.Arrivals = append(tr.Arrivals, plan.TraceArrival{At: time.Duration(k) * 200 * time.Millisecond, Record: k})
	}
	return plan.Scenario{Name: "replay", Executor: plan.ExecutorTrace, Exec: "replay", GracefulStop: 30 * time.Second,
		TimeUnit: time.Second, PreAllocatedVUs: 32, MaxVUsCap: 256, Trace: tr,
		Stages: []plan.Stage{{Name: "replay", Rate: 40 / 7.8, Duration: 7800 * time.Millisecond}}}
}

func TestPlanGolden(t *testing.T) {
	tr := testTrace()
	tr.Speedup, tr.DurationS, tr.Limit = 0.5, 7.8, 40
	golden(t, "plan.txt.golden", render(t, Plan(testPlan(), []string{"ttft.p99 < 1s", "errors.rate < 1% (abort on fail)"}, []result.Trace{tr})))
}

// TestPlanTraceAlone: without the trace's records (a Go caller that has
// only the plan), a trace scenario still says what it replays.
func TestPlanTraceAlone(t *testing.T) {
	p := plan.Plan{Script: "t.lua", Scenarios: []plan.Scenario{planTraceScenario()}}
	text := string(render(t, Plan(p, nil, nil)))
	for _, want := range []string{
		"scenario replay: trace, exec replay(), arrivals at the records' times, 32 pre-allocated VUs (max 256)\n",
		"  trace   scenarios/data/trace_mooncake.jsonl (mooncake), 40 records over 3.90 s at 0.5×, replayed in 7.80 s (digest 22212fcdbef80cf8)\n",
		"slice: the first 40 records (limit)\n", "40 records, 5.128 req/s mean", "expected 40 iterations, one per record",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"lengths", "prefix reuse", "poisson"} {
		if strings.Contains(text, bad) {
			t.Errorf("plan has %q without the trace's records:\n%s", bad, text)
		}
	}
}

func TestSearchProbes(t *testing.T) {
	tests := map[string]struct {
		c               plan.CapacitySearch
		bracket, bisect int
	}{
		"rate 1→1024 ×2 to 5%":   {c: plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 1024, Growth: 2, Precision: 0.05}, bracket: 11, bisect: 5},
		"rate 2→64 ×2 to 10%":    {c: plan.CapacitySearch{Load: plan.CapacityRate, Start: 2, Max: 64, Growth: 2, Precision: 0.1}, bracket: 6, bisect: 4},
		"max not a power":        {c: plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 10, Growth: 2, Precision: 0.5}, bracket: 5, bisect: 1},
		"start at max":           {c: plan.CapacitySearch{Load: plan.CapacityRate, Start: 8, Max: 8, Growth: 2, Precision: 0.05}, bracket: 1, bisect: 5},
		"VUs: one VU at the end": {c: plan.CapacitySearch{Load: plan.CapacityVUs, Start: 1, Max: 8, Growth: 2, Precision: 0.01}, bracket: 4, bisect: 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if b, s := searchProbes(&tt.c); b != tt.bracket || s != tt.bisect {
				t.Errorf("searchProbes = %d, %d; want %d, %d", b, s, tt.bracket, tt.bisect)
			}
		})
	}
}

func TestExpectedArrivals(t *testing.T) {
	open := func(stages ...plan.Stage) plan.Scenario {
		return plan.Scenario{Executor: plan.ExecutorRampingArrivalRate, StartRate: 60, TimeUnit: time.Minute, Stages: stages}
	}
	tests := map[string]struct {
		sc   plan.Scenario
		want float64
	}{
		// r2: ramp 1/s → 2/s over 60s = 90; r4: 4/s × 90s = 360.
		"ramp then step": {sc: testPlan().Scenarios[1], want: 450},
		"zero rate":      {sc: open(plan.Stage{Rate: 0, Duration: time.Minute}), want: 0},
		"ramp down to 0": {sc: open(plan.Stage{Rate: 0, Duration: time.Minute, Ramp: 30 * time.Second}), want: 15},
		// 1/s → 3/s would take 60 s; the 30 s stage ends at 2/s: 45.
		"ramp longer than the stage": {sc: open(plan.Stage{Rate: 180, Duration: 30 * time.Second, Ramp: time.Minute}), want: 45},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := expectedArrivals(tt.sc); got != tt.want {
				t.Errorf("expectedArrivals = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStageLoadText(t *testing.T) {
	open := plan.Scenario{Executor: plan.ExecutorRampingArrivalRate, StartRate: 1}
	closed := plan.Scenario{Executor: plan.ExecutorRampingVUs, StartVUs: 1}
	tests := map[string]struct {
		sc   plan.Scenario
		st   plan.Stage
		want string
	}{
		"step":            {sc: open, st: plan.Stage{Rate: 4, Duration: time.Minute}, want: "4 req/s"},
		"ramp, no hold":   {sc: open, st: plan.Stage{Rate: 3, Duration: time.Minute, Ramp: time.Minute}, want: "1 req/s → 3 req/s over 1m"},
		"ramp then hold":  {sc: closed, st: plan.Stage{Target: 8, Duration: time.Minute, Ramp: 30 * time.Second}, want: "1 VU → 8 VUs over 30s, then hold"},
		"ramp cut by end": {sc: open, st: plan.Stage{Rate: 3, Duration: 30 * time.Second, Ramp: time.Minute}, want: "1 req/s → 2 req/s over 30s, the stage's end cutting a 1m ramp"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			sc := tt.sc
			sc.Stages = []plan.Stage{tt.st}
			if got := stageLoad(sc, tt.st, sc.StageLoads()[0]); got != tt.want {
				t.Errorf("stageLoad = %q, want %q", got, tt.want)
			}
		})
	}
}
