package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
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
	// One warning for all the stages a cause flagged: the advice is the
	// same, and a sweep on a busy machine would otherwise repeat it per stage.
	var bound, busy []flaggedStage
	for _, s := range stages {
		name := s.Scenario + "/" + s.Stage
		if c := s.Client; c != nil && c.Bound {
			bound = append(bound, flaggedStage{name, c})
		}
		if c := s.Client; c != nil && c.MachineBusy {
			busy = append(busy, flaggedStage{name, c})
		}
	}
	if len(bound) > 0 {
		out = append(out, clientWarning(bound))
	}
	if len(busy) > 0 {
		out = append(out, machineWarning(busy))
	}
	for _, s := range stages {
		name := s.Scenario + "/" + s.Stage
		if s.Slipped() {
			out = append(out, slipWarning(name, &s))
		}
		if s.TargetRate > 0 {
			out = append(out, arrivalWarnings(name, &s)...)
		}
		if w := connectWarning(name, &s); w != "" {
			out = append(out, w)
		}
		if w := bufferedWarning(name, &s); w != "" {
			out = append(out, w)
		}
	}
	if w := robustnessWarning(metrics.MergeRobustness(stages)); w != "" {
		out = append(out, w)
	}
	return out
}

// Bounds on the time to reach a connection (StageSummary.Connect), which
// no latency includes: most requests paying ConnectTypicalMS means
// connections are not reused; a p99 of ConnectTailMS is the mark of a
// connection attempt retried after a dropped SYN (an accept queue full).
const (
	ConnectTypicalMS = 100.0
	ConnectTailMS    = 1000.0
)

// connectWarning says that requests waited long to be sent; "" when they
// did not.
func connectWarning(name string, s *metrics.StageSummary) string {
	c := s.Connect
	var why string
	switch {
	case c.Count == 0:
		return ""
	case c.P50 >= ConnectTypicalMS:
		why = "most requests opened a connection of their own (does the server close them, or a proxy?)"
	case c.P99 >= ConnectTailMS:
		why = "some waited for a connection attempt to be retried: the server's accept queue overflowed, or a connection limit"
	default:
		return ""
	}
	return fmt.Sprintf("%s: requests waited %s (p50) and %s (p99) to reach a connection before they were sent: %s. "+
		"TTFT and E2E leave that time out; it is the stage's connect distribution and each request's connect_ms",
		name, textfmt.DistMS(c, c.P50)+" ms", textfmt.DistMS(c, c.P99)+" ms", why)
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
		defects, textfmt.Count(n, "malformed request", "malformed requests"), len(kinds), textfmt.Plural(int64(len(kinds)), "kind", "kinds"), textfmt.KindList(kinds))
}

// flaggedStage is a stage its self-check flagged, by "scenario/stage".
type flaggedStage struct {
	name string
	c    *engine.ClientCheck
}

// clientWarning says that the stages' timings include llmload's own delays.
func clientWarning(stages []flaggedStage) string {
	names, why := flaggedText(stages, func(c *engine.ClientCheck) string {
		if len(c.Reasons) == 0 {
			return "its self-check flagged the stage"
		}
		return strings.Join(c.Reasons, "; ")
	})
	return fmt.Sprintf("%s: llmload itself was the bottleneck (%s): %s latencies include the client's own delays "+
		"and %s throughput may be the client's limit, not the server's; run fewer VUs per process, "+
		"use a larger machine, or split the load across several llmload processes",
		names, why, its(len(stages)), its(len(stages)))
}

// machineWarning says that other processes held the CPU llmload needed,
// with advice that differs from a client-bound stage's: more llmload
// processes on that machine would make it worse. One stage gets its
// reasons in full; several get their figures, to keep the line readable.
func machineWarning(stages []flaggedStage) string {
	names, why := flaggedText(stages, func(c *engine.ClientCheck) string {
		if len(stages) > 1 {
			return machineFigures(c)
		}
		return strings.Join(c.MachineReasons, "; ")
	})
	return fmt.Sprintf("%s: the machine running llmload was busy with other processes (%s): %s latencies may include "+
		"waits for a CPU that are neither the server's nor llmload's own work, and a knee or cliff found there is suspect; "+
		"rerun on a quiet machine (stop the other work, or give llmload dedicated cores), "+
		"not with fewer VUs", names, why, its(len(stages)))
}

// flaggedText lists the stages' names, and their reasons: one stage's
// as they are, several prefixed with the stage each belongs to.
func flaggedText(stages []flaggedStage, reason func(*engine.ClientCheck) string) (names, why string) {
	ns, ws := make([]string, len(stages)), make([]string, len(stages))
	for i, s := range stages {
		ns[i], ws[i] = s.name, reason(s.c)
		if len(stages) > 1 {
			ws[i] = s.name + ": " + ws[i]
		}
	}
	return strings.Join(ns, ", "), strings.Join(ws, "; ")
}

