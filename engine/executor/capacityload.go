package executor

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// capacityLoad applies a capacity search's load: an arrival rate (open
// model) or looping VUs (closed model). Its methods other than progress
// are called from the search's goroutine only.
type capacityLoad interface {
	prepare() error
	initialVUs() int
	start(ctx context.Context)
	// halt stops applying the load (a rate's scheduler) before the phase
	// changes, so no arrival is labelled twice.
	halt()
	// apply (re)starts the load at level load; a rate restarts its
	// arrivals so that one falls at windowStart.
	apply(ctx context.Context, load float64, windowStart time.Time) error
	// pause stops applying the load between probes, letting the
	// iterations running finish (canceled after grace); apply resumes it.
	pause(grace time.Duration)
	// running counts the iterations running, and arrivals waiting for a
	// VU; safe for concurrent use.
	running() int
	// stop ends the load: the iterations still running get GracefulStop.
	stop()
	progress(st *ScenarioStatus)
}

// probeHorizon is the length of a probe's arrival schedule: far beyond any
// probe, which ends its schedule itself.
const probeHorizon = 1000 * time.Hour

// rateLoad is a search of arrival rates: each probe's arrivals, from the
// scenario's arrival process at a constant rate, go to the scenario's VUs
// (openPool: the free list, drops, growth up to max_vus). Arrivals in a
// window that find no free VU are marked dropped in the window's stage;
// those of warmups and drains are only counted in the status.
type rateLoad struct {
	c    *capacityRun
	pool *openPool

	cancel context.CancelFunc // stops the current scheduler; nil when none
	halted chan struct{}      // closes when it has stopped
}

func (d *rateLoad) prepare() error {
	if d.c.sc.MaxVUs() < 1 {
		return fmt.Errorf("scenario %q: a capacity search of rates needs VUs: set pre_allocated_vus or max_vus", d.c.sc.Name)
	}
	_, err := d.arrivals(d.c.cs.Start, "check")
	return err
}

// initialVUs is the pre-allocated VUs; more are made up to max_vus.
func (d *rateLoad) initialVUs() int { return max(d.c.sc.PreAllocatedVUs, 0) }

func (d *rateLoad) start(ctx context.Context) { d.pool.start(ctx) }

func (d *rateLoad) halt() {
	if d.cancel != nil {
		d.cancel()
		<-d.halted
		d.cancel = nil
	}
}

// apply starts a scheduler of load arrivals per second: the warmup's from
// now, and the window's from windowStart on, so that constant arrivals
// fall on the window's start and a window holds exactly load × Window of
// them.
func (d *rateLoad) apply(ctx context.Context, load float64, windowStart time.Time) error {
	seed := d.c.phase.Load().stage
	var legs []arrivalLeg
	if now := runclock.Now(); windowStart.After(now) {
		gen, err := d.arrivals(load, seed+" warmup")
		if err != nil {
			return err
		}
		legs = append(legs, arrivalLeg{gen: gen, origin: now, until: windowStart})
	}
	gen, err := d.arrivals(load, seed)
	if err != nil {
		return err
	}
	legs = append(legs, arrivalLeg{gen: gen, origin: windowStart})
	sctx, cancel := context.WithCancel(ctx)
	d.cancel, d.halted = cancel, make(chan struct{})
	go d.schedule(sctx, legs)
	return nil
}

// arrivalLeg is a stretch of one generator's arrivals from origin, up to
// until (zero: no end).
type arrivalLeg struct {
	gen           *arrivals
	origin, until time.Time
}

// arrivals is a generator of load arrivals per second with the scenario's
// arrival process, seeded by the run's seed and name.
func (d *rateLoad) arrivals(load float64, name string) (*arrivals, error) {
	sc := d.c.sc
	one := plan.Scenario{
		Name: sc.Name + "/" + name, Executor: plan.ExecutorConstantArrivalRate, TimeUnit: time.Second,
		StartRate: load, Arrival: sc.Arrival, Burstiness: sc.Burstiness,
		Stages: []plan.Stage{{Name: name, Rate: load, Duration: probeHorizon}},
	}
	p, err := newRateProfile(one)
	if err != nil {
		return nil, err
	}
	a, err := newArrivals(p, one, d.c.eng.plan.Seed)
	if err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	return a, nil
}

// schedule dispatches the legs' arrivals, each at its time, until ctx ends.
func (d *rateLoad) schedule(ctx context.Context, legs []arrivalLeg) {
	defer close(d.halted)
	s := newSleeper()
	defer s.stop()
	for _, l := range legs {
		for {
			a, ok := l.gen.next()
			at := l.origin.Add(a.at)
			if !ok || !l.until.IsZero() && !at.Before(l.until) {
				break
			}
			if !s.until(ctx, at) {
				return
			}
			d.dispatch(at)
		}
	}
}

