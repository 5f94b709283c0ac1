package analysis

import (
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// Analysis is the knee and cliff of every sweep in a run.
type Analysis struct {
	Sweeps []SweepAnalysis `json:"sweeps"`
	// Pareto is each sweep's per-user speed against total throughput
	// (see Pareto).
	Pareto []ParetoFront `json:"pareto,omitempty"`
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
	// Server is the server's queue along the sweep, from which the knee's
	// and the cliff's Server checks were read; nil when the run has no
	// server queue gauges.
	Server *ServerCurve `json:"server,omitempty"`
}

// Analyze finds the knee and the cliff of each sweep among stages (see
// Sweeps, Knee and Cliff) and checks them against the server's queue
// gauges in server, when it has any, and the Pareto front of each
// sweep. Sweeps is empty, never nil, when no
// scenario ran a sweep.
func Analyze(stages []metrics.StageSummary, slo plan.SLO, server Server) Analysis {
	a := Analysis{Sweeps: []SweepAnalysis{}}
	for _, s := range Sweeps(stages) {
		server.serverParts(&s, stages)
		sa := SweepAnalysis{Scenario: s.Scenario, Knee: Knee(s), Cliff: Cliff(s, slo)}
		for _, f := range TagCliffs(s, stages) {
			// A tag's cliff at or after the sweep's is not hidden by it.
			if !sa.Cliff.Found || f.Load < sa.Cliff.Load {
				sa.TagCliffs = append(sa.TagCliffs, f)
			}
		}
		for _, f := range []*Finding{&sa.Knee, &sa.Cliff} {
			if f.Explained = explain(*f, s); f.Explained != nil {
				f.Text += "; where the time went: " + f.Explained.Text
			}
		}
		if c := server.curve(s, stages); c != nil {
			sa.Server = c
			sa.Knee.Server, sa.Cliff.Server = c.check(sa.Knee, s.LoadUnit), c.check(sa.Cliff, s.LoadUnit)
		}
		a.Sweeps = append(a.Sweeps, sa)
	}
	a.Pareto = Pareto(stages, slo, 0) // the GPU count is not known here yet
	return a
}
