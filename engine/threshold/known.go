package threshold

import (
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// KnownOf is what p's thresholds may refer to: the built-in metrics and
// p's custom ones, its scenarios' stages, and its capacity searches.
func KnownOf(p plan.Plan) Known {
	known := Known{Metrics: metrics.Builtin(), Stages: map[string][]string{}, Capacity: map[string]string{}}
	for _, m := range p.Metrics {
		known.Metrics[m.Name] = m.Kind
	}
	for _, sc := range p.Scenarios {
		if sc.Capacity != nil {
			// A capacity search makes its stages as it runs: its scenario
			// is known, its probes' names are not.
			known.Stages[sc.Name] = nil
			known.Capacity[sc.Name] = sc.Capacity.Load
		}
		for _, st := range sc.Stages {
			known.Stages[sc.Name] = append(known.Stages[sc.Name], st.Name)
		}
	}
	if len(p.Targets) > 0 {
		known.Targets = plan.TargetNames(p.Targets)
	}
	return known
}
