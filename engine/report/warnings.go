package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// LagWarnMS is the schedule-lag p99 beyond which a stage's open-model
// results are flagged: llmload itself started requests late.
const LagWarnMS = 10.0

// warnings flags the stages whose figures cannot be taken at face value:
// llmload itself was the bottleneck, the machine was busy with other
// processes, the window slipped from its plan, or (open models) the load was not
// delivered as asked: a generator that fell behind, iterations dropped
// for want of VUs, or an achieved rate short of the target by more than
// Poisson noise explains.
func warnings(stages []metrics.StageSummary) []string {
	out := []string{}
	for _, s := range stages {
		name := s.Scenario + "/" + s.Stage
		if c := s.Client; c != nil && c.Bound {
			out = append(out, clientWarning(name, c))
		}
		if c := s.Client; c != nil && c.MachineBusy {
			out = append(out, machineWarning(name, c))
		}
		if s.Slipped() {
			out = append(out, slipWarning(name, &s))
		}
		if s.TargetRate > 0 {
			out = append(out, arrivalWarnings(name, &s)...)
		}
	}
	if w := robustnessWarning(metrics.MergeRobustness(stages)); w != "" {
		out = append(out, w)
	}
	return out
}

// robustnessWarning says that the server mishandled malformed input; ""
// when no dirty request got a defective answer.
func robustnessWarning(run map[string]metrics.RobustnessSummary) string {
	kinds := metrics.DefectKinds(run)
	if len(kinds) == 0 {
		return ""
	}
	var n, defects int64
	for _, rs := range run {
		n, defects = n+rs.Count, defects+rs.Defects
	}
	return fmt.Sprintf("dirty data: %d of %s got a defective answer (a 5xx, a timeout, a reset, "+
		"a broken stream or a 4xx without an error body), in %d %s: %s; see the robustness table",
		defects, count(n, "malformed request", "malformed requests"), len(kinds), plural(int64(len(kinds)), "kind", "kinds"), kindList(kinds))
}

// clientWarning says that a stage's timings include llmload's own delays.
func clientWarning(name string, c *engine.ClientCheck) string {
	why := strings.Join(c.Reasons, "; ")
	if why == "" {
		why = "its self-check flagged the stage"
	}
	return fmt.Sprintf("%s: llmload itself was the bottleneck (%s): its latencies include the client's own delays "+
		"and its throughput may be the client's limit, not the server's; run fewer VUs per process, "+
		"use a larger machine, or split the load across several llmload processes", name, why)
}

// machineWarning says that other processes held the CPU llmload needed,
// with advice that differs from a client-bound stage's: more llmload
// processes on that machine would make it worse.
func machineWarning(name string, c *engine.ClientCheck) string {
	why := strings.Join(c.MachineReasons, "; ")
	return fmt.Sprintf("%s: the machine running llmload was busy with other processes (%s): its latencies may include "+
		"waits for a CPU that are neither the server's nor llmload's own work, and a knee or cliff found there is suspect; "+
		"rerun on a quiet machine (stop the other work, or give llmload dedicated cores), "+
		"not with fewer VUs", name, why)
}

// slipWarning says that a stage's window was not the planned length: the
// load level held for another time than asked, and the next stage's
// window usually slipped the other way.
func slipWarning(name string, s *metrics.StageSummary) string {
	return fmt.Sprintf("%s: the window was %.1f s, planned %s s (%+.0f%%): the stage controller woke late, "+
		"usually on a busy machine; rates are per the actual window, but the stage did not hold its load for the planned time",
		name, s.DurationS, strconv.FormatFloat(s.PlannedS, 'f', -1, 64), 100*(s.DurationS-s.PlannedS)/s.PlannedS)
}

func arrivalWarnings(name string, s *metrics.StageSummary) []string {
	var out []string
	if lag := s.ScheduleLag; lag.Count > 0 && lag.P99 > LagWarnMS {
		out = append(out, fmt.Sprintf("%s: llmload fell behind its schedule (schedule lag p99 %.1f ms > %.0f ms): "+
			"the client machine is overloaded and started requests late; TTFT@ts and E2E@ts include that wait, TTFT and E2E do not",
			name, lag.P99, LagWarnMS))
	}
	if s.DroppedIterations > 0 {
		out = append(out, fmt.Sprintf("%s: %s dropped: every VU was busy (the server fell behind, or max_vus is too low)",
			name, count(s.DroppedIterations, "iteration", "iterations")))
	}
	if short(s.AchievedRate, s.TargetRate, s.DurationS) {
		out = append(out, fmt.Sprintf("%s: achieved %.2f iterations/s of the %.2f/s target (%.0f%%)",
			name, s.AchievedRate, s.TargetRate, 100*s.AchievedRate/s.TargetRate))
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
