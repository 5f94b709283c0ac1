package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
)

// openPool is the VUs of an open-model scenario (arrival rate, trace, a
// capacity search of rates) and the way iterations reach them. A scheduler
// hands each iteration, at its intended start, to an idle VU; when none is
// idle the iteration is dropped and counted — never delayed, which would
// hide the server's slowness (coordinated omission) — and one more VU is
// made in the background, up to the cap.
//
// One goroutine at a time dispatches (the scheduler): it alone sends on
// grow, and it calls stop after its last dispatch. Workers never dispatch;
// a job's then hook may hand its own VU the next job instead.
type openPool struct {
	b     *scenarioBase
	max   int           // the segment's cap
	stage func() string // the stage a VU that cannot be made is reported in

	ictx   context.Context // iterations' context, canceled after graceful stop
	cancel context.CancelCauseFunc
	// stopping closes when the schedule has ended: iterations still running
	// are in their graceful stop (engine.WithStopping).
	stopping chan struct{}

	free        freeList
	grow        chan struct{} // asks the grower for one more VU
	grown       <-chan struct{}
	stopGrowing context.CancelFunc
	workers     sync.WaitGroup

	mu   sync.Mutex
	pool []*openVU // every VU of the scenario; grows while running

	allocated atomic.Int32
	busy      atomic.Int32
	dropped   atomic.Int64
}

// openVU is a VU of an open-model scenario with its own job channel, so
// handing it an iteration wakes exactly that VU. prev, next and free are
// the free list's, guarded by its mutex.
type openVU struct {
	v    *vuHandle
	jobs chan openJob

	prev, next *openVU
	free       bool
}

// openJob is one iteration handed to a VU: it has Scenario, Stage, Exec
// and Scheduled set. then, when set, runs on the VU's goroutine once the
// iteration has ended; it may return a job to run next on the same VU
// (a session's next record), which keeps the VU busy.
type openJob struct {
	it   engine.Iteration
	then func(w *openVU, it engine.Iteration) (openJob, bool)
}

// newOpenPool returns the pool of b's scenario; stage names the stage a
// failed VU init is reported in.
func newOpenPool(b *scenarioBase, stage func() string) *openPool {
	return &openPool{b: b, stage: stage}
}

// start runs the scenario's VUs as workers, all idle, and the grower,
// which may add VUs up to the segment's share of the cap.
func (p *openPool) start(ctx context.Context) {
	vus := p.b.vus
	p.max = max(p.b.eng.seg.Share(p.b.sc.MaxVUs()), len(vus))
	p.ictx, p.cancel = context.WithCancelCause(ctx)
	p.stopping = make(chan struct{})
	p.grow = make(chan struct{}, 1)
	for _, v := range vus {
		p.addWorker(v)
	}
	gctx, stopGrowing := context.WithCancel(ctx)
	p.stopGrowing = stopGrowing
	p.grown = p.grower(gctx)
}

// stop ends the schedule, called by the dispatcher after its last
// dispatch: iterations still running may finish within grace, then are
// canceled. It returns once every worker has stopped.
func (p *openPool) stop(grace time.Duration) {
	close(p.stopping)
	p.stopGrowing()
	close(p.grow)
	<-p.grown
	p.mu.Lock()
	for _, w := range p.pool {
		close(w.jobs)
	}
	p.mu.Unlock()
	sc := p.b.sc
	drain(waitDone(&p.workers), p.cancel, grace, &GracefulStopError{Scenario: sc.Name, Option: "graceful_stop", Grace: grace})
	p.cancel(nil)
}

// dispatch hands j to an idle VU — prefer, when it is idle — and returns
// that VU. It returns nil when no VU was idle: the iteration is dropped,
// counted in the status (the caller marks it in the sink with markDrop),
// and one more VU is asked for.
func (p *openPool) dispatch(j openJob, prefer *openVU) *openVU {
	w := p.free.take(prefer)
	if w == nil {
		p.dropped.Add(1)
		if int(p.allocated.Load()) < p.max {
			select {
			case p.grow <- struct{}{}:
			default: // a VU is already being made
			}
		}
		return nil
	}
	p.busy.Add(1)
	w.jobs <- j
	return w
}

// markDrop records in the sink an iteration of stage due at at that was
// dropped.
func (p *openPool) markDrop(stage string, at time.Time) {
	p.b.eng.sink.Dropped(engine.DropMark{Scenario: p.b.sc.Name, Stage: stage, Scheduled: at})
}

// progress fills the pool's part of a status snapshot.
func (p *openPool) progress(st *ScenarioStatus) {
	st.BusyVUs = int(p.busy.Load())
	st.ActiveVUs = st.BusyVUs
	st.AllocatedVUs = int(p.allocated.Load())
	st.Dropped = p.dropped.Load()
}

// addWorker starts v's goroutine and puts it on the free list.
func (p *openPool) addWorker(v *vuHandle) {
	w := &openVU{v: v, jobs: make(chan openJob, 1)}
	p.mu.Lock()
	p.pool = append(p.pool, w)
	p.mu.Unlock()
	p.allocated.Add(1)
	p.workers.Add(1)
	go p.work(w)
	p.free.push(w)
}

// work runs the iterations handed to w until its job channel closes.
func (p *openPool) work(w *openVU) {
	defer p.workers.Done()
	for j := range w.jobs {
		for more := true; more; {
			p.b.eng.iterate(p.ictx, p.stopping, w.v, j.it)
			more = false
			if j.then != nil {
				j, more = j.then(w, j.it)
			}
		}
		p.busy.Add(-1)
		p.free.push(w)
	}
}

// grower makes one VU per request on p.grow, one at a time as in k6, until
// p.grow closes; the returned channel closes when it has stopped.
func (p *openPool) grower(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		failed := false
		for range p.grow {
			if failed || int(p.allocated.Load()) >= p.max {
				continue
			}
			v, err := p.b.eng.newVU(ctx, p.b.eng.nextVUID())
			if err != nil {
				failed = p.growFailed(ctx, err)
				continue
			}
			p.addWorker(v)
		}
	}()
	return done
}

// growFailed records a VU that could not be made (unless the scenario was
// ending anyway) and reports whether growing should stop.
func (p *openPool) growFailed(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	p.b.eng.sink.IterationError(engine.IterationError{Scenario: p.b.sc.Name, Stage: p.stage(), Message: err.Error()})
	return true
}

// freeList is the idle VUs, oldest first, so load spreads over every VU
// as a channel's queue would spread it; unlike a channel it can also give
// out one VU in particular (a session's own). Safe for concurrent use.
type freeList struct {
	mu         sync.Mutex
	head, tail *openVU
}

// push puts w, which must not be on the list, at its end.
func (l *freeList) push(w *openVU) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.prev, w.next, w.free = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
}

// take removes and returns prefer when it is idle, else the VU idle the
// longest; nil when none is.
func (l *freeList) take(prefer *openVU) *openVU {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.head
	if prefer != nil && prefer.free {
		w = prefer
	}
	if w == nil {
		return nil
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next, w.free = nil, nil, false
	return w
}

// waitDone returns a channel closed once wg's count reaches zero.
func waitDone(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
