package run

import (
	"context"
	"fmt"
	"time"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
	"github.com/llmload/llmload/engine/threshold"
)

// AbortEvery is how often abort_on_fail thresholds are evaluated live.
const AbortEvery = time.Second

// ParseThresholds parses the plan's thresholds against the metrics it knows.
func ParseThresholds(p plan.Plan) (threshold.Set, error) {
	known := threshold.KnownOf(p)
	var set threshold.Set
	for _, spec := range p.Thresholds {
		t, err := threshold.Parse(spec, known)
		if err != nil {
			return nil, fmt.Errorf("%s: options.thresholds[%q]: %w", p.Script, spec.Expr, err)
		}
		set = append(set, t)
	}
	return set, nil
}

// track registers the tag filters the thresholds need before any sample.
func track(col *metrics.Collector, set threshold.Set) error {
	for _, t := range set {
		if t.NeedsTrack() {
			if err := col.Track(t.Metric, t.Filter); err != nil {
				return fmt.Errorf("threshold %s: %w", t.Expr, err)
			}
		}
	}
	return nil
}

// ThresholdAbort is the cause of a run stopped by an abort_on_fail threshold.
type ThresholdAbort struct{ T *threshold.Threshold }

// Error names the threshold and says the run was aborted.
func (a *ThresholdAbort) Error() string {
	return "threshold " + a.T.String() + " failed: run aborted"
}

// watchThresholds evaluates the abort_on_fail thresholds every AbortEvery
// once load has started, and cancels the run with a ThresholdAbort cause
// when one fails. It returns when ctx ends.
func watchThresholds(ctx context.Context, cancel context.CancelCauseFunc, set threshold.Set, eng *executor.Engine, col *metrics.Collector) {
	if !hasAbort(set) {
		return
	}
	tick := time.NewTicker(AbortEvery)
	defer tick.Stop()
	var loadStart time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if eng.Status().Phase != executor.PhaseRunning {
			continue
		}
		if loadStart.IsZero() {
			loadStart = runclock.Now()
		}
		if t, abort := set.ShouldAbort(col.Snapshot(), time.Since(loadStart)); abort {
			cancel(&ThresholdAbort{t})
			return
		}
	}
}

func hasAbort(set threshold.Set) bool {
	for _, t := range set {
		if t.AbortOnFail {
			return true
		}
	}
	return false
}

func markAborted(results []threshold.Result, expr string) {
	for i := range results {
		if results[i].Expr == expr {
			results[i].Aborted = true
		}
	}
}
