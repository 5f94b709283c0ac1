// Package merge joins the results of a plan's segment runs (llmload run
// --segment i/n) into the one result a single process would have written:
// counts add, histograms merge (engine/metrics), and everything judged
// from the data — thresholds, the knee and cliff analysis, warnings and
// the verdict — is judged again on the merged data, never taken from a
// segment, whose share of the load is not the run.
package merge

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/engine/verdict"
)

// Input is one segment's result, with the file it was read from for
// messages.
type Input struct {
	Path   string
	Result *result.Result
}

// ErrInputs is wrapped by every error about the set of files given: not
// segment results, of different runs, a segment missing or given twice.
var ErrInputs = errors.New("cannot merge")

// Merge joins the segment results in into one result. The outcome is the
// merged run's verdict as an exit code sees it: thresholds evaluated on
// the merged data (99 when one fails, or when a segment was stopped by an
// abort_on_fail threshold), 1 when the merged run measured nothing, lost
// its target or a segment was interrupted. version is llmload's, for the
// merged result.
func Merge(in []Input, version string) (*result.Result, run.Outcome, error) {
	if err := validate(in); err != nil {
		return nil, run.Outcome{}, err
	}
	slices.SortFunc(in, func(a, b Input) int { return a.Result.Run.Segment.Index - b.Result.Run.Segment.Index })
	parts := make([]metrics.Part, len(in))
	for i, x := range in {
		parts[i] = metrics.Part{Summary: summaryOf(x.Result), State: x.Result.Mergeable.State}
	}
	summary, snap, err := metrics.Merge(parts)
	if err != nil {
		return nil, run.Outcome{}, fmt.Errorf("%w: %v", ErrInputs, err)
	}
	clients(summary.Stages, in)
	res := result.New(meta(in, version), summary)
	res.ServerMetrics = serverMetrics(in, res.Run.Start)
	res.Warnings = append(res.Warnings, segmentWarnings(in)...)
	res.Analysis = analysis.Analyze(res.Stages, sloOf(res), analysis.Server{Metrics: res.ServerMetrics, Start: res.Run.Start})
	first := in[0].Result
	// Every segment describes the whole replay (validate saw them equal);
	// only the server's hit share is judged again, on the merged stages.
	res.AddTraces(first.Traces)
	res.ServerSpans = serverSpans(in)
	res.NegativeResiduals = negativeResiduals(in)
	res.AddServerParts()
	run.AddGPU(res, cmp.Or(gpuSection(in, res.Run.Start), &result.GPU{}), sloOf(res))
	if res.Cost, err = spend(in); err != nil {
		return nil, run.Outcome{}, err
	}
	set, err := run.ParseThresholds(first.Mergeable.Plan(first.Run.Scenario, res.Stages))
	if err != nil {
		return nil, run.Outcome{}, fmt.Errorf("%s: thresholds: %w", in[0].Path, err)
	}
	results, passed := set.Evaluate(snap)
	aborted := cmp.Or(abortedBy(in, results), budgetStopped(in))
	res.Thresholds = results
	onUnreachable := first.Mergeable.OnUnreachable
	reason := verdict.Judge(res, verdict.Input{Outages: outages(in), Start: res.Run.Start, End: res.Run.End, OnUnreachable: onUnreachable})
	return res, outcome(res, reason, aborted, passed), nil
}

