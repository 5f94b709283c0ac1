package merge

import (
	"fmt"

	"github.com/llmload/llmload/engine/cost"
)

// spend joins the segments' estimated spend (engine/cost.Merge); nil
// when the plan set no prices.
func spend(in []Input) (*cost.Summary, error) {
	parts := make([]*cost.Summary, len(in))
	for i, x := range in {
		parts[i] = x.Result.Cost
	}
	s, err := cost.Merge(parts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInputs, err)
	}
	return s, nil
}

// budgetStopped says which segment its share of the spend budget
// stopped, "" when none: like an abort_on_fail threshold, it fails the
// merged run (99).
func budgetStopped(in []Input) string {
	for _, x := range in {
		if c := x.Result.Cost; c != nil && c.StoppedByBudget && x.Result.Run.Segment != nil {
			return x.Result.Run.Segment.Label() + ": " + c.StopReason()
		}
	}
	return ""
}
