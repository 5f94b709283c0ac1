package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/selfcheck"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/verdict"
)

// result closes the collector and builds the result: stages with the
// client's health over each window, server metrics, analysis, thresholds
// and the verdict (kept in res.Run.Verdict). passed says whether every
// threshold held.
func (c *Config) result(meta result.Meta, col *metrics.Collector, mon *selfcheck.Monitor,
	server *servermetrics.Result, reach *backoff.Tracker, e *ending) (res *result.Result, passed bool) {
	summary := col.Close()
	for i := range summary.Stages {
		s := &summary.Stages[i]
		check := mon.Window(s.Start, s.End)
		s.Client = &check
	}
	res = result.New(meta, summary)
	if s := steadiestStage(summary.Stages, c.Plan); s != nil {
		addHeld(res.Run.Process, mon.Resources(), meta.Start, s.Start, s.End)
	}
	if w := driftWarning(res.Run.Process); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	for _, w := range []string{InsecureTLS(c.Plan), LateStart(meta.Segment)} {
		if w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	res.ServerMetrics = server
	res.Analysis = analysis.Analyze(res.Stages, c.Plan.SLO, analysis.Server{Metrics: server, Start: res.Run.Start})
	res.AddServerParts()
	capacity.AddTo(res, c.Plan, e.capacity)
	res.AddPools(e.pools)
	res.AddTraces(c.Traces)
	results, passed := c.Thresholds.Evaluate(capacity.Source(col.Snapshot(), e.capacity))
	if !c.Plan.Segment.Whole() {
		// A segment's share of the load is not the gate: llmload merge
		// evaluates the thresholds on the whole run. Only an abort_on_fail
		// threshold, which stopped this segment, still fails it.
		passed = true
		res.Mergeable = result.MergeableFrom(c.Plan, col.State(), reach.Outages(meta.End), c.OnUnreachable)
	}
	if abort := c.thresholdAbort(e); abort != nil {
		markAborted(results, abort.T.Expr)
		res.Run.Aborted = abort.Error()
	}
	res.Cost = e.spend
	if budgetStop(e) != nil {
		res.Run.Aborted = e.spend.StopReason()
	}
	switch {
	case e.aborted:
		res.Run.Aborted = ErrAborted.Error()
	case e.memory != nil:
		res.Run.Aborted = "stopped: " + memoryReason(e)
	}
	res.Thresholds = results
	res.Lints = c.finalLints(res)
	verdict.Judge(res, verdict.Input{Outages: reach.Outages(meta.End), Start: meta.Start, End: meta.End,
		OnUnreachable: c.OnUnreachable})
	return res, passed
}

// steadiestStage is the stage whose load the process's drift is judged
// over: the longest that holds its load (no ramp), since within it the
// load is steady, while a ramp adds VUs and each new stage allocates its
// own histograms (steps a judge across them would take for growth). Nil
// when there is none.
func steadiestStage(stages []metrics.StageSummary, p plan.Plan) *metrics.StageSummary {
	ramps := map[[2]string]bool{}
	for _, sc := range p.Scenarios {
		for _, st := range sc.Stages {
			if st.Ramp > 0 {
				ramps[[2]string{sc.Name, st.Name}] = true
			}
		}
	}
	var best *metrics.StageSummary
	for i := range stages {
		s := &stages[i]
		if ramps[[2]string{s.Scenario, s.Stage}] {
			continue
		}
		if best == nil || s.End.Sub(s.Start) > best.End.Sub(best.Start) {
			best = s
		}
	}
	return best
}

// gateStop is what stopped the run as a failed gate does (exit 99): an
// abort_on_fail threshold, or the spend budget; nil when neither did.
func (c *Config) gateStop(e *ending) error {
	if abort := c.thresholdAbort(e); abort != nil {
		return abort
	}
	if budgetStop(e) != nil {
		return errors.New(e.spend.StopReason())
	}
	return nil
}

// thresholdAbort is the abort_on_fail threshold that stopped the run, if any.
func (c *Config) thresholdAbort(e *ending) *ThresholdAbort {
	var abort *ThresholdAbort
	if errors.As(e.cause, &abort) {
		return abort
	}
	return nil
}

// memoryReason is "file:line: memory limit N MB exceeded", the line left
// out when no script line was running.
func memoryReason(e *ending) string {
	if e.line == "" {
		return e.memory.Error()
	}
	return e.line + ": " + e.memory.Error()
}

// judge maps how the run ended to its outcome. First come failures (1): a
// second interrupt, the memory bound, an error, a run that measured
// nothing (reason starts "nothing measured") or lost its target (reason
// starts "target unreachable"), or an interruption. Only then the gates
// (99): a threshold or the spend budget that stopped the run (abort), a
// threshold that failed; the baseline gate comes after this. A gate
// judged on nothing is no verdict, so nothing measured wins over 99.
func judge(e *ending, reason string, abort error, passed bool) Outcome {
	canceled := errors.Is(e.err, context.Canceled)
	// A gate that stops the run cancels it too: not an interruption.
	interrupted := canceled && abort == nil
	switch {
	case e.aborted:
		return Outcome{Failed, "second interrupt: exited at once; the results cover what was collected until then"}
	case e.memory != nil:
		return Outcome{Failed, memoryReason(e) + ": the run stopped; the results above cover what was sent"}
	case e.err != nil && !canceled:
		return Outcome{Failed, e.err.Error()}
	case reason != "" && interrupted:
		return Outcome{Failed, "run interrupted; " + reason}
	case reason != "":
		return Outcome{Failed, reason}
	case abort != nil:
		return Outcome{GateFailed, abort.Error()}
	case interrupted:
		return Outcome{Failed, "run interrupted: the results above cover what was sent"}
	case !passed:
		return Outcome{GateFailed, "some thresholds failed"}
	}
	return Outcome{}
}

// LateStart warns when a segment's load started well after its barrier,
// which the other segments may have kept.
func LateStart(seg *result.Segment) string {
	if seg == nil || seg.PlannedStart.IsZero() || seg.ActualStart.IsZero() {
		return ""
	}
	late := seg.ActualStart.Sub(seg.PlannedStart)
	if late <= SegmentSkew {
		return ""
	}
	return fmt.Sprintf("%s started %v after --start-at %s: VU init, setup or warmup outlasted the barrier, so its load overlapped the other segments' for %v less than planned",
		seg.Label(), late.Round(time.Millisecond), seg.PlannedStart.Format("15:04:05.000 UTC"), late.Round(time.Millisecond))
}

// InsecureTLS is the warning of a run that did not verify some target's
// TLS certificate (insecure_skip_verify); "" when every target's was.
func InsecureTLS(p plan.Plan) string {
	var off []string
	for _, t := range append([]plan.Target{p.Target}, p.Targets...) {
		if u := redact.URL(t.BaseURL); t.TLS.InsecureSkipVerify && u != "" && !slices.Contains(off, u) {
			off = append(off, u)
		}
	}
	if len(off) == 0 {
		return ""
	}
	return fmt.Sprintf("TLS verification is off (insecure_skip_verify): any certificate was accepted from %s, so nothing proves "+
		"the figures are the intended server's rather than a machine's in between; give the server's CA as ca_cert (--ca-cert) instead",
		strings.Join(off, ", "))
}

// poolFigures are the result's account of the executor's VU pools.
func poolFigures(pools []executor.PoolStats) []result.Pool {
	var out []result.Pool
	for _, p := range pools {
		out = append(out, result.Pool{
			Scenario: p.Scenario, PreAllocatedVUs: p.PreAllocatedVUs, MaxVUs: p.MaxVUs, VUs: p.Made, Grown: p.Grown,
			VUInitMeanMS: ms(p.InitMean()), VUInitMaxMS: ms(p.InitMax), Waited: p.Waited, WaitMaxMS: ms(p.WaitMax),
			WaitBoundMS:   ms(executor.PoolWait),
			DroppedMaxVUs: p.DroppedMaxVUs, DroppedGrowing: p.DroppedGrowing, DroppedVUFailed: p.DroppedVUFailed,
			DroppedStopped: p.DroppedStopped, DroppedParent: p.DroppedParent,
		})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
