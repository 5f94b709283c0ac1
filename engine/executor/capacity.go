package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
)

// ProbeDrainTimeout bounds a capacity probe's drain: after a measurement
// window the search waits at most max(Window, ProbeDrainTimeout) for the
// iterations that started in the window to end. Those still running then
// are left running (their samples keep the window's stage) and the judge
// decides without them.
const ProbeDrainTimeout = time.Minute

// maxBisections bounds the bisection, whatever the precision asked.
const maxBisections = 40

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
			out = append(out, c.outcome())
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
			c.mu.Lock()
			c.out.Stopped = stopReason(ctx)
			c.mu.Unlock()
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
	cs   plan.CapacitySearch
	rate bool // the load is a rate, else VUs
	load capacityLoad

	phase    atomic.Pointer[probePhase] // what iterations starting now belong to
	opened   atomic.Int32               // measurement windows opened
	finishAt atomic.Int64               // unix nanos at which the search ended

	// The search's state, owned by its goroutine.
	probes  int
	windows int
	lo, hi  float64 // the highest load that held, the lowest that broke; 0: none yet

	mu  sync.Mutex
	out capacity.Outcome
}

// newCapacityRun picks the search's load; prepare checks the search.
func newCapacityRun(b *scenarioBase) *capacityRun {
	b.sc.Stages = nil // made as the search runs
	c := &capacityRun{scenarioBase: b}
	c.out = capacity.Outcome{Scenario: b.sc.Name, Stopped: "the search did not start"}
	if cs := b.sc.Capacity; cs != nil {
		c.cs, c.out.Load = *cs, cs.Load
		if c.cs.IdleTimeout <= 0 {
			c.cs.IdleTimeout = plan.DefaultProbeIdleTimeout
		}
	}
	c.rate = c.cs.Load == plan.CapacityRate
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
	if err := c.checkSearch(); err != nil {
		return fmt.Errorf("scenario %q: %w", c.sc.Name, err)
	}
	return c.load.prepare()
}

// checkSearch refuses a search that would not run or not end.
func (c *capacityRun) checkSearch() error {
	cs := c.cs
	switch {
	case cs.Load != plan.CapacityRate && cs.Load != plan.CapacityVUs:
		return fmt.Errorf("capacity load %q: want %q or %q", cs.Load, plan.CapacityRate, plan.CapacityVUs)
	case !(cs.Start > 0) || math.IsInf(cs.Start, 0) || !(cs.Max >= cs.Start) || math.IsInf(cs.Max, 0):
		return fmt.Errorf("capacity start %v and max %v: want 0 < start ≤ max", cs.Start, cs.Max)
	case !(cs.Growth > 1) || math.IsInf(cs.Growth, 0):
		return fmt.Errorf("capacity growth %v: want a factor above 1", cs.Growth)
	case cs.Window <= 0 || cs.Warmup < 0 || cs.MaxWindow < 0:
		return fmt.Errorf("capacity window %v, warmup %v, max_window %v: want a window above 0", cs.Window, cs.Warmup, cs.MaxWindow)
	case c.rate && !(cs.Precision > 0) || !(cs.Precision >= 0) || math.IsInf(cs.Precision, 0):
		return fmt.Errorf("capacity precision %v: want a relative width above 0", cs.Precision)
	case !c.rate && math.Round(cs.Start) < 1:
		return fmt.Errorf("capacity start %v: a search of VUs starts at 1 VU or more", cs.Start)
	}
	return nil
}

func (c *capacityRun) initialVUs() int { return c.load.initialVUs() }

func (c *capacityRun) progress(st *ScenarioStatus) {
	c.load.progress(st)
	start := c.start.Load()
	if start == 0 {
		return
	}
	end := time.Now()
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
	st.Stage, st.ProbePart = ph.part(time.Now())
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
		s, _ := ph.part(time.Now())
		return s
	}
	return c.sc.Name
}

// run searches, records the outcome, then stops the load, letting the
// last iterations finish within GracefulStop.
func (c *capacityRun) run(ctx context.Context) {
	c.begin()
	c.mu.Lock()
	c.out.Stopped = ""
	c.mu.Unlock()
	c.load.start(ctx)
	stopped := c.search(ctx)
	c.finishAt.Store(time.Now().UnixNano())
	c.conclude(stopped)
	c.done.Store(true)
	c.load.stop()
}

// search brackets the capacity, then bisects; it returns why it stopped
// early, "" when it converged, held at max or found no load that held.
func (c *capacityRun) search(ctx context.Context) string {
	load := c.startLoad()
	for {
		pass, stop := c.probe(ctx, load, capacity.ProbeBracket)
		if stop != "" {
			return stop
		}
		if !pass {
			c.broke(load)
			break
		}
		c.held(load)
		if load >= c.maxLoad() {
			return "" // held at max: at least max
		}
		load = c.up(load)
	}
	if c.lo == 0 {
		if stop := c.bracketDown(ctx, load); stop != "" || c.lo == 0 {
			return stop
		}
	}
	return c.bisect(ctx)
}