// validate refuses a set of files that is not every segment of one run,
// each once.
func validate(in []Input) error {
	if len(in) == 0 {
		return fmt.Errorf("%w: no result files given", ErrInputs)
	}
	for _, x := range in {
		r := x.Result
		if r.Run.Segment == nil || r.Mergeable == nil || r.Mergeable.State == nil {
			if len(r.Run.Segments) > 0 {
				return fmt.Errorf("%w: %s is already a merged result; merge the segment files themselves", ErrInputs, x.Path)
			}
			return fmt.Errorf("%w: %s is not a segment result: only runs made with llmload run --segment i/n can be merged", ErrInputs, x.Path)
		}
	}
	base := in[0]
	n := base.Result.Run.Segment.Count
	seen := make([]string, n)
	for _, x := range in {
		r, seg := x.Result, x.Result.Run.Segment
		switch {
		case seg.Count != n:
			return fmt.Errorf("%w: %s is %s but %s is %s: results of different segment counts", ErrInputs, x.Path, seg.Label(), base.Path, base.Result.Run.Segment.Label())
		case seg.Index < 0 || seg.Index >= n:
			return fmt.Errorf("%w: %s: segment index %d is outside 0..%d", ErrInputs, x.Path, seg.Index, n-1)
		case r.Run.Plan != base.Result.Run.Plan:
			return planMismatch(base, x)
		case r.Run.Seed != base.Result.Run.Seed:
			return fmt.Errorf("%w: %s and %s ran with different seeds (%d and %d): their arrivals are not shares of one schedule", ErrInputs, base.Path, x.Path, base.Result.Run.Seed, r.Run.Seed)
		case r.Run.Model != base.Result.Run.Model:
			return fmt.Errorf("%w: %s and %s measured different models (%q and %q)", ErrInputs, base.Path, x.Path, base.Result.Run.Model, r.Run.Model)
		case seen[seg.Index] != "":
			return fmt.Errorf("%w: %s is in both %s and %s", ErrInputs, seg.Label(), seen[seg.Index], x.Path)
		}
		if err := sameTraces(base, x); err != nil {
			return err
		}
		seen[seg.Index] = x.Path
	}
	var missing []string
	for i, p := range seen {
		if p == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing (%d of %d given): a merge of some segments is not the run", ErrInputs, segmentList(missing), len(in), n)
	}
	return nil
}

// planMismatch says how two segments' plans differ: by name (the seed,
// the script, a --set key, a data file, the plan's shape) when both
// results record the plan's parts, else by fingerprint, as results of
// older versions allow.
func planMismatch(base, x Input) error {
	a, b := base.Result.Run, x.Result.Run
	if a.PlanParts != nil && b.PlanParts != nil {
		if d := plan.Diff(*a.PlanParts, *b.PlanParts); d != "" {
			return fmt.Errorf("%w: %s and %s differ in %s: they are not segments of one run", ErrInputs, base.Path, x.Path, d)
		}
	}
	return fmt.Errorf("%w: %s and %s are of different plans (fingerprints %s and %s): another scenario, script, --set value or seed",
		ErrInputs, base.Path, x.Path, cmp.Or(a.Plan, "none"), cmp.Or(b.Plan, "none"))
}

// sameTraces refuses segments that replayed different traces or slices.
// The plan fingerprint covers the digests already; this says which trace
// differs, and holds for files whose fingerprint is missing.
func sameTraces(base, x Input) error {
	a, b := base.Result.Traces, x.Result.Traces
	differ := len(a) != len(b)
	for i := 0; i < len(a) && !differ; i++ {
		differ = a[i].Scenario != b[i].Scenario || a[i].Digest != b[i].Digest
	}
	if !differ {
		return nil
	}
	return fmt.Errorf("%w: %s and %s replayed different traces (%s and %s): another file, slice or speedup",
		ErrInputs, base.Path, x.Path, traceDigests(a), traceDigests(b))
}

// traceDigests lists scenario=digest, "none" without a trace.
func traceDigests(ts []result.Trace) string {
	if len(ts) == 0 {
		return "none"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Scenario + "=" + t.Digest
	}
	return strings.Join(parts, ", ")
}

func segmentList(ids []string) string {
	if len(ids) == 1 {
		return "segment " + ids[0] + " is"
	}
	return "segments " + strings.Join(ids, ", ") + " are"
}

// summaryOf is the collector's summary a result was built from.
func summaryOf(r *result.Result) *metrics.Summary {
	return &metrics.Summary{
		Stages: r.Stages, Checks: r.Checks, Metrics: r.Metrics, MetricErrors: r.MetricErrors,
		ScriptErrors: r.ScriptErrors, Warmup: r.Warmup, SLOSet: r.SLOSet,
		TimeSeries: r.TimeSeries, Robustness: r.Robustness,
	}
}

