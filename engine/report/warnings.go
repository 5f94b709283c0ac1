package report

import (
	"fmt"
	"math"

	"github.com/llmload/llmload/engine/metrics"
)

// LagWarnMS is the schedule-lag p99 beyond which a stage's open-model
// results are flagged: llmload itself started requests late.
const LagWarnMS = 10.0

// warnings flags open-model stages whose load was not delivered as asked:
// a generator that fell behind, iterations dropped for want of VUs, or an
// achieved rate short of the target by more than Poisson noise explains.
func warnings(stages []metrics.StageSummary) []string {
	out := []string{}
	for _, s := range stages {
		if s.TargetRate <= 0 {
			continue
		}
		name := s.Scenario + "/" + s.Stage
		if lag := s.ScheduleLag; lag.Count > 0 && lag.P99 > LagWarnMS {
			out = append(out, fmt.Sprintf("%s: llmload fell behind its schedule (schedule lag p99 %.1f ms > %.0f ms): "+
				"the client machine is overloaded and started requests late; TTFT@ts and E2E@ts include that wait, TTFT and E2E do not",
				name, lag.P99, LagWarnMS))
		}
		if s.DroppedIterations > 0 {
			out = append(out, fmt.Sprintf("%s: %d iterations dropped: every VU was busy (the server fell behind, or max_vus is too low)",
				name, s.DroppedIterations))
		}
		if short(s.AchievedRate, s.TargetRate, s.DurationS) {
			out = append(out, fmt.Sprintf("%s: achieved %.2f iterations/s of the %.2f/s target (%.0f%%)",
				name, s.AchievedRate, s.TargetRate, 100*s.AchievedRate/s.TargetRate))
		}
	}
	return out
}

// short reports whether an achieved rate falls below the target by more
// than 1% and by more than three standard deviations of a Poisson count.
func short(achieved, target, seconds float64) bool {
	if seconds <= 0 {
		return false
	}
	expected := target * seconds
	gap := (target - achieved) * seconds
	return gap > 0.01*expected && gap > 3*math.Sqrt(expected)
}
