package executor

import (
	"context"
	"time"
)

// arrivalSource is an open-model scenario's schedule, as the one
// scheduler of runOpen walks it: an arrival-rate scenario draws its
// arrivals, a trace reads them from its records. Its methods are called
// from the scheduler's goroutine only.
type arrivalSource interface {
	// vuPool is the VUs the arrivals go to.
	vuPool() *openPool
	// window is stage i's window, as offsets from the scenario's start.
	window(i int) (start, end time.Duration)
	// next is the segment's next arrival, in order of time; ok is false
	// after the last.
	next() (a arrival, ok bool)
	// dispatch hands a, due at at, to the pool.
	dispatch(a arrival, at time.Time)
}

// runOpen schedules every arrival of src, then lets in-flight iterations
// finish within GracefulStop before canceling them. Arrival-rate and trace
// scenarios share it so that their stage marks, lateness and stopping
// cannot drift apart.
func (b *scenarioBase) runOpen(ctx context.Context, src arrivalSource) {
	pool := src.vuPool()
	pool.start(ctx)
	b.scheduleOpen(ctx, src)
	b.done.Store(true)
	pool.stop(b.sc.GracefulStop)
}

// scheduleOpen walks the stages, marking their windows, and dispatches
// each arrival at its intended time. A stage ends at its planned end, not
// at its last arrival, so its window (and the rate over it) is the plan's.
func (b *scenarioBase) scheduleOpen(ctx context.Context, src arrivalSource) {
	s := newSleeper()
	defer s.stop()
	start := b.begin()
	next, ok := src.next()
	for i := range b.sc.Stages {
		from, to := src.window(i)
		mark := b.stageStarted(i, start.Add(from))
		for ok && next.stage == i {
			at := start.Add(next.at)
			if !s.until(ctx, at) {
				break
			}
			src.dispatch(next, at)
			next, ok = src.next()
		}
		end := start.Add(to)
		reached := s.until(ctx, end)
		if reached && i == len(b.sc.Stages)-1 {
			end, reached = awaitSettled(ctx, src, end)
		}
		b.stageEnded(mark, end, reached)
		if !reached {
			return
		}
	}
}
