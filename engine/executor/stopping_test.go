package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
)

// stopOrCancel is an iteration that waits until its VU is told to stop
// (counted in stopped) or its context ends (counted in canceled).
func stopOrCancel(stopped, canceled *atomic.Int32) func(context.Context, engine.Iteration) error {
	return func(ctx context.Context, _ engine.Iteration) error {
		select {
		case <-engine.Stopping(ctx):
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
	closed := plan(engine.Stage{Name: "c2", Target: 2, Duration: window})
	closed.Scenarios[0].GracefulStop = grace
	batch := iterPlan(engine.ExecutorSharedIterations, 2, 100, window)
	batch.Scenarios[0].GracefulStop = grace
	for name, p := range map[string]engine.Plan{"ramping-vus": closed, "shared-iterations": batch} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
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

// The arrival-rate scheduler finishes its waits in nanosleep, which a
// synctest bubble cannot fake: this one runs on the real clock, with a
// graceful stop far longer than any delay a busy machine adds.
func TestArrivalIterationsLearnTheyAreStopping(t *testing.T) {
	const window, grace = 500 * time.Millisecond, time.Minute
	p := openPlan(2, 2, engine.Stage{Name: "r4", Rate: 4, Duration: window})
	p.Scenarios[0].GracefulStop = grace
	var stopped, canceled atomic.Int32
	start := time.Now()
	if err := New(p, &fakeRunner{fn: stopOrCancel(&stopped, &canceled)}, &fakeSink{}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got > grace/2 {
		t.Errorf("run took %v: iterations waited out the %v graceful stop", got, grace)
	}
	if stopped.Load() == 0 || canceled.Load() != 0 {
		t.Errorf("%d iterations told they were stopping, %d canceled; want all told, none canceled", stopped.Load(), canceled.Load())
	}
}
