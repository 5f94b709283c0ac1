package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
)

// arrivalRateRun drives an open-model scenario (constant-arrival-rate,
// ramping-arrival-rate). One scheduler goroutine sleeps until each intended
// start and hands the iteration to an idle VU; when none is idle the
// iteration is dropped and counted — never delayed, which would hide the
// server's slowness (coordinated omission) — and one more VU is made in the
// background, up to the scenario's cap.
type arrivalRateRun struct {
	*scenarioBase
	profile *rateProfile
	gen     *arrivals
	ictx    context.Context // iterations' context, canceled after graceful stop
	// stopping closes when the schedule has ended: iterations still running
	// are in their graceful stop (engine.WithStopping).
	stopping chan struct{}

	idle    chan *openVU  // the free list; its capacity holds every VU
	grow    chan struct{} // asks the grower for one more VU
	workers sync.WaitGroup

	mu   sync.Mutex
	pool []*openVU // every VU of the scenario; grows while running

	allocated atomic.Int32
	busy      atomic.Int32
	dropped   atomic.Int64
}

// openVU is a VU of an arrival-rate scenario with its own job channel, so
// handing it an iteration wakes exactly that VU.
type openVU struct {
	v    *vuHandle
	jobs chan arrivalJob
}

// arrivalJob is one iteration handed to a VU.
type arrivalJob struct {
	stage int
	at    time.Time
}

func (r *arrivalRateRun) prepare() error {
	if err := r.needStages(); err != nil {
		return err
	}
	if err := checkOpenSplit(r.sc, r.eng.seg); err != nil {
		return err
	}
	p, err := newRateProfile(r.sc)
	if err != nil {
		return err
	}
	r.profile = p
	r.gen, err = newArrivals(p, r.sc, r.eng.plan.Seed)
	return err
}

// initialVUs is only the (segment's share of the) pre-allocated VUs: the
// cap may be thousands, made on demand.
func (r *arrivalRateRun) initialVUs() int { return r.eng.seg.Share(max(r.sc.PreAllocatedVUs, 0)) }

// maxVUs is the segment's share of the cap.
func (r *arrivalRateRun) maxVUs() int { return max(r.eng.seg.Share(r.sc.MaxVUs()), len(r.vus)) }

func (r *arrivalRateRun) progress(st *ScenarioStatus) {
	st.BusyVUs = int(r.busy.Load())
	st.ActiveVUs = st.BusyVUs
	st.AllocatedVUs = int(r.allocated.Load())
	st.Dropped = r.dropped.Load()
	if start := r.start.Load(); start != 0 && !r.done.Load() {
		st.Rate = rateShare(r.eng.seg, r.profile.rateAt(time.Since(time.Unix(0, start))))
	}
}

// run schedules every arrival, then lets in-flight iterations finish within
// GracefulStop before canceling them.
func (r *arrivalRateRun) run(ctx context.Context) {
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.ictx = ictx
	r.stopping = make(chan struct{})
	r.idle = make(chan *openVU, r.maxVUs())
	r.grow = make(chan struct{}, 1)
	for _, v := range r.vus {
		r.addWorker(v)
	}
	gctx, stopGrowing := context.WithCancel(ctx)
	grown := r.grower(gctx)
	r.schedule(ctx)
	r.done.Store(true)
	close(r.stopping)
	stopGrowing()
	close(r.grow)
	<-grown
	r.mu.Lock()
	for _, w := range r.pool {
		close(w.jobs)
	}
	r.mu.Unlock()
	drain(waitDone(&r.workers), cancel, r.sc.GracefulStop, &GracefulStopError{Scenario: r.sc.Name, Option: "graceful_stop", Grace: r.sc.GracefulStop})
}

// schedule walks the stages, marking their windows, and dispatches each
// arrival at its intended time.
func (r *arrivalRateRun) schedule(ctx context.Context) {
	s := newSleeper()
	defer s.stop()
	start := r.begin()
	next, ok := r.next()
	for i := range r.sc.Stages {
		mark := r.stageStarted(i, start.Add(r.profile.stageStart(i)))
		for ok && next.stage == i {
			at := start.Add(next.at)
			if !s.until(ctx, at) {
				break
			}
			r.dispatch(i, at)
			next, ok = r.next()
		}
		end := start.Add(r.profile.stageEnds[i])
		reached := s.until(ctx, end)
		r.stageEnded(mark, end, reached)
		if !reached {
			return
		}
	}
}

// next is the segment's next arrival. Every segment draws the whole
// sequence, with the same seed, and keeps its own, so together they
// dispatch exactly the unsegmented schedule.
func (r *arrivalRateRun) next() (arrival, bool) {
	for {
		a, ok := r.gen.next()
		if !ok || r.eng.seg.Owns(a.seq) {
			return a, ok
		}
	}
}

// dispatch hands the iteration due at at to an idle VU, or drops it.
func (r *arrivalRateRun) dispatch(stage int, at time.Time) {
	select {
	case w := <-r.idle:
		r.busy.Add(1)
		w.jobs <- arrivalJob{stage: stage, at: at}
	default:
		r.dropped.Add(1)
		r.eng.sink.Dropped(engine.DropMark{Scenario: r.sc.Name, Stage: r.sc.Stages[stage].Name, Scheduled: at})
		if int(r.allocated.Load()) < r.maxVUs() {
			select {
			case r.grow <- struct{}{}:
			default: // a VU is already being made
			}
		}
	}
}

// addWorker starts v's goroutine and puts it on the free list.
func (r *arrivalRateRun) addWorker(v *vuHandle) {
	w := &openVU{v: v, jobs: make(chan arrivalJob, 1)}
	r.mu.Lock()
	r.pool = append(r.pool, w)
	r.mu.Unlock()
	r.allocated.Add(1)
	r.workers.Add(1)
	go r.work(w)
	r.idle <- w
}

// work runs the iterations handed to w until its job channel closes.
func (r *arrivalRateRun) work(w *openVU) {
	defer r.workers.Done()
	for j := range w.jobs {
		r.eng.iterate(r.ictx, r.stopping, w.v, engine.Iteration{
			Scenario: r.sc.Name, Stage: r.sc.Stages[j.stage].Name, Exec: r.sc.Exec, Scheduled: j.at,
		})
		r.busy.Add(-1)
		r.idle <- w
	}
}

// grower makes one VU per request on r.grow, one at a time as in k6, until
// r.grow closes; the returned channel closes when it has stopped.
func (r *arrivalRateRun) grower(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		failed := false
		for range r.grow {
			if failed || int(r.allocated.Load()) >= r.maxVUs() {
				continue
			}
			v, err := r.eng.newVU(ctx, r.eng.nextVUID())
			if err != nil {
				failed = r.growFailed(ctx, err)
				continue
			}
			r.addWorker(v)
		}
	}()
	return done
}

// growFailed records a VU that could not be made (unless the scenario was
// ending anyway) and reports whether growing should stop.
func (r *arrivalRateRun) growFailed(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return false
	}
	r.eng.sink.IterationError(engine.IterationError{Scenario: r.sc.Name, Stage: r.currentStage(), Message: err.Error()})
	return true
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
