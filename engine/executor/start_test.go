package executor

import (
	"context"
	"errors"
	"fmt"
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

// A StartGate decides the start in the plan's StartAt's place: the load
// waits for its instant, phase waiting, and LoadStart reports it; a gate
// that refuses ends the run before any load with a StartError, an
// interrupt while it waits with ctx's error.
func TestStartGate(t *testing.T) {
	refused := errors.New("segment 2 never came")
	tests := map[string]struct {
		gate    func(ctx context.Context, t0 time.Time) (time.Time, error)
		cancel  time.Duration // 0: never
		started bool
		check   func(error) bool
	}{
		"starts at its instant": {gate: func(ctx context.Context, t0 time.Time) (time.Time, error) {
			time.Sleep(time.Second)
			return t0.Add(3 * time.Second), nil
		}, started: true, check: func(err error) bool { return err == nil }},
		"refuses": {gate: func(ctx context.Context, t0 time.Time) (time.Time, error) {
			return time.Time{}, refused
		}, check: func(err error) bool {
			var se *StartError
			return errors.As(err, &se) && errors.Is(err, refused)
		}},
		"interrupted while waiting": {gate: func(ctx context.Context, t0 time.Time) (time.Time, error) {
			<-ctx.Done()
			return time.Time{}, fmt.Errorf("barrier: %w", ctx.Err())
		}, cancel: time.Second, check: func(err error) bool {
			var se *StartError
			return errors.Is(err, context.Canceled) && !errors.As(err, &se)
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				t0 := time.Now()
				p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Second})
				sink := &fakeSink{}
				r := &fakeRunner{fn: sleepFn(time.Millisecond)}
				e := New(p, r, sink)
				e.SetStartGate(func(ctx context.Context) (time.Time, error) { return tc.gate(ctx, t0) })
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel > 0 {
					time.AfterFunc(tc.cancel, cancel)
				}
				done := make(chan error)
				go func() { done <- e.Run(ctx) }()
				time.Sleep(500 * time.Millisecond)
				if got := e.Status().Phase; tc.started && got != PhaseWaiting {
					t.Errorf("phase while the gate decides = %q, want %q", got, PhaseWaiting)
				}
				if err := <-done; !tc.check(err) {
					t.Errorf("Run = %v", err)
				}
				if !tc.started {
					if len(r.its) != 0 || len(sink.started) != 0 {
						t.Errorf("%d iterations, %d stages started", len(r.its), len(sink.started))
					}
					return
				}
				planned, actual := e.LoadStart()
				if !planned.Equal(t0.Add(3*time.Second)) || actual.Sub(t0) != 3*time.Second || sink.started[0].At.Sub(t0) != 3*time.Second {
					t.Errorf("LoadStart = +%v, +%v; want the gate's +3s", planned.Sub(t0), actual.Sub(t0))
				}
			})
		})
	}
}
