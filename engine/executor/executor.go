// Package executor runs a plan: it initialises the VUs, runs setup and the
// warmup, then every scenario's stages — closed (VUs), open (arrival rate,
// trace replay), iteration-count executors or a capacity search — and
// finally teardown, marking each stage's measurement window and each
// iteration's start in the sink.
//
// Channels follow one rule, so none is ever closed under a sender: a
// channel with one sender is closed by that sender's goroutine after its
// last send (the controller closes each slot's acts; the scheduler's
// goroutine closes grow, and every VU's jobs once the grower has
// stopped); a channel many goroutines send on is never closed, and
// engine.Outbox is the way when one must be. (The open model's idle list
// is a list under a mutex, freeList, so that a session's own VU can be
// taken from it.) Stop signals are chan struct{} closed once by their
// owner and polled with closed.
package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
	"github.com/llmload/llmload/engine/stopping"
)

// WarmupStage is the stage label of warmup iterations.
const WarmupStage = "warmup"

// TeardownTimeout bounds teardown when the run's context has already ended.
const TeardownTimeout = 30 * time.Second

// Engine runs one plan, or the share of it that plan.Segment names (see
// share.go). Run is called once; Status is safe for concurrent
// use while Run is in progress.
type Engine struct {
	plan   plan.Plan
	seg    plan.Segment // plan.Segment: the share of the plan this engine runs
	runner engine.Runner
	sink   engine.Sink
	judge  capacity.Judge // decides capacity probes; set before Run
	queue  ServerQueue    // the server's queue, read between capacity probes; nil: not scraped
	gate   StartGate      // decides the load's start instead of plan.StartAt; nil: StartAt

	requestID  atomic.Int64
	vuID       atomic.Int64
	phase      atomic.Value // string
	warmupDone atomic.Int64
	scenarios  []scenario
	initial    []*vuHandle // made before load, in scenario order
	loadStart  atomic.Pointer[loadStart]

	mu  sync.Mutex
	all []*vuHandle // every VU made, closed when Run ends
}

// New prepares an Engine for p; nothing starts until Run.
func New(p plan.Plan, runner engine.Runner, sink engine.Sink) *Engine {
	e := &Engine{plan: p, seg: p.Segment, runner: runner, sink: sink}
	e.phase.Store(PhaseInit)
	for _, sc := range p.Scenarios {
		e.scenarios = append(e.scenarios, newScenario(sc, e))
	}
	return e
}

// Phases reported by Status.
const (
	PhaseInit   = "init"
	PhaseWarmup = "warmup"
	// PhaseWaiting: VUs, setup and warmup are done and the load is held
	// at the plan's start barrier (StartAt, --start-at).
	PhaseWaiting = "waiting"
	PhaseRunning = "running"
	PhaseDone    = "done"
)

// Run initialises the VUs (before any load, so script init never distorts
// timings), calls the runner's Setup if it has one, runs the warmup, then
// all scenarios concurrently, each from its start time, and finally
// Teardown — also after ctx ended. It returns an error when preparing the
// run fails; per-request and per-iteration failures are recorded in the
// sink. When ctx ends, in-flight iterations are canceled and Run returns
// ctx's error (joined with any teardown error) after every VU has stopped.
func (e *Engine) Run(ctx context.Context) error {
	defer e.phase.Store(PhaseDone)
	defer e.closeVUs()
	defer e.settleCapacity(ctx)
	for _, s := range e.scenarios {
		if err := s.prepare(); err != nil {
			return err
		}
	}
	if err := e.initVUs(ctx); err != nil {
		return err
	}
	lc, _ := e.runner.(engine.Lifecycle)
	if lc != nil {
		if err := lc.Setup(ctx); err != nil {
			return err
		}
	}
	err := e.load(ctx)
	if lc != nil {
		err = errors.Join(err, teardown(ctx, lc))
	}
	return err
}

// load runs the warmup, then every scenario.
func (e *Engine) load(ctx context.Context) error {
	if err := e.warmup(ctx, e.initial); err != nil {
		return err
	}
	planned, err := e.awaitStart(ctx)
	if err != nil {
		return err
	}
	e.phase.Store(PhaseRunning)
	// The result's instants lie on the run's timeline; the barrier's
	// lateness is a matter of true wall time, shared with other machines.
	start := runclock.Now()
	e.loadStart.Store(&loadStart{planned: planned, actual: time.Now()})
	var wg sync.WaitGroup
	for _, s := range e.scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := s.base()
			b.dueAt = start.Add(b.sc.StartTime)
			b.due.Store(b.dueAt.UnixNano())
			if sleepUntil(ctx, b.dueAt) {
				s.run(ctx)
			}
			b.stage.Store(int32(len(b.sc.Stages)))
			b.done.Store(true)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// StartGate decides when the load starts, once the VUs, setup and warmup
// are ready: a start barrier whose instant is found only then, such as
// engine/barrier's. An error other than ctx's ends the run before any
// load (Run returns it as a *StartError).
type StartGate func(ctx context.Context) (time.Time, error)

// StartError is Run's error when the StartGate refused to start the load:
// nothing was sent, so there is no run to report.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// SetStartGate makes g decide the load's start instead of the plan's
// StartAt. Call it before Run.
func (e *Engine) SetStartGate(g StartGate) { e.gate = g }

// awaitStart holds the load until the plan's StartAt, or the instant the
// StartGate names, so segments on several machines start together; a
// barrier already passed (VU init or warmup outlasted it) starts at once,
// and the result tells how late. It returns the planned start (zero
// without a barrier), and ctx's error when the wait was cut short.
func (e *Engine) awaitStart(ctx context.Context) (time.Time, error) {
	at := e.plan.StartAt
	if at.IsZero() && e.gate == nil {
		return at, nil
	}
	e.phase.Store(PhaseWaiting)
	if e.gate != nil {
		var err error
		if at, err = e.gate(ctx); err != nil {
			if ctx.Err() != nil {
				return at, ctx.Err()
			}
			return at, &StartError{err}
		}
	}
	if !sleepUntil(ctx, at) {
		return at, ctx.Err()
	}
	return at, nil
}

// loadStart is when the load was planned to start and when it did.
type loadStart struct{ planned, actual time.Time }

// LoadStart returns when the load was planned to start (the plan's
// StartAt or the StartGate's instant; zero without either) and when it
// actually started; both are zero before the load starts. Safe for concurrent use.
func (e *Engine) LoadStart() (planned, actual time.Time) {
	if s := e.loadStart.Load(); s != nil {
		return s.planned, s.actual
	}
	return time.Time{}, time.Time{}
}

// teardown calls lc.Teardown, with a fresh bounded context when ctx has
// ended, so an interrupted run still cleans up.
func teardown(ctx context.Context, lc engine.Lifecycle) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
		defer cancel()
	}
	return lc.Teardown(ctx)
}

