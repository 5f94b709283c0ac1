package report

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

func testPlan() engine.Plan {
	return engine.Plan{
		Script: "scenarios/mixed.lua", Seed: 42,
		Target: engine.Target{BaseURL: "https://user:pw@llm.example:8443/v1", Model: "m"},
		Warmup: engine.Warmup{Requests: 5},
		Scenarios: []engine.Scenario{
			{Name: "chat", Executor: engine.ExecutorRampingVUs, Exec: "chat", GracefulStop: 30 * time.Second,
				Tags: map[string]string{"team": "a"},
				Stages: []engine.Stage{
					{Name: "c1", Target: 1, Duration: time.Minute},
					{Name: "c8", Target: 8, Duration: 2 * time.Minute, Ramp: 30 * time.Second},
				}},
			{Name: "open", Executor: engine.ExecutorRampingArrivalRate, Exec: "rag", GracefulStop: 10 * time.Second,
				StartTime: 30 * time.Second, TimeUnit: time.Minute, StartRate: 60, PreAllocatedVUs: 4, MaxVUsCap: 32,
				Arrival: engine.ArrivalGamma, Burstiness: 0.5,
				Stages: []engine.Stage{
					{Name: "r2", Rate: 120, Duration: time.Minute, Ramp: time.Minute},
					{Name: "r4", Rate: 240, Duration: 90 * time.Second},
				}},
			{Name: "batch", Executor: engine.ExecutorPerVUIterations, Exec: "batch", VUs: 3, Iterations: 10,
				GracefulStop: time.Second, Stages: []engine.Stage{{Name: "batch", Target: 3, Duration: 10 * time.Minute}}},
		},
	}
}

func TestPlanGolden(t *testing.T) {
	golden(t, "plan.txt.golden", render(t, Plan(testPlan(), []string{"ttft.p99 < 1s", "errors.rate < 1% (abort on fail)"})))
}

func TestExpectedArrivals(t *testing.T) {
	open := func(stages ...engine.Stage) engine.Scenario {
		return engine.Scenario{Executor: engine.ExecutorRampingArrivalRate, StartRate: 60, TimeUnit: time.Minute, Stages: stages}
	}
	tests := map[string]struct {
		sc   engine.Scenario
		want float64
	}{
		// r2: ramp 1/s → 2/s over 60s = 90; r4: 4/s × 90s = 360.
		"ramp then step": {sc: testPlan().Scenarios[1], want: 450},
		"zero rate":      {sc: open(engine.Stage{Rate: 0, Duration: time.Minute}), want: 0},
		"ramp down to 0": {sc: open(engine.Stage{Rate: 0, Duration: time.Minute, Ramp: 30 * time.Second}), want: 15},
		// 1/s → 3/s would take 60 s; the 30 s stage ends at 2/s: 45.
		"ramp longer than the stage": {sc: open(engine.Stage{Rate: 180, Duration: 30 * time.Second, Ramp: time.Minute}), want: 45},
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
	open := engine.Scenario{Executor: engine.ExecutorRampingArrivalRate, StartRate: 1}
	closed := engine.Scenario{Executor: engine.ExecutorRampingVUs, StartVUs: 1}
	tests := map[string]struct {
		sc   engine.Scenario
		st   engine.Stage
		want string
	}{
		"step":            {sc: open, st: engine.Stage{Rate: 4, Duration: time.Minute}, want: "4 req/s"},
		"ramp, no hold":   {sc: open, st: engine.Stage{Rate: 3, Duration: time.Minute, Ramp: time.Minute}, want: "1 req/s → 3 req/s over 1m"},
		"ramp then hold":  {sc: closed, st: engine.Stage{Target: 8, Duration: time.Minute, Ramp: 30 * time.Second}, want: "1 VU → 8 VUs over 30s, then hold"},
		"ramp cut by end": {sc: open, st: engine.Stage{Rate: 3, Duration: 30 * time.Second, Ramp: time.Minute}, want: "1 req/s → 2 req/s over 30s, the stage's end cutting a 1m ramp"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			sc := tt.sc
			sc.Stages = []engine.Stage{tt.st}
			if got := stageLoad(sc, tt.st, sc.StageLoads()[0]); got != tt.want {
				t.Errorf("stageLoad = %q, want %q", got, tt.want)
			}
		})
	}
}
