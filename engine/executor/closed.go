package executor

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// closedRun drives one closed-model scenario (constant-vus, ramping-vus):
// a slot per VU, activated and deactivated by a single controller goroutine
// following the stage schedule.
type closedRun struct {
	*scenarioBase
	slots  []*slot
	ends   []time.Duration // offset from the start at which each stage ends
	active atomic.Int32    // VUs currently activated
}

func (r *closedRun) prepare() error { return r.needStages() }

// initialVUs is the segment's share of the most VUs the scenario holds.
func (r *closedRun) initialVUs() int { return r.eng.seg.Share(max(r.sc.MaxVUs(), 0)) }

func (r *closedRun) progress(st *ScenarioStatus) {
	st.ActiveVUs = int(r.active.Load())
	st.BusyVUs = st.ActiveVUs
	st.AllocatedVUs = r.initialVUs()
}

// run executes the scenario's stages and returns once every VU is idle.
func (r *closedRun) run(ctx context.Context) {
	var wg sync.WaitGroup
	r.ends = stageEnds(r.sc.Stages)
	r.slots = make([]*slot, len(r.vus))
	for i, v := range r.vus {
		r.slots[i] = newSlot(v, r.iterateOnce)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.slots[i].loop()
		}()
	}
	at := r.begin()
	seg := r.eng.seg
	r.setActive(ctx, seg.Share(r.sc.StartVUs), r.rampDown())
	prev := r.sc.StartVUs // the whole plan's count; the segment holds its share
	for i, st := range r.sc.Stages {
		if ctx.Err() != nil {
			break
		}
		mark := r.stageStarted(i, at)
		prev = r.ramp(ctx, prev, st, at)
		r.setActive(ctx, seg.Share(prev), r.rampDown())
		at = at.Add(st.Duration)
		r.stageEnded(mark, at, sleepUntil(ctx, at))
	}
	r.stage.Store(int32(len(r.sc.Stages)))
	r.done.Store(true)
	r.setActive(ctx, 0, r.stop())
	for _, s := range r.slots {
		close(s.acts)
	}
	wg.Wait()
}

// stageEnds is the offset at which each stage ends.
func stageEnds(stages []plan.Stage) []time.Duration {
	ends := make([]time.Duration, len(stages))
	var at time.Duration
	for i, st := range stages {
		at += max(st.Duration, 0)
		ends[i] = at
	}
	return ends
}

// stageNow is the stage an iteration starting now belongs to: the one
// whose scheduled window holds now, so a controller that wakes late does
// not lend its stage's label to iterations of the next window.
func (r *closedRun) stageNow() string {
	off := time.Since(r.startAt)
	i := sort.Search(len(r.ends), func(i int) bool { return r.ends[i] > off })
	// Never behind the controller, which only moves on once a window ends.
	i = max(i, int(r.stage.Load()))
	return r.sc.Stages[min(i, len(r.sc.Stages)-1)].Name
}

// ramp moves the whole plan's VU count from prev toward the stage's
// target one VU at a time, each step at its exact time on the linear
// ramp, so no polling, and returns the count reached. A ramp longer than
// its stage stops at the last step within the stage (engine.LoadOf). A
// segment wakes only for the steps that add or remove one of its own VUs,
// so the segments together step exactly as the whole plan does.
func (r *closedRun) ramp(ctx context.Context, prev int, st plan.Stage, start time.Time) int {
	delta := st.Target - prev
	if st.Ramp <= 0 || delta == 0 {
		return st.Target
	}
	seg := r.eng.seg
	steps := max(delta, -delta)
	n := prev
	for k := 1; k <= steps; k++ {
		off := st.Ramp * time.Duration(k) / time.Duration(steps)
		if off > st.Duration {
			return n
		}
		next := prev + k
		if delta < 0 {
			next = prev - k
		}
		if local := seg.Share(next); local != seg.Share(n) {
			if !sleepUntil(ctx, start.Add(off)) {
				return n
			}
			r.setActive(ctx, local, r.rampDown())
		}
		n = next
	}
	return n
}

// rampDown is how a VU removed by a smaller stage stops.
func (r *closedRun) rampDown() *GracefulStopError {
	return &GracefulStopError{Scenario: r.sc.Name, Option: "graceful_ramp_down", Grace: r.sc.GracefulRampDown}
}

// stop is how every VU stops at the scenario's end.
func (r *closedRun) stop() *GracefulStopError {
	return &GracefulStopError{Scenario: r.sc.Name, Option: "graceful_stop", Grace: r.sc.GracefulStop}
}

// setActive activates slots [0, n) and deactivates the rest; a deactivated
// VU finishes its iteration within grace, then is canceled. Only the
// controller goroutine calls it.
func (r *closedRun) setActive(ctx context.Context, n int, stop *GracefulStopError) {
	r.active.Store(int32(setActive(ctx, r.slots, n, stop)))
}

// iterateOnce runs one iteration of a's VU v, in the stage of its start.
func (r *closedRun) iterateOnce(a *activation, v *vuHandle) {
	r.eng.iterate(a.ctx, a.stop, v, engine.Iteration{Scenario: r.sc.Name, Stage: r.stageNow(), Exec: r.sc.Exec})
}

// setActive activates slots [0, n) and deactivates the rest, and returns
// how many are active; only a scenario's controller goroutine calls it.
func setActive(ctx context.Context, slots []*slot, n int, stop *GracefulStopError) int {
	n = min(max(n, 0), len(slots))
	for i, s := range slots {
		if i < n {
			s.activate(ctx)
		} else {
			s.deactivate(stop)
		}
	}
	return n
}

// activation is one period during which a slot's VU keeps iterating.
type activation struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   chan struct{}
}

// slot owns one VU for a closed-model scenario; iterate runs one of its
// iterations. Its fields other than acts are only touched by the
// controller goroutine.
type slot struct {
	vu      *vuHandle
	iterate func(a *activation, v *vuHandle)
	acts    chan *activation
	cur     *activation
}

func newSlot(v *vuHandle, iterate func(a *activation, v *vuHandle)) *slot {
	return &slot{vu: v, iterate: iterate, acts: make(chan *activation, 1)}
}

func (s *slot) activate(ctx context.Context) {
	if s.cur != nil {
		return
	}
	actx, cancel := context.WithCancelCause(ctx)
	s.cur = &activation{ctx: actx, cancel: cancel, stop: make(chan struct{})}
	// A pending activation the VU never picked up was already deactivated:
	// replace it, so this send never blocks the controller.
	select {
	case stale := <-s.acts:
		stale.cancel(nil)
	default:
	}
	s.acts <- s.cur
}

func (s *slot) deactivate(stop *GracefulStopError) {
	if s.cur == nil {
		return
	}
	close(s.cur.stop)
	cancel := s.cur.cancel
	if stop.Grace <= 0 {
		cancel(stop)
	} else {
		time.AfterFunc(stop.Grace, func() { cancel(stop) })
	}
	s.cur = nil
}

// loop runs iterations while the slot is active, until acts is closed.
func (s *slot) loop() {
	for a := range s.acts {
		for a.ctx.Err() == nil && !closed(a.stop) {
			s.iterate(a, s.vu)
		}
		a.cancel(nil)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
