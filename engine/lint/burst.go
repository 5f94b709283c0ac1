package lint

import (
	"fmt"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// BurstVUs is how many VUs a stage may start within its first second
// before it is flagged (start-burst): 10,000 VUs ramped over 10 s start
// 1,000 a second.
const BurstVUs = 1024

// startBursts flags the measured stages of a closed model that start
// BurstVUs or more VUs within one second: their first requests reach the
// server together, so the stage opens on the queue of that burst and, at
// thousands of streams, on llmload's own work of starting them (measured
// on 2 cores: 10,000 VUs at once were client-bound for seconds, TTFT p90
// 129 ms above the server's log; ramped over 10 s, 0.7 ms).
func startBursts(p plan.Plan) []Lint {
	var out []Lint
	for _, sc := range p.Scenarios {
		if !measured(sc) || sc.Trace != nil || plan.OpenModel(sc.Executor) || len(sc.Stages) == 0 {
			continue
		}
		for i, n := range stageStarts(sc) {
			if n < BurstVUs {
				continue
			}
			out = append(out, Lint{
				ID: StartBurst, Severity: Warning, Scenario: sc.Name, Stage: sc.Stages[i].Name, Source: FromPlan,
				Message: fmt.Sprintf("starts %d VUs within its first second: their first requests reach the server together, "+
					"so the stage opens on that burst's queue — and, at thousands of streams, on llmload's own work of "+
					"starting them — rather than on the steady load", n),
				Fix: fmt.Sprintf(`ramp them: executor = "ramping-vus" with a stage { target = %d, ramp = "%ds" } (%d VUs a second), `+
					`or ignore start-burst with a reason when the burst is what you measure`, n, (n+rampRate-1)/rampRate, rampRate),
			})
		}
	}
	return out
}

// stageStarts is how many VUs each stage of a closed-model scenario
// starts within its first second.
func stageStarts(sc plan.Scenario) []int {
	out := make([]int, len(sc.Stages))
	switch sc.Executor {
	case plan.ExecutorPerVUIterations:
		out[0] = sc.VUs
		return out
	case plan.ExecutorSharedIterations:
		out[0] = min(sc.VUs, max(sc.Iterations, 0))
		return out
	}
	level := float64(sc.StartVUs) // they start with the scenario
	for i, l := range sc.StageLoads() {
		added := 0.0
		if i == 0 {
			added = level
		}
		switch rise := l.To - level; {
		case rise <= 0:
		case l.Ramp <= time.Second: // a step (LoadOf gives it no ramp) or a ramp within the second
			added += rise
		default:
			added += rise * float64(time.Second) / float64(l.Ramp)
		}
		out[i], level = int(added), l.To
	}
	return out
}

// rampRate is the VUs a second the fix proposes.
const rampRate = 1000