// machineFigures are a machine-busy stage's figures in a few words.
func machineFigures(c *engine.ClientCheck) string {
	if !c.MachineMeasured {
		return strings.Join(c.MachineReasons, "; ")
	}
	f := fmt.Sprintf("machine CPU %.0f%% busy, llmload %.0f%% of it", c.MachineCPUPercent, c.OwnSharePercent)
	if s := c.Server; s != nil {
		f = fmt.Sprintf("machine CPU %.0f%% busy (mean %.0f%%: llmload %.0f%%, the local server %.0f%%, other processes %.0f%%)",
			c.MachineCPUPercent, s.MachinePercent, s.OwnPercent, s.ServerPercent, s.OtherPercent)
	}
	if c.StealPercent >= 1 {
		f += fmt.Sprintf(", steal %.0f%%", c.StealPercent)
	}
	if c.RunQueue > 0 {
		f += fmt.Sprintf(", run queue %.1f", c.RunQueue)
	}
	return f
}

// its is the possessive for one stage or several.
func its(n int) string { return textfmt.Plural(int64(n), "its", "their") }

// slipWarning says that a stage's window was not the planned length: the
// load level held for another time than asked, and the next stage's
// window usually slipped the other way.
func slipWarning(name string, s *metrics.StageSummary) string {
	if s.LateS > metrics.MaxWindowSlip*s.PlannedS {
		return fmt.Sprintf("%s: the stage controller changed the load %.1f s late at a boundary of the planned %s s window (%.0f%% of it), "+
			"usually on a busy machine: for that long this window ran at the neighbouring stage's load; rates are per the planned window",
			name, s.LateS, strconv.FormatFloat(s.PlannedS, 'f', -1, 64), 100*s.LateS/s.PlannedS)
	}
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
	if s.DroppedMaxVUs > 0 {
		out = append(out, fmt.Sprintf("%s: %s dropped at max_vus: every VU was busy and the pool was at its cap (the server fell behind, or max_vus is too low)",
			name, textfmt.Count(s.DroppedMaxVUs, "iteration", "iterations")))
	}
	if s.DroppedGrowing > 0 {
		out = append(out, fmt.Sprintf("%s: %s dropped while the pool was still growing: the VU each waited for was not made in time "+
			"(raise pre_allocated_vus, or make the script's top level cheaper)", name, textfmt.Count(s.DroppedGrowing, "iteration", "iterations")))
	}
	if rest := s.DroppedIterations - s.DroppedMaxVUs - s.DroppedGrowing; rest > 0 {
		out = append(out, fmt.Sprintf("%s: %s dropped: every VU was busy (the server fell behind, or max_vus is too low)",
			name, textfmt.Count(rest, "iteration", "iterations")))
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

// Bounds of a buffered stream. A stage whose streamed answers carry at
// least BufferedMinTokens tokens, and whose events mostly arrive together
// (ITL p50 below BufferedITLMS), was delivered in pieces: in one piece
// when its median TTFT is BufferedShare of its median E2E or more (and
// E2E is long enough, BufferedMinE2EMS, for that to mean anything), in
// bursts when time still passes per token on average (TPOT p50 at least
// BufferedBurstTPOTMS) though most gaps are nil.
const (
	BufferedMinTokens   = 8
	BufferedITLMS       = 0.5
	BufferedShare       = 0.9
	BufferedMinE2EMS    = 10.0
	BufferedBurstTPOTMS = 2.0
	bufferedMinOK       = 5
)

// bufferedWarning says that the stage's streams arrived in pieces: a
// proxy or gateway between llmload and the server buffered them, so TTFT
// is the proxy's and ITL measures its buffer; "" otherwise.
func bufferedWarning(name string, s *metrics.StageSummary) string {
	ttft, e2e, itl, tpot := s.TTFT, s.E2E, s.ITL, s.TPOT
	if ttft.Count < bufferedMinOK || itl.Count == 0 || s.OK == 0 || itl.P50 >= BufferedITLMS {
		return ""
	}
	if float64(s.OutputTokens)/float64(s.OK) < BufferedMinTokens {
		return "" // a short answer fits one chunk of any server
	}
	var how string
	switch {
	case e2e.P50 >= BufferedMinE2EMS && ttft.P50 >= BufferedShare*e2e.P50:
		how = fmt.Sprintf("TTFT ≈ E2E (p50 %s of %s) and the tokens arrived together (ITL p50 %s): the streams were "+
			"delivered in one piece once the answer was complete", textfmt.MS(ttft.P50), textfmt.MS(e2e.P50), textfmt.MS(itl.P50))
	case tpot.P50 >= BufferedBurstTPOTMS:
		how = fmt.Sprintf("the tokens arrived in bursts (ITL p50 %s while TPOT p50 is %s; TTFT p50 %s of E2E %s): "+
			"the streams were delivered a buffer at a time", textfmt.MS(itl.P50), textfmt.MS(tpot.P50),
			textfmt.MS(ttft.P50), textfmt.MS(e2e.P50))
	default:
		return ""
	}
	return fmt.Sprintf("%s: %s. A proxy or gateway between llmload and the server is most likely buffering them "+
		"(nginx: proxy_buffering off and proxy_http_version 1.1, or the response header X-Accel-Buffering: no; "+
		"a CDN or load balancer with response buffering): TTFT, TPOT and ITL here are the gateway's, not the server's",
		name, how)
}
