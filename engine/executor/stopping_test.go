package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/stopping"
)

// stopOrCancel is an iteration that waits until its VU is told to stop
// (counted in stopped) or its context ends (counted in canceled).
func stopOrCancel(stopped, canceled *atomic.Int32) func(context.Context, engine.Iteration) error {
	return func(ctx context.Context, _ engine.Iteration) error {
		select {
		case <-stopping.From(ctx):
			stopped.Add(1)
			return nil
		case <-ctx.Done():
			canceled.Add(1)
			return ctx.Err()
		}
	}
}

// Every executor tells a running iteration that its VU is stopping when
// the schedule ends, long before the graceful stop cancels it: work that
// waits before sending (a back-off) gives up then instead of sending into
// the graceful-stop tail.
func TestIterationsLearnTheyAreStopping(t *testing.T) {
	const window, grace = 3 * time.Second, 30 * time.Second
	closed := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: window})
	batch := iterPlan(plan.ExecutorSharedIterations, 2, 100, window)
	open := openPlan(2, 2, plan.Stage{Name: "r4", Rate: 4, Duration: window})
	tests := map[string]plan.Plan{"ramping-vus": closed, "shared-iterations": batch, "ramping-arrival-rate": open}
	for name, p := range tests {
		p.Scenarios[0].GracefulStop = grace
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var stopped, canceled atomic.Int32
				start := time.Now()
				if err := New(p, &fakeRunner{fn: stopOrCancel(&stopped, &canceled)}, &fakeSink{}).Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				if got := time.Since(start); got != window {
					t.Errorf("run took %v, want %v: iterations waited out the graceful stop", got, window)
				}
				if stopped.Load() == 0 || canceled.Load() != 0 {
					t.Errorf("%d iterations told they were stopping, %d canceled; want all told, none canceled", stopped.Load(), canceled.Load())
				}
			})
		})
	}
}
