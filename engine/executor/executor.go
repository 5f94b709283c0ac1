// Package executor runs a plan: it initialises the VUs, runs the warmup and
// then every scenario's stages, starting and stopping VUs on schedule and
// marking each stage's measurement window in the sink.
package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
)

// WarmupStage is the stage label of warmup iterations.
const WarmupStage = "warmup"

// Engine runs one plan. Run is called once; Status is safe for concurrent
// use while Run is in progress.
type Engine struct {
	plan   engine.Plan
	runner engine.Runner
	sink   engine.Sink

	requestID  atomic.Int64
	phase      atomic.Value // string
	warmupDone atomic.Int64
	scenarios  []*scenarioRun
}

// New prepares an Engine for plan; nothing starts until Run.
func New(plan engine.Plan, runner engine.Runner, sink engine.Sink) *Engine {
	e := &Engine{plan: plan, runner: runner, sink: sink}
	e.phase.Store(PhaseInit)
	for _, sc := range plan.Scenarios {
		e.scenarios = append(e.scenarios, &scenarioRun{sc: sc, eng: e})
	}
	return e
}

// Phases reported by Status.
const (
	PhaseInit    = "init"
	PhaseWarmup  = "warmup"
	PhaseRunning = "running"
	PhaseDone    = "done"
)

// Run initialises all VUs (before any load, so script init never distorts
// timings), runs the warmup, then all scenarios concurrently. It returns an
// error only when setup fails; per-request and per-iteration failures are
// recorded in the sink. When ctx ends, in-flight iterations are canceled and
// Run returns ctx's error after every VU has stopped.
func (e *Engine) Run(ctx context.Context) error {
	defer e.phase.Store(PhaseDone)
	total := 0
	for _, s := range e.scenarios {
		total += s.sc.MaxVUs()
	}
	vus, err := e.initVUs(ctx, total)
	defer closeVUs(vus)
	if err != nil {
		return err
	}
	next := 0
	for _, s := range e.scenarios {
		n := s.sc.MaxVUs()
		s.vus = vus[next : next+n]
		next += n
	}
	if err := e.warmup(ctx, vus); err != nil {
		return err
	}
	e.phase.Store(PhaseRunning)
	var wg sync.WaitGroup
	for _, s := range e.scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// vuHandle is a VU with the count of its iterations; owned by one goroutine at a time.
type vuHandle struct {
	id   int
	vu   engine.VU
	iter int64
}

// initVUs makes n VUs concurrently, a few at a time.
func (e *Engine) initVUs(ctx context.Context, n int) ([]*vuHandle, error) {
	vus := make([]*vuHandle, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range vus {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			vu, err := e.runner.NewVU(ctx, i+1)
			if err != nil {
				errs[i] = fmt.Errorf("VU %d init: %w", i+1, err)
				return
			}
			vus[i] = &vuHandle{id: i + 1, vu: vu}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// One script error usually fails every VU the same way: report the first.
		for _, err := range errs {
			if err != nil {
				return vus, err
			}
		}
	}
	return vus, ctx.Err()
}

func closeVUs(vus []*vuHandle) {
	for _, v := range vus {
		if v != nil {
			v.vu.Close()
		}
	}
}

// iterate runs one iteration on v and records a script error, unless the
// error only says the iteration was canceled.
func (e *Engine) iterate(ctx context.Context, v *vuHandle, it engine.Iteration) {
	it.VUID = v.id
	it.Iteration = v.iter
	it.RequestID = e.requestID.Add(1)
	v.iter++
	err := v.vu.RunIteration(ctx, it)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	e.sink.IterationError(engine.IterationError{
		Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Message: err.Error(),
	})
}
