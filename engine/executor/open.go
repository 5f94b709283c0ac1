package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/runclock"
)

// PoolWait bounds how long an open-model arrival that finds every VU busy
// waits for a VU while the pool is still growing. Its schedule lag shows
// the wait; past it the arrival is dropped (engine.DropGrowing). At
// max_vus an arrival never waits: it is dropped at once
// (engine.DropMaxVUs), as k6 does, since no VU is coming.
const PoolWait = 100 * time.Millisecond

// Pool growth: the pool keeps idle VUs beyond the busy ones — the larger
// of poolMinSpare and poolSpareShare of the busy count — so that a load
// that grows finds VUs made before it needs them; it makes up to
// poolMakers VUs at a time when the gap is large.
const (
	poolMinSpare   = 2
	poolSpareShare = 0.10
	poolMakers     = 4
)

// openPool is the VUs of an open-model scenario (arrival rate, trace, a
// capacity search of rates) and the way iterations reach them. Each
// iteration goes, at its intended start, to an idle VU; when none is idle
// it waits for one (at most PoolWait) while the pool is below its cap, and
// is otherwise dropped and counted — never held longer, which would hide
// the server's slowness (coordinated omission). A grower keeps a margin of
// idle VUs ahead of the busy ones, up to the cap.
//
// dispatch is safe for concurrent use until stop; workers never dispatch:
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

	wake        chan struct{} // asks the grower to look at the margin
	grown       <-chan struct{}
	stopGrowing context.CancelFunc
	makers      sync.WaitGroup
	workers     sync.WaitGroup

	mu      sync.Mutex // guards what follows
	free    freeList
	waiting waitQueue
	expiry  *time.Timer // drops the head of waiting at its deadline
	pool    []*openVU   // every VU of the scenario; grows while running
	making  int         // VUs being made
	failed  bool        // making a VU failed: the pool grows no more
	closed  bool
	stats   PoolStats

	allocated atomic.Int32
	busy      atomic.Int32
	dropped   atomic.Int64
}

// PoolStats is how an open-model scenario's VU pool fared: the VUs it
// made and how long each took, the arrivals that waited for a VU being
// made, and its drops by reason.
type PoolStats struct {
	Scenario        string
	PreAllocatedVUs int // the segment's share
	MaxVUs          int // the segment's share of max_vus
	// Made counts the VUs the scenario had in the end; Grown those made
	// while it ran, beyond the pre-allocated ones.
	Made, Grown int
	// InitTotal and InitMax are the time the runner took to make the
	// scenario's VUs (the script's top level), in all and at most.
	InitTotal, InitMax time.Duration
	// Waited counts arrivals that found every VU busy and got a VU within
	// PoolWait; WaitMax is the longest of those waits.
	Waited  int64
	WaitMax time.Duration
	// DroppedMaxVUs, DroppedGrowing, DroppedVUFailed, DroppedStopped and
	// DroppedParent count the drops by engine.DropMark.Reason; their sum
	// is every drop.
	DroppedMaxVUs, DroppedGrowing, DroppedVUFailed, DroppedStopped, DroppedParent int64
}

// InitMean is the mean time a VU of the scenario took to make.
func (s PoolStats) InitMean() time.Duration {
	if s.Made == 0 {
		return 0
	}
	return s.InitTotal / time.Duration(s.Made)
}

// openVU is a VU of an open-model scenario with its own job channel, so
// handing it an iteration wakes exactly that VU. prev, next and free are
// the free list's, guarded by the pool's mutex.
type openVU struct {
	v    *vuHandle
	jobs chan openJob

	prev, next *openVU
	free       bool
}

