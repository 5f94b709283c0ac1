package executor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// iterationsRun drives an iteration-count scenario: VUs run Iterations in
// all (shared-iterations) or each (per-vu-iterations), as fast as they can,
// within one stage whose Duration bounds the whole run (max_duration).
type iterationsRun struct {
	*scenarioBase
	shared   bool
	claimed  atomic.Int64 // shared-iterations: iterations handed out
	finished atomic.Int64
	running  atomic.Int32 // VUs still iterating
}

func (r *iterationsRun) prepare() error {
	if r.sc.VUs < 0 || r.sc.Iterations < 0 {
		return fmt.Errorf("scenario %q: vus %d and iterations %d must not be negative", r.sc.Name, r.sc.VUs, r.sc.Iterations)
	}
	return nil
}

// initialVUs is the segment's share of the VUs.
func (r *iterationsRun) initialVUs() int { return r.eng.seg.Share(r.sc.VUs) }

// sharedIterations is shared-iterations' total for the segment.
func (r *iterationsRun) sharedIterations() int {
	return sharedIterationsShare(r.eng.seg, r.sc.VUs, r.sc.Iterations)
}

// total is the number of iterations the segment runs when not cut short;
// per-vu-iterations' VUs each run all of Iterations.
func (r *iterationsRun) total() int64 {
	if r.shared {
		return int64(r.sharedIterations())
	}
	return int64(r.sc.Iterations) * int64(r.initialVUs())
}

func (r *iterationsRun) progress(st *ScenarioStatus) {
	st.ActiveVUs = int(r.running.Load())
	st.BusyVUs = st.ActiveVUs
	st.AllocatedVUs = r.initialVUs()
	st.IterationsDone = r.finished.Load()
	st.IterationsTotal = r.total()
}

// run starts every VU and ends the stage when all iterations are done or
// the bound passes; then iterations still running get GracefulStop.
func (r *iterationsRun) run(ctx context.Context) {
	bound := r.sc.Stages[0].Duration
	if bound <= 0 {
		bound = plan.DefaultMaxDuration
	}
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	start := r.begin()
	mark := r.stageStarted(0, start)
	done := r.spawn(ictx, stop, mark.Stage)
	end := start.Add(bound)
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	reached := true
	select {
	case <-done:
		end = runclock.Now() // the work ended the stage, before its bound
	case <-timer.C:
	case <-ctx.Done():
		reached = false
	}
	close(stop)
	r.stageEnded(mark, end, reached)
	r.stage.Store(1)
	drain(done, cancel, r.sc.GracefulStop, &GracefulStopError{Scenario: r.sc.Name, Option: "graceful_stop", Grace: r.sc.GracefulStop})
}

// spawn starts one goroutine per VU; done closes once all have returned.
func (r *iterationsRun) spawn(ctx context.Context, stop chan struct{}, stage string) <-chan struct{} {
	var wg sync.WaitGroup
	for _, v := range r.vus {
		wg.Add(1)
		r.running.Add(1)
		go func() {
			defer wg.Done()
			defer r.running.Add(-1)
			mine := 0
			for !closed(stop) && ctx.Err() == nil && r.claim(&mine) {
				r.eng.iterate(ctx, stop, v, engine.Iteration{Scenario: r.sc.Name, Stage: stage, Exec: r.sc.Exec})
				r.finished.Add(1)
			}
		}()
	}
	return waitDone(&wg)
}

// claim reserves the next iteration for a VU that has run *mine so far.
func (r *iterationsRun) claim(mine *int) bool {
	if r.shared {
		return r.claimed.Add(1) <= int64(r.sharedIterations())
	}
	if *mine >= r.sc.Iterations {
		return false
	}
	*mine++
	return true
}