// bracketDown lowers the load from the first probe's, which broke, until
// one holds: for VUs down to 1, for rates down to start/growth⁶. It
// leaves c.lo at 0 when none held.
func (c *capacityRun) bracketDown(ctx context.Context, load float64) string {
	for k := 1; ; k++ {
		next, ok := c.down(load, k)
		if !ok {
			return ""
		}
		load = next
		pass, stop := c.probe(ctx, load, capacity.ProbeBracket)
		if stop != "" {
			return stop
		}
		if pass {
			c.held(load)
			return ""
		}
		c.broke(load)
	}
}

// bisect halves [lo, hi] until it is within the precision.
func (c *capacityRun) bisect(ctx context.Context) string {
	for n := 0; !c.converged() && n < maxBisections; n++ {
		mid := c.mid()
		pass, stop := c.probe(ctx, mid, capacity.ProbeBisect)
		if stop != "" {
			return stop
		}
		if pass {
			c.held(mid)
		} else {
			c.broke(mid)
		}
	}
	return ""
}

// startLoad is the first probe's load: start, whole for VUs, within max.
func (c *capacityRun) startLoad() float64 {
	if c.rate {
		return c.cs.Start
	}
	return min(math.Round(c.cs.Start), c.maxLoad())
}

// maxLoad is the bracket's bound: max, whole for VUs.
func (c *capacityRun) maxLoad() float64 {
	if c.rate {
		return c.cs.Max
	}
	return max(math.Floor(c.cs.Max), 1)
}

// up is the bracket's next load after load held: load × growth (at
// least one VU more), or max when that would pass it.
func (c *capacityRun) up(load float64) float64 {
	next := load * c.cs.Growth
	if !c.rate {
		next = max(load+1, math.Round(next))
	}
	if next >= c.maxLoad()*(1-1e-9) {
		return c.maxLoad()
	}
	return next
}

// down is the k-th load below a first probe that broke: load ÷ growth (at
// least one VU less, down to 1), or for rates start ÷ growth^k down to
// k = 6; ok is false below that.
func (c *capacityRun) down(load float64, k int) (float64, bool) {
	if c.rate {
		return c.cs.Start / math.Pow(c.cs.Growth, float64(k)), k <= 6
	}
	if load <= 1 {
		return 0, false
	}
	return max(min(load-1, math.Round(load/c.cs.Growth)), 1), true
}

// mid is the next bisection load: the middle of [lo, hi], whole for VUs.
func (c *capacityRun) mid() float64 {
	if c.rate {
		return (c.lo + c.hi) / 2
	}
	return math.Floor((c.lo + c.hi) / 2)
}

// converged reports whether [lo, hi] is narrow enough: within the
// precision, or for VUs one VU wide.
func (c *capacityRun) converged() bool {
	width := c.hi - c.lo
	if !c.rate && width <= 1 {
		return true
	}
	return c.cs.Precision > 0 && width/c.lo <= c.cs.Precision
}

// held and broke narrow [lo, hi] with a probe's verdict, so the outcome
// shows the estimate as the search goes.
func (c *capacityRun) held(load float64)  { c.lo = load; c.conclude("") }
func (c *capacityRun) broke(load float64) { c.hi = load; c.conclude("") }

// conclude records the estimate from [lo, hi] and why the search stopped.
func (c *capacityRun) conclude(stopped string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := &c.out
	o.Lo, o.Hi, o.Stopped = c.lo, c.hi, stopped
	o.Capacity, o.AtLeast = 0, false
	switch {
	case c.lo > 0 && c.hi > 0:
		o.Capacity = (c.lo + c.hi) / 2
	case c.lo > 0:
		o.Capacity, o.AtLeast = c.lo, true
	}
}

// outcome is a copy of what the search has found.
func (c *capacityRun) outcome() capacity.Outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.out
	o.Probes = slices.Clone(o.Probes)
	return o
}

// record appends a judged probe to the outcome and updates the estimate.
func (c *capacityRun) record(p capacity.Probe, v capacity.Verdict) {
	p.Stages = slices.Clone(p.Stages)
	c.mu.Lock()
	c.out.Probes = append(c.out.Probes, capacity.ProbeResult{Probe: p, Verdict: v})
	c.mu.Unlock()
}

// stopReason is why the search stops when ctx has ended.
func stopReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause.Error()
	}
	return "interrupted"
}
