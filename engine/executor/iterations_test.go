package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// iterPlan is one iteration-count scenario bounded by maxDuration.
func iterPlan(executor string, vus, iterations int, maxDuration time.Duration) plan.Plan {
	return plan.Plan{Scenarios: []plan.Scenario{{
		Name: "batch", Executor: executor, Exec: "chat", VUs: vus, Iterations: iterations,
		GracefulStop: time.Second,
		Stages:       []plan.Stage{{Name: "batch", Target: vus, Duration: maxDuration}},
	}}}
}

func TestSharedIterationsRunsExactTotal(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		e := New(iterPlan(plan.ExecutorSharedIterations, 4, 50, 10*time.Second), r, &fakeSink{})
		start := time.Now()
		if err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, want := len(r.its), 50; got != want {
			t.Errorf("iterations = %d, want %d", got, want)
		}
		// 50 iterations of 1ms on 4 VUs: 13 rounds, then the stage ends.
		if got, want := time.Since(start), 13*time.Millisecond; got != want {
			t.Errorf("Run took %v, want %v: the stage should end when the iterations are done", got, want)
		}
		vus := map[int]bool{}
		for _, it := range r.its {
			vus[it.VUID] = true
			if it.Stage != "batch" || !it.Scheduled.IsZero() {
				t.Fatalf("iteration %+v", it)
			}
		}
		if len(vus) < 2 {
			t.Errorf("only %d of 4 VUs shared the iterations", len(vus))
		}
		st := e.Status().Scenarios[0]
		if st.IterationsDone != 50 || st.IterationsTotal != 50 || !st.Done {
			t.Errorf("status = %+v", st)
		}
	})
}

func TestPerVUIterationsRunsExactCountPerVU(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		sink := runPlan(t, iterPlan(plan.ExecutorPerVUIterations, 3, 7, 10*time.Second), r)
		perVU := map[int]int{}
		for _, it := range r.its {
			perVU[it.VUID]++
		}
		if got, want := len(perVU), 3; got != want {
			t.Fatalf("VUs = %d, want %d", got, want)
		}
		for id, n := range perVU {
			if n != 7 {
				t.Errorf("VU %d ran %d iterations, want 7", id, n)
			}
		}
		if got, want := len(sink.marks), 21; got != want {
			t.Errorf("iteration marks = %d, want %d", got, want)
		}
		if len(sink.started) != 1 || len(sink.ended) != 1 {
			t.Fatalf("stage marks: %d started, %d ended", len(sink.started), len(sink.ended))
		}
		if m := sink.started[0]; m.Stage != "batch" || m.Target != 3 || m.Rate != 0 {
			t.Errorf("stage mark = %+v", m)
		}
	})
}

func TestMaxDurationCutsIterations(t *testing.T) {
	for _, executor := range []string{plan.ExecutorSharedIterations, plan.ExecutorPerVUIterations} {
		t.Run(executor, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var completed atomic.Int32
				r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
					err := sleepFn(50*time.Millisecond)(ctx, it)
					if err == nil {
						completed.Add(1)
					}
					return err
				}}
				start := time.Now()
				sink := runPlan(t, iterPlan(executor, 2, 1000, 225*time.Millisecond), r)
				// The bound cuts the 5th round of 50ms; graceful stop lets it end.
				if got, want := time.Since(start), 250*time.Millisecond; got != want {
					t.Errorf("Run took %v, want %v with a 200ms bound", got, want)
				}
				if n := len(r.its); n == 0 || n >= 2000 {
					t.Errorf("iterations = %d; the bound should cut them", n)
				}
				if got, want := int(completed.Load()), len(r.its); got != want {
					t.Errorf("completed %d of %d: graceful stop should let them finish", got, want)
				}
				if got, want := sink.ended[0].At.Sub(sink.started[0].At), 225*time.Millisecond; got != want {
					t.Errorf("stage window %v, want the bound %v", got, want)
				}
			})
		})
	}
}

func TestIterationCountCancelsNeverEndingIteration(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: func(ctx context.Context, _ engine.Iteration) error {
			<-ctx.Done()
			return ctx.Err()
		}}
		p := iterPlan(plan.ExecutorSharedIterations, 1, 5, 100*time.Millisecond)
		p.Scenarios[0].GracefulStop = 50 * time.Millisecond
		start := time.Now()
		sink := runPlan(t, p, r)
		if got, want := time.Since(start), 150*time.Millisecond; got != want {
			t.Errorf("Run took %v, want the 100ms bound and the 50ms graceful stop", got)
		}
		if got, want := len(r.its), 1; got != want {
			t.Errorf("iterations = %d, want %d (none after the bound)", got, want)
		}
		assertGracefulStopReported(t, sink, 1)
	})
}
