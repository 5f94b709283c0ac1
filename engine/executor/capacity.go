package executor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// ProbeDrainTimeout bounds a capacity probe's drain: after a measurement
// window the search waits at most max(Window, ProbeDrainTimeout) for the
// iterations that started in the window to end. Those still running then
// are left running (their samples keep the window's stage) and the judge
// decides without them.
const ProbeDrainTimeout = time.Minute

// SetProbeJudge sets the judge that decides a capacity search's probes.
// It must be called before Run; a plan with a capacity scenario and no
// judge fails to prepare. The judge is called from each capacity
// scenario's own goroutine, so concurrently when a plan has several.
func (e *Engine) SetProbeJudge(j capacity.Judge) { e.judge = j }

// Capacity returns each capacity scenario's outcome, in plan order (nil
// without one): what its search has found so far while Run is in
// progress, and once Run has returned what it found, with Stopped set
// when it ended before converging ("interrupted" after Ctrl-C). Safe for
// concurrent use.
func (e *Engine) Capacity() []capacity.Outcome {
	var out []capacity.Outcome
	for _, s := range e.scenarios {
		if c, ok := s.(*capacityRun); ok {
			out = append(out, c.search.Outcome())
		}
	}
	return out
}

// settleCapacity records, for each capacity search that never started,
// why: the run ended before the scenario's start.
func (e *Engine) settleCapacity(ctx context.Context) {
	if ctx.Err() == nil {
		return
	}
	for _, s := range e.scenarios {
		if c, ok := s.(*capacityRun); ok && c.start.Load() == 0 {
			c.search.Stop(stopReason(ctx))
		}
	}
}

// capacityRun drives a capacity search (engine.CapacitySearch): probes of
// one load each — a warmup, then measurement windows, each its own stage
// ("probe-03", then "probe-03.2", ... while the judge cannot decide), each
// followed by a drain — first of rising load until one breaks (the
// bracket), then bisecting between the highest load that held and the
// lowest that broke. The load is an arrival rate (open model, openPool)
// or VUs (closed model, slots). Within a probe it runs on from warmup to
// window to drain, so the server never sees it pause: only the labels of
// the iterations change (warmup and drain iterations are flagged Warmup).
// Between probes it stops until the last probe's iterations have ended
// and the server's queue is empty (settle), so no probe measures the
// backlog of the one before. The stages are made as the search runs, so
// sc.Stages is empty.
type capacityRun struct {
	*scenarioBase
	search *capacity.Search
	cs     plan.CapacitySearch // search.Config()
	rate   bool                // the load is a rate, else VUs
	load   capacityLoad

	phase    atomic.Pointer[probePhase] // what iterations starting now belong to
	opened   atomic.Int32               // measurement windows opened
	finishAt atomic.Int64               // unix nanos at which the search ended

	// The probes' count, owned by the search's goroutine.
	probes  int
	windows int
}

// newCapacityRun picks the search's load; prepare checks the search.
func newCapacityRun(b *scenarioBase) *capacityRun {
	b.sc.Stages = nil // made as the search runs
	c := &capacityRun{scenarioBase: b, search: capacity.NewSearch(b.sc.Name, b.sc.Capacity)}
	c.cs, c.rate = c.search.Config(), c.search.Rate()
	if c.rate {
		c.load = &rateLoad{c: c, pool: newOpenPool(b, c.stageNow)}
	} else {
		c.load = &vusLoad{c: c}
	}
	return c
}

func (c *capacityRun) prepare() error {
	if c.sc.Capacity == nil {
		return fmt.Errorf("scenario %q: a capacity scenario needs its search (options: load, start, max, ...)", c.sc.Name)
	}
	if err := checkCapacitySplit(c.sc, c.eng.seg.Count); err != nil {
		return err
	}
	if c.eng.judge == nil {
		return fmt.Errorf("scenario %q: a capacity search needs a probe judge to decide its probes (Engine.SetProbeJudge)", c.sc.Name)
	}
	if err := c.search.Check(); err != nil {
		return fmt.Errorf("scenario %q: %w", c.sc.Name, err)
	}
	return c.load.prepare()
}

func (c *capacityRun) initialVUs() int { return c.load.initialVUs() }

func (c *capacityRun) progress(st *ScenarioStatus) {
	c.load.progress(st)
	start := c.start.Load()
	if start == 0 {
		return
	}
	end := runclock.Now()
	if f := c.finishAt.Load(); f != 0 {
		end = time.Unix(0, f)
	}
	st.Elapsed = end.Sub(time.Unix(0, start))
	st.Stages = int(c.opened.Load())
	st.StageIndex = max(st.Stages-1, 0)
	ph := c.phase.Load()
	if ph == nil || c.finishAt.Load() != 0 {
		return
	}
	st.Probe, st.ProbeLoad = ph.probe, ph.load
	st.Stage, st.ProbePart = ph.part(runclock.Now())
	if st.ProbePart == ProbeWarmup {
		// Warming up for the next window, which counts as the current one.
		st.StageIndex, st.Stages = st.Stages, st.Stages+1
	}
	if c.rate {
		st.Rate = ph.load
	}
}

// stageNow is the stage an iteration starting now belongs to.
func (c *capacityRun) stageNow() string {
	if ph := c.phase.Load(); ph != nil {
		s, _ := ph.part(runclock.Now())
		return s
	}
	return c.sc.Name
}

// run searches, records the outcome, then stops the load, letting the
// last iterations finish within GracefulStop.
func (c *capacityRun) run(ctx context.Context) {
	c.begin()
	c.load.start(ctx)
	c.search.Run(ctx, c.probe)
	c.finishAt.Store(runclock.Now().UnixNano())
	c.done.Store(true)
	c.load.stop()
}

// stopReason is why the search stops when ctx has ended.
func stopReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause.Error()
	}
	return "interrupted"
}
