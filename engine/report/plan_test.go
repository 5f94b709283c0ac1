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
	sc := testPlan().Scenarios[1]
	// r2: ramp 1/s → 2/s over 60s = 90; r4: 4/s × 90s = 360.
	if got, want := expectedArrivals(sc), 450.0; got != want {
		t.Errorf("expectedArrivals = %v, want %v", got, want)
	}
}
