package history

import (
	"github.com/llmload/llmload/engine/result"
)

// Fingerprint names a run's plan in the history: the plan's parts (the
// script, the --set values, the data files, the plan's shape) without the
// seed, since a CI job that draws a seed per run still runs one plan, and
// its runs must line up. Results without parts keep their own
// fingerprint.
func Fingerprint(r *result.Result) string {
	if r.Run.PlanParts == nil {
		return r.Run.Plan
	}
	parts := *r.Run.PlanParts
	parts.Seed = 0
	return parts.Fingerprint()
}