// openJob is one iteration handed to a VU: it has Scenario, Stage, Exec
// and Scheduled set. then, when set, runs on the VU's goroutine once the
// iteration has ended; it may return a job to run next on the same VU
// (a session's next record), which keeps the VU busy. dropped, when set,
// replaces marking a dropped iteration in the sink (the pool counts it
// either way); it may run on any goroutine, never under the pool's lock.
type openJob struct {
	it      engine.Iteration
	then    func(w *openVU, it engine.Iteration) (openJob, bool)
	dropped func(it engine.Iteration, reason string)
	prefer  *openVU // the VU to give it to when that one is idle
}

// newOpenPool returns the pool of b's scenario; stage names the stage a
// failed VU init is reported in.
func newOpenPool(b *scenarioBase, stage func() string) *openPool {
	return &openPool{b: b, stage: stage}
}

// start runs the scenario's VUs as workers, all idle, and the grower,
// which keeps a margin of idle VUs up to the segment's share of the cap.
func (p *openPool) start(ctx context.Context) {
	vus := p.b.vus
	p.max = max(p.b.eng.seg.Share(p.b.sc.MaxVUs()), len(vus))
	p.ictx, p.cancel = context.WithCancelCause(ctx)
	p.stopping = make(chan struct{})
	p.wake = make(chan struct{}, 1)
	p.stats = PoolStats{Scenario: p.b.sc.Name, PreAllocatedVUs: len(vus), MaxVUs: p.max}
	p.mu.Lock()
	for _, v := range vus {
		p.addLocked(v)
	}
	p.mu.Unlock()
	gctx, stopGrowing := context.WithCancel(ctx)
	p.stopGrowing = stopGrowing
	p.grown = p.grower(gctx)
	p.poke()
}

// stop ends the schedule, called after the last dispatch: arrivals still
// waiting for a VU get the rest of their wait, iterations still running
// may finish within grace, then are canceled. It returns once every
// worker has stopped.
func (p *openPool) stop(grace time.Duration) {
	p.awaitWaiting()
	close(p.stopping)
	p.stopGrowing()
	<-p.grown
	p.makers.Wait()
	p.mu.Lock()
	p.closed = true
	if p.expiry != nil {
		p.expiry.Stop()
	}
	left := p.waiting.drain()
	for _, w := range p.pool {
		close(w.jobs)
	}
	p.mu.Unlock()
	p.dropAll(left)
	sc := p.b.sc
	drain(waitDone(&p.workers), p.cancel, grace, &GracefulStopError{Scenario: sc.Name, Option: "graceful_stop", Grace: grace})
	p.cancel(nil)
}

// awaitWaiting lets the arrivals waiting for a VU have the rest of their
// wait: until the last one's deadline, or until none waits.
func (p *openPool) awaitWaiting() {
	for {
		p.mu.Lock()
		last, ok := p.waiting.lastDeadline()
		p.mu.Unlock()
		if !ok || !sleepUntil(p.ictx, last) {
			return
		}
		p.expire()
	}
}

// dispatch hands j to an idle VU (j.prefer, when it is idle); when none
// is idle, j waits for a VU being made if the pool can still grow, and is
// dropped otherwise.
//
// After stop has closed the workers, a job (a trace session's next record,
// sent as the one before it is dropped) is dropped as engine.DropStopped.
func (p *openPool) dispatch(j openJob) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.drop(j, engine.DropStopped)
		return
	}
	if w := p.free.take(j.prefer); w != nil {
		p.busy.Add(1)
		short := p.shortLocked()
		p.mu.Unlock()
		w.jobs <- j
		if short {
			p.poke()
		}
		return
	}
	if reason := p.noWaitLocked(); reason != "" {
		p.mu.Unlock()
		p.drop(j, reason)
		return
	}
	now := runclock.Now()
	p.waiting.push(waiter{job: j, since: now, deadline: now.Add(PoolWait)})
	p.armLocked()
	p.mu.Unlock()
	p.poke()
}