// vuHandle is a VU with the count of its iterations; owned by one goroutine at a time.
type vuHandle struct {
	id   int
	vu   engine.VU
	iter int64
	// took is how long the runner took to make the VU: the script's top
	// level, run once per VU.
	took time.Duration
}

// initVUs makes every scenario's initial VUs and hands them out.
func (e *Engine) initVUs(ctx context.Context) error {
	n := 0
	for _, s := range e.scenarios {
		n += s.initialVUs()
	}
	vus, err := e.newVUs(ctx, n)
	if err != nil {
		return err
	}
	e.initial = vus
	for _, s := range e.scenarios {
		k := s.initialVUs()
		s.base().vus, vus = vus[:k:k], vus[k:]
	}
	return nil
}

// newVUs makes n VUs concurrently, a few at a time.
func (e *Engine) newVUs(ctx context.Context, n int) ([]*vuHandle, error) {
	vus := make([]*vuHandle, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range vus {
		id := e.nextVUID()
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			vus[i], errs[i] = e.newVU(ctx, id)
		}()
	}
	wg.Wait()
	// One script error usually fails every VU the same way: report the first.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vus, ctx.Err()
}

// nextVUID is the id of the next VU made: the segment's next local id
// mapped to the whole plan's, so ids never collide across segments (the
// runner seeds each VU and offsets its pool cursors by it). Ids are
// therefore not dense within a segment. Safe for concurrent use.
func (e *Engine) nextVUID() int { return int(e.seg.Global(e.vuID.Add(1))) }

// newVU makes VU id and registers it for closing. Safe for concurrent use.
func (e *Engine) newVU(ctx context.Context, id int) (*vuHandle, error) {
	start := runclock.Now()
	vu, err := e.runner.NewVU(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("VU %d init: %w", id, err)
	}
	v := &vuHandle{id: id, vu: vu, took: time.Since(start)}
	e.mu.Lock()
	e.all = append(e.all, v)
	e.mu.Unlock()
	return v, nil
}

// closeVUs closes every VU made; called once every VU goroutine has ended.
func (e *Engine) closeVUs() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.all {
		v.vu.Close()
	}
	e.all = nil
}

// iterate runs one iteration on v, marking its start, and records a script
// error unless the error only says the iteration was canceled.
func (e *Engine) iterate(ctx context.Context, stop <-chan struct{}, v *vuHandle, it engine.Iteration) {
	ctx = stopping.With(ctx, stop)
	it.VUID = v.id
	it.Iteration = v.iter
	it.RequestID = e.seg.Global(e.requestID.Add(1)) // unique across segments
	v.iter++
	e.sink.IterationStarted(engine.IterationMark{
		Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup,
		Scheduled: it.Scheduled, Started: runclock.Now(),
	})
	err := v.vu.RunIteration(ctx, it)
	if err == nil {
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Cut off by the run's end or Ctrl-C: not the script's fault. Cut
		// off because it outlived its grace period: worth a line in the
		// summary, since an endless loop ends this way.
		var gs *GracefulStopError
		if !errors.As(context.Cause(ctx), &gs) {
			return
		}
		if !strings.Contains(err.Error(), gs.Error()) {
			err = fmt.Errorf("%w (%v)", err, gs)
		}
	}
	e.sink.IterationError(engine.IterationError{
		Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Message: err.Error(),
	})
}

// GracefulStopError is the cause given to an iteration canceled because it
// was still running when its grace period (graceful_stop at a scenario's
// end, graceful_ramp_down when its VU was removed) ran out.
type GracefulStopError struct {
	Scenario string
	Option   string // "graceful_stop" or "graceful_ramp_down"
	Grace    time.Duration
}

func (e *GracefulStopError) Error() string {
	return fmt.Sprintf("canceled: still running after scenario %s's %s (%v)", e.Scenario, e.Option, e.Grace)
}

// drain waits for done up to grace, then cancels the iterations still
// running with cause and waits for them to return.
func drain(done <-chan struct{}, cancel context.CancelCauseFunc, grace time.Duration, cause error) {
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
	cancel(cause)
	<-done
}

// sleepUntil waits for t or ctx's end; it reports whether t was reached.
func sleepUntil(ctx context.Context, t time.Time) bool { return stopping.Sleep(ctx, time.Until(t)) }
