package run

import (
	"cmp"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/selfcheck"
	"github.com/llmload/llmload/engine/threshold"
)

// judgeProbes hands the capacity searches their judge, now that the
// self-check it reads is running; nothing without a capacity search.
func judgeProbes(eng *executor.Engine, j *probeJudge, mon *selfcheck.Monitor) {
	if j == nil {
		return
	}
	j.client = mon
	eng.SetProbeJudge(j)
}

// capacityOutcomes are what the searches found once the engine returned.
// After a second interrupt it may still be running: a search it has not
// stopped is stopped here, so that no gate passes on half a search.
func capacityOutcomes(eng *executor.Engine, e *ending) []engine.CapacityOutcome {
	out := eng.Capacity()
	if e.aborted {
		for i := range out {
			out[i].Stopped = cmp.Or(out[i].Stopped, ErrAborted.Error())
		}
	}
	return out
}

// addCapacity records what each capacity search found, with its probes'
// figures from the result's stages.
func (c *Config) addCapacity(res *result.Result, outcomes []engine.CapacityOutcome) {
	for _, o := range outcomes {
		var search plan.CapacitySearch
		for _, sc := range c.Plan.Scenarios {
			if sc.Name == o.Scenario && sc.Capacity != nil {
				search = *sc.Capacity
			}
		}
		res.AddCapacity(result.CapacityFrom(o, search, res.Stages, res.SLOSet))
	}
}

// capacitySource answers the thresholds judged when the run ends: the
// final snapshot, and what the capacity searches found.
type capacitySource struct {
	*metrics.Snapshot
	outcomes []engine.CapacityOutcome
}

var _ threshold.CapacitySource = capacitySource{}

func (s capacitySource) Capacities() []engine.CapacityOutcome { return s.outcomes }