// meta describes the merged run: from the first segment's start to the
// last one's end, complete only when every segment was, and the segments
// listed with where and when each ran.
func meta(in []Input, version string) result.Meta {
	first := in[0].Result.Run
	m := result.Meta{
		Scenario: first.Scenario, Model: first.Model, Simulator: true, Start: first.Start, End: first.End,
		Version: version, Complete: true, Seed: first.Seed, SLO: first.SLO, Tokenizer: first.Tokenizer,
		Plan: first.Plan, PlanParts: first.PlanParts, Targets: first.Targets,
	}
	var targets []string
	for _, x := range in {
		r := x.Result.Run
		m.Simulator = m.Simulator && r.Simulator
		m.Start, m.End = minTime(m.Start, r.Start), maxTime(m.End, r.End)
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		if !r.Complete {
			m.Complete = false
		}
		if r.Aborted != "" && m.Aborted == "" {
			m.Aborted = r.Segment.Label() + ": " + r.Aborted
		}
		seg := *r.Segment
		seg.File, seg.Complete, seg.Aborted, seg.Verdict, seg.Process = x.Path, r.Complete, r.Aborted, r.Verdict, r.Process
		seg.LocalServer = r.LocalServer
		m.Segments = append(m.Segments, seg)
	}
	m.Target = strings.Join(targets, ", ")
	return m
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sloOf is the plan's SLO, back from the result's milliseconds.
func sloOf(res *result.Result) plan.SLO {
	o := res.Run.SLO
	if o == nil {
		return plan.SLO{}
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return plan.SLO{TTFT: ms(o.TTFTMS), TPOT: ms(o.TPOTMS), E2E: ms(o.E2EMS), Task: ms(o.TaskMS)}
}

// abortedBy marks, in the merged thresholds, the abort_on_fail threshold
// that stopped a segment, and says which; "" when none did. The merged
// data may pass it — the segment saw only its share, and stopped early —
// but a run cut short by its own gate has failed that gate.
func abortedBy(in []Input, results []threshold.Result) string {
	for _, x := range in {
		for _, t := range x.Result.Thresholds {
			if !t.Aborted {
				continue
			}
			for i := range results {
				if results[i].Expr == t.Expr {
					results[i].Aborted, results[i].Passed = true, false
				}
			}
			return x.Result.Run.Segment.Label() + ": threshold " + t.Expr + " failed: the segment was aborted"
		}
	}
	return ""
}

// outcome is the merged run's verdict, in the order a single run's is
// judged (engine/run): nothing measured or a lost target first, then an
// interrupted segment, then the gates.
func outcome(res *result.Result, reason, aborted string, passed bool) run.Outcome {
	switch {
	case reason != "":
		return run.Outcome{Verdict: run.Failed, Reason: reason}
	case aborted != "":
		return run.Outcome{Verdict: run.GateFailed, Reason: aborted}
	}
	if why := incomplete(res.Run.Segments); why != "" {
		return run.Outcome{Verdict: run.Failed, Reason: why}
	}
	if !passed {
		return run.Outcome{Verdict: run.GateFailed, Reason: "some thresholds failed"}
	}
	return run.Outcome{}
}

// incomplete names every segment that did not complete, and why; "" when
// all did. A merged run with one is incomplete: its figures cover what
// was sent, and its verdict cannot gate.
func incomplete(segs []result.Segment) string {
	var names []string
	for _, s := range segs {
		if !s.Complete {
			names = append(names, fmt.Sprintf("%s (%s) did not complete (%s)", s.Label(), s.File, cmp.Or(s.Aborted, "interrupted")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return plan.JoinAnd(names) + ": the merged result covers what was sent, and is incomplete"
}

// outages are every segment's, in the order they began.
func outages(in []Input) []backoff.Outage {
	var all []backoff.Outage
	for _, x := range in {
		all = append(all, x.Result.Mergeable.Outages...)
	}
	slices.SortStableFunc(all, func(a, b backoff.Outage) int { return a.Start.Compare(b.Start) })
	return all
}
