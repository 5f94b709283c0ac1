package metrics

import (
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// sloMet reports whether a request met every set objective; a failed request
// never does.
func sloMet(o plan.SLO, r *engine.Result) bool {
	if r.Err != nil {
		return false
	}
	if o.TTFT > 0 && r.TTFT == 0 {
		return false // no first token seen (or not streamed): the TTFT objective cannot be shown met
	}
	return withinLimit(r.TTFT, o.TTFT) && withinLimit(r.TPOT, o.TPOT) && withinLimit(r.E2E, o.E2E)
}

// withinLimit is true for an unmeasured value (0): TPOT is absent for one-token
// answers, which cannot miss it.
func withinLimit(v, limit time.Duration) bool { return limit <= 0 || v <= limit }