// noWaitLocked says why an arrival finding no idle VU cannot wait for
// one: the pool is at its cap (counting the VUs being made that earlier
// waiters have not claimed), or can grow no more; "" when it can wait.
func (p *openPool) noWaitLocked() string {
	switch {
	case p.waiting.len() < p.making:
		return "" // a VU being made is unclaimed
	case p.failed:
		return engine.DropVUFailed
	case int(p.allocated.Load())+p.making >= p.max:
		return engine.DropMaxVUs
	}
	return ""
}

// drop counts j as dropped for reason and marks it (j.dropped, or the
// sink).
func (p *openPool) drop(j openJob, reason string) {
	p.count(reason)
	if j.dropped != nil {
		j.dropped(j.it, reason)
		return
	}
	p.b.markDrop(j.it.Stage, j.it.Scheduled, reason)
}

// count counts one drop for reason.
func (p *openPool) count(reason string) {
	p.dropped.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch reason {
	case engine.DropMaxVUs:
		p.stats.DroppedMaxVUs++
	case engine.DropVUFailed:
		p.stats.DroppedVUFailed++
	case engine.DropStopped:
		p.stats.DroppedStopped++
	case engine.DropParent:
		p.stats.DroppedParent++
	default:
		p.stats.DroppedGrowing++
	}
}

func (p *openPool) dropAll(ws []waiter) {
	if len(ws) == 0 {
		return
	}
	reason := p.expiredReason()
	for _, w := range ws {
		p.drop(w.job, reason)
	}
}

// expiredReason is why an arrival that waited its whole PoolWait is
// dropped.
func (p *openPool) expiredReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return engine.DropVUFailed
	}
	return engine.DropGrowing
}

// armLocked sets the expiry timer to the head waiter's deadline.
func (p *openPool) armLocked() {
	d, ok := p.waiting.firstDeadline()
	if !ok {
		return
	}
	wait := time.Until(d)
	if p.expiry == nil {
		p.expiry = time.AfterFunc(wait, p.expire)
		return
	}
	p.expiry.Reset(wait)
}

// expire drops the waiters whose wait is over and re-arms the timer.
func (p *openPool) expire() {
	p.mu.Lock()
	gone := p.waiting.expired(runclock.Now())
	if !p.closed {
		p.armLocked()
	}
	p.mu.Unlock()
	p.dropAll(gone)
}

// markDrop records in the sink an iteration of stage due at at that was
// dropped for reason.
func (b *scenarioBase) markDrop(stage string, at time.Time, reason string) {
	b.eng.sink.Dropped(engine.DropMark{Scenario: b.sc.Name, Stage: stage, Scheduled: at, Reason: reason})
}

// progress fills the pool's part of a status snapshot.
func (p *openPool) progress(st *ScenarioStatus) {
	st.BusyVUs = int(p.busy.Load())
	st.ActiveVUs = st.BusyVUs
	st.AllocatedVUs = int(p.allocated.Load())
	st.Dropped = p.dropped.Load()
}

// Pools returns how the VU pool of each open-model scenario (arrival
// rate, trace, a capacity search of rates) fared, in plan order: those
// that have started. Safe for concurrent use; final once Run has returned.
func (e *Engine) Pools() []PoolStats {
	var out []PoolStats
	for _, s := range e.scenarios {
		if h, ok := s.(interface{ vuPool() *openPool }); ok && h.vuPool() != nil {
			if st := h.vuPool().poolStats(); st.Scenario != "" {
				out = append(out, st)
			}
		}
	}
	return out
}

func (r *arrivalRateRun) vuPool() *openPool { return r.pool }
func (r *traceRun) vuPool() *openPool       { return r.pool }

// vuPool is nil for a search of VUs, which has no pool.
func (c *capacityRun) vuPool() *openPool {
	if d, ok := c.load.(*rateLoad); ok {
		return d.pool
	}
	return nil
}

// inFlight counts the iterations running and the arrivals waiting for a
// VU.
func (p *openPool) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.busy.Load()) + p.waiting.len()
}

