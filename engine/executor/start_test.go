package executor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// The load waits for the plan's StartAt after init and warmup, saying so
// in its phase, and starts at once when StartAt has passed; LoadStart
// reports the planned and the actual start.
func TestStartAtHoldsTheLoadUntilTheBarrier(t *testing.T) {
	tests := map[string]struct {
		startAt time.Duration // from the run's start; 0: none
		want    time.Duration // when the first stage starts
	}{
		"no barrier":    {want: 30 * time.Millisecond},
		"ahead":         {startAt: 5 * time.Second, want: 5 * time.Second},
		"already past":  {startAt: -time.Hour, want: 30 * time.Millisecond},
		"during warmup": {startAt: 10 * time.Millisecond, want: 30 * time.Millisecond},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				t0 := time.Now()
				p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Second})
				p.Warmup.Requests = 2 // one 30ms round on 2 VUs
				var startAt time.Time
				if tc.startAt != 0 {
					// As parsed from --start-at: wall clock only.
					startAt = t0.Add(tc.startAt).Round(0)
				}
				p.StartAt = startAt
				sink := &fakeSink{}
				e := New(p, &fakeRunner{fn: sleepFn(30 * time.Millisecond)}, sink)
				done := make(chan error)
				go func() { done <- e.Run(context.Background()) }()

				time.Sleep(tc.want / 2)
				if planned, actual := e.LoadStart(); tc.want > 30*time.Millisecond && (!planned.IsZero() || !actual.IsZero()) {
					t.Errorf("LoadStart before the load = %v, %v; want zero", planned, actual)
				}
				if got, want := e.Status().Phase, map[bool]string{true: PhaseWaiting, false: PhaseWarmup}[tc.want > time.Second]; got != want {
					t.Errorf("phase at %v = %q, want %q", tc.want/2, got, want)
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if got := sink.started[0].At.Sub(t0); got != tc.want {
					t.Errorf("first stage started at %v, want %v", got, tc.want)
				}
				planned, actual := e.LoadStart()
				if !planned.Equal(startAt) || actual.Sub(t0) != tc.want {
					t.Errorf("LoadStart = %v, %v; want %v, t0+%v", planned, actual.Sub(t0), startAt, tc.want)
				}
			})
		})
	}
}

// Ctrl-C at the barrier ends the run at once, before any load.
func TestCancelAtTheStartBarrier(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Second})
		p.StartAt = time.Now().Add(time.Hour)
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		sink := &fakeSink{}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := New(p, r, sink).Run(ctx)
		if !errors.Is(err, context.Canceled) || time.Since(start) != 100*time.Millisecond {
			t.Errorf("Run = %v after %v, want canceled after 100ms", err, time.Since(start))
		}
		if len(r.its) != 0 || len(sink.started) != 0 {
			t.Errorf("%d iterations, %d stages started while waiting at the barrier", len(r.its), len(sink.started))
		}
		if got, want := int(r.closed.Load()), 2; got != want {
			t.Errorf("VUs closed = %d, want %d", got, want)
		}
	})
}
