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
}

// Analyze finds the knee and the cliff of each sweep among stages (see
// Sweeps, Knee and Cliff). Sweeps is empty, never nil, when no scenario ran
// a sweep.
func Analyze(stages []metrics.StageSummary, slo engine.SLO) Analysis {
	a := Analysis{Sweeps: []SweepAnalysis{}}
	for _, s := range Sweeps(stages) {
		a.Sweeps = append(a.Sweeps, SweepAnalysis{Scenario: s.Scenario, Knee: Knee(s), Cliff: Cliff(s, slo)})
	}
	return a
}
