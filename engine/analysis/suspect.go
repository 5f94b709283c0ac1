package analysis

import (
	"cmp"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
)

// LagSuspectMS is the schedule-lag p99 beyond which an open-model stage's
// figures are suspect: llmload started requests late, so the load offered
// was not the plan's (report.LagWarnMS warns at the same bound).
const LagSuspectMS = 10.0

// StageSuspect says why a stage's figures may be the client side's rather
// than the server's: llmload was client-bound, the machine was busy with
// other processes, the window slipped from its planned length, or (open
// models) llmload fell behind its schedule; empty when none of these is
// known.
func StageSuspect(st metrics.StageSummary) []string {
	var why []string
	if c := st.Client; c != nil && c.Bound {
		why = append(why, "llmload itself was the bottleneck")
	}
	if c := st.Client; c != nil && c.MachineBusy {
		why = append(why, "the machine was busy with other processes")
	}
	if r := st.SlipReason(); r != "" {
		why = append(why, r)
	}
	if lag := st.ScheduleLag; st.TargetRate > 0 && lag.Count > 0 && lag.P99 > LagSuspectMS {
		why = append(why, "llmload fell behind its schedule (schedule lag p99 "+msText(lag.P99)+")")
	}
	return why
}

// suspectOf joins the reasons of the points a finding was computed from,
// each reason once with the stages it holds for, in load order: "c8, c16:
// the machine was busy with other processes".
func suspectOf(points ...Point) string {
	points = slices.Clone(points)
	slices.SortFunc(points, func(a, b Point) int { return cmp.Compare(a.Load, b.Load) })
	var reasons []string
	stages := map[string][]string{}
	for _, p := range points {
		for _, r := range p.Suspect {
			if _, seen := stages[r]; !seen {
				reasons = append(reasons, r)
			}
			if !slices.Contains(stages[r], p.Stage) {
				stages[r] = append(stages[r], p.Stage)
			}
		}
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = strings.Join(stages[r], ", ") + ": " + r
	}
	return strings.Join(parts, "; ")
}