// poolStats is a copy of the pool's figures.
func (p *openPool) poolStats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Made = len(p.pool)
	s.Grown = max(s.Made-s.PreAllocatedVUs, 0)
	return s
}

// addLocked starts v's goroutine and hands it the oldest waiting
// arrival, or puts it on the free list.
func (p *openPool) addLocked(v *vuHandle) {
	w := &openVU{v: v, jobs: make(chan openJob, 1)}
	p.pool = append(p.pool, w)
	p.stats.InitTotal += v.took
	p.stats.InitMax = max(p.stats.InitMax, v.took)
	p.allocated.Add(1)
	p.workers.Add(1)
	go p.work(w)
	if j, ok := p.claimLocked(); ok {
		p.busy.Add(1)
		w.jobs <- j
		return
	}
	p.free.push(w)
}

// claimLocked takes the oldest waiter whose wait is not over, counting
// its wait.
func (p *openPool) claimLocked() (openJob, bool) {
	wt, ok := p.waiting.pop()
	if !ok {
		return openJob{}, false
	}
	waited := time.Since(wt.since)
	p.stats.Waited++
	p.stats.WaitMax = max(p.stats.WaitMax, waited)
	return wt.job, true
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
			if !more {
				j, more = p.release(w)
			}
		}
	}
}

// release is w's next job: the oldest arrival waiting for a VU, if any;
// else w goes back on the free list.
func (p *openPool) release(w *openVU) (openJob, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		if j, ok := p.claimLocked(); ok {
			return j, true
		}
	}
	p.busy.Add(-1)
	p.free.push(w)
	return openJob{}, false
}

// poke asks the grower to look at the margin.
func (p *openPool) poke() {
	select {
	case p.wake <- struct{}{}:
	default: // already asked
	}
}

// grower makes VUs, up to poolMakers at a time, whenever the pool's idle
// and coming VUs fall short of the margin (toMake), until ctx ends; the
// returned channel closes when it has stopped.
func (p *openPool) grower(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
			for range p.toMake() {
				p.makers.Add(1)
				go p.make(ctx)
			}
		}
	}()
	return done
}

// toMake is how many VUs to start making now, counted as being made: the
// pool's gap, poolMakers at a time.
func (p *openPool) toMake() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed || p.closed {
		return 0
	}
	n := min(p.gapLocked(), poolMakers-p.making)
	if n <= 0 {
		return 0
	}
	p.making += n
	return n
}

// gapLocked is how many VUs the pool lacks: the busy VUs and the waiting
// arrivals, plus the margin, less those it has and is making, within the
// cap.
func (p *openPool) gapLocked() int {
	busy := int(p.busy.Load())
	want := min(busy+spare(busy)+p.waiting.len(), p.max)
	return want - int(p.allocated.Load()) - p.making
}

// shortLocked reports whether the grower has VUs to make.
func (p *openPool) shortLocked() bool { return !p.failed && p.gapLocked() > 0 }

// spare is the margin of idle VUs kept beside busy ones.
func spare(busy int) int {
	return max(poolMinSpare, int(poolSpareShare*float64(busy)+0.999))
}

// make makes one VU and adds it to the pool, or records why it could not.
func (p *openPool) make(ctx context.Context) {
	defer p.makers.Done()
	v, err := p.b.eng.newVU(ctx, p.b.eng.nextVUID())
	p.mu.Lock()
	p.making--
	if err != nil {
		report := !p.failed && ctx.Err() == nil && !errors.Is(err, context.Canceled)
		p.failed = p.failed || report
		p.mu.Unlock()
		if report {
			p.b.eng.sink.IterationError(engine.IterationError{Scenario: p.b.sc.Name, Stage: p.stage(), Message: err.Error()})
		}
		return
	}
	if p.closed {
		p.mu.Unlock()
		return // made as the scenario ended: the engine closes it
	}
	p.addLocked(v)
	p.mu.Unlock()
	p.poke()
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
