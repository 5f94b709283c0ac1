package analysis

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// Analysis is the knee and cliff of every sweep in a run.
type Analysis struct {
	Sweeps []SweepAnalysis `json:"sweeps"`
}

// SweepAnalysis is one scenario's sweep with its knee and cliff.
type SweepAnalysis struct {
	Scenario string  `json:"scenario"`
	Knee     Finding `json:"knee"`
	Cliff    Finding `json:"cliff"`
	// TagCliffs are the cliffs found on a user tag value's own curve (by
	// the growth rule) at a lower load than Cliff's, or when Cliff found
	// none: one mode's cliff hidden by another's tail. Empty when none is.
	TagCliffs []Finding `json:"tag_cliffs,omitempty"`
}

// Analyze finds the knee and the cliff of each sweep among stages (see
// Sweeps, Knee and Cliff). Sweeps is empty, never nil, when no scenario ran
// a sweep.
func Analyze(stages []metrics.StageSummary, slo engine.SLO) Analysis {
	a := Analysis{Sweeps: []SweepAnalysis{}}
	for _, s := range Sweeps(stages) {
		sa := SweepAnalysis{Scenario: s.Scenario, Knee: Knee(s), Cliff: Cliff(s, slo)}
		for _, f := range TagCliffs(s, stages) {
			// A tag's cliff at or after the sweep's is not hidden by it.
			if !sa.Cliff.Found || f.Load < sa.Cliff.Load {
				sa.TagCliffs = append(sa.TagCliffs, f)
			}
		}
		a.Sweeps = append(a.Sweeps, sa)
	}
	return a
}