// dispatch hands the iteration due at at to the pool. A dropped one is
// marked in the sink only in a window; the pool counts every drop.
func (d *rateLoad) dispatch(at time.Time) {
	stage, warmup, win := d.c.phase.Load().label(at)
	sc := d.c.sc
	j := openJob{it: engine.Iteration{Scenario: sc.Name, Stage: stage, Exec: sc.Exec, Warmup: warmup, Scheduled: at},
		dropped: ignoreDrop}
	if win != nil {
		j.then, j.dropped = win.then, win.dropped
	}
	d.pool.dispatch(j)
}

// ignoreDrop is the drop hook of warmup and drain iterations: counted in
// the pool's status only.
func ignoreDrop(engine.Iteration, string) {}

// pause stops the scheduler; the pool's iterations run on to their end.
func (d *rateLoad) pause(time.Duration) { d.halt() }

func (d *rateLoad) running() int { return d.pool.inFlight() }

func (d *rateLoad) stop() {
	d.halt()
	d.pool.stop(d.c.sc.GracefulStop)
}

func (d *rateLoad) progress(st *ScenarioStatus) { d.pool.progress(st) }

// vusLoad is a search of VUs: slots as in the closed model, activated and
// deactivated between probes (made when a probe needs more VUs than
// there are, before its warmup), each labelling an iteration by the
// moment it starts.
type vusLoad struct {
	c     *capacityRun
	ctx   context.Context
	slots []*slot
	wg    sync.WaitGroup

	active    atomic.Int32
	allocated atomic.Int32
	busy      atomic.Int32 // iterations running
}

func (d *vusLoad) prepare() error { return nil }

// initialVUs is the first probe's VUs.
func (d *vusLoad) initialVUs() int {
	return int(max(min(math.Round(d.c.cs.Start), math.Floor(d.c.cs.Max)), 1))
}

func (d *vusLoad) start(ctx context.Context) {
	d.ctx = ctx
	for _, v := range d.c.vus {
		d.add(v)
	}
}

func (d *vusLoad) add(v *vuHandle) {
	s := newSlot(v, d.iterateOnce)
	d.slots = append(d.slots, s)
	d.allocated.Add(1)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		s.loop()
	}()
}

func (d *vusLoad) halt() {}

// apply activates load VUs, making those missing.
func (d *vusLoad) apply(ctx context.Context, load float64, _ time.Time) error {
	n := int(load)
	if k := n - len(d.slots); k > 0 {
		vus, err := d.c.eng.newVUs(ctx, k)
		if err != nil {
			return err
		}
		for _, v := range vus {
			d.add(v)
		}
	}
	ramp := &GracefulStopError{Scenario: d.c.sc.Name, Option: "graceful_ramp_down", Grace: d.c.sc.GracefulRampDown}
	d.active.Store(int32(setActive(ctx, d.slots, n, ramp)))
	return nil
}

// iterateOnce runs one iteration of a's VU v, labelled by its start.
func (d *vusLoad) iterateOnce(a *activation, v *vuHandle) {
	d.busy.Add(1)
	defer d.busy.Add(-1)
	stage, warmup, win := d.c.phase.Load().label(runclock.Now())
	sc := d.c.sc
	d.c.eng.iterate(a.ctx, a.stop, v, engine.Iteration{Scenario: sc.Name, Stage: stage, Exec: sc.Exec, Warmup: warmup})
	if win != nil {
		win.leave()
	}
}

// pause deactivates every VU: each ends its iteration, canceled after
// grace.
func (d *vusLoad) pause(grace time.Duration) {
	stop := &GracefulStopError{Scenario: d.c.sc.Name, Option: "idle_timeout", Grace: grace}
	d.active.Store(int32(setActive(d.ctx, d.slots, 0, stop)))
}

func (d *vusLoad) running() int { return int(d.busy.Load()) }

func (d *vusLoad) stop() {
	if d.ctx != nil {
		stop := &GracefulStopError{Scenario: d.c.sc.Name, Option: "graceful_stop", Grace: d.c.sc.GracefulStop}
		setActive(d.ctx, d.slots, 0, stop)
	}
	d.active.Store(0)
	for _, s := range d.slots {
		close(s.acts)
	}
	d.wg.Wait()
}

func (d *vusLoad) progress(st *ScenarioStatus) {
	st.ActiveVUs = int(d.active.Load())
	st.BusyVUs = st.ActiveVUs
	st.AllocatedVUs = int(d.allocated.Load())
}
