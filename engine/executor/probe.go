package executor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/runclock"
)

// Parts of a capacity probe, as ScenarioStatus.ProbePart names them.
const (
	ProbeWarmup = "warmup"
	ProbeWindow = "window"
	ProbeDrain  = "drain"
)

// probe measures one load: its warmup, then measurement windows until the
// judge decides, each window followed by a drain while the load goes on.
// It records the probe (once a window has opened) and returns its
// verdict; stop is non-empty when the search must end.
func (c *capacityRun) probe(ctx context.Context, load float64, phase string) (pass bool, stop string) {
	p := capacity.Probe{Scenario: c.sc.Name, Index: c.probes, Load: load, Phase: phase, MinSamples: c.minSamples(load)}
	c.probes++
	name := fmt.Sprintf("probe-%02d", p.Index+1)
	if p.Index > 0 {
		if p.Settle, stop = c.settle(ctx, fmt.Sprintf("probe-%02d", p.Index)); stop != "" {
			return false, stop
		}
	}
	// Every window is Window long, at a low rate too: the judge fails a
	// clear failure after the first, and a pass extends the probe until
	// it has min_samples.
	window := c.cs.Window
	ph, err := c.enter(ctx, &p, name, runclock.Now().Add(c.warmup(p.Settle, window)), window)
	for err == nil {
		if !sleepUntil(ctx, ph.windowStart) {
			return false, stopReason(ctx) // in the warmup: nothing measured
		}
		var v capacity.Verdict
		if v, err = c.measure(ctx, &p, ph); err != nil {
			break
		}
		switch {
		case v.Stop != "":
			c.search.Record(p, v)
			return false, v.Stop
		case v.Decided:
			c.search.Record(p, v)
			return v.Pass, ""
		case p.End.Sub(p.Start) >= c.cs.MaxWindow:
			c.search.Record(p, v)
			return false, fmt.Sprintf("%s could not decide within max_window: %s", name, v.Why)
		}
		p.Extended++
		ext := min(window, c.cs.MaxWindow-p.End.Sub(p.Start))
		ph, err = c.enter(ctx, &p, fmt.Sprintf("%s.%d", name, len(p.Stages)+1), runclock.Now(), ext)
	}
	if len(p.Stages) > 0 {
		c.search.Record(p, capacity.Verdict{Why: "interrupted"})
	}
	if ctx.Err() != nil {
		return false, stopReason(ctx)
	}
	return false, err.Error()
}

// warmup is a probe's warmup: Warmup, and at least one window after a
// settle, since the probe then starts from an idle server and a load just
// above the capacity needs time to build the queue it would meet in a
// sustained run; measured from empty, it would pass a window it cannot
// sustain.
func (c *capacityRun) warmup(s capacity.Settle, window time.Duration) time.Duration {
	if s.Checked {
		return max(c.cs.Warmup, window)
	}
	return c.cs.Warmup
}

// minSamples is the fewest requests a probe of load is judged on: the
// search's, or for a rate so low that MaxWindow cannot hold them, 90% of
// what it holds (at least minProbeSamples), so that the judge decides on
// the wider interval of fewer samples instead of never.
func (c *capacityRun) minSamples(load float64) int {
	if !c.rate || load <= 0 {
		return c.cs.MinSamples
	}
	holds := int(0.9 * load * c.cs.MaxWindow.Seconds())
	return min(c.cs.MinSamples, max(holds, minProbeSamples))
}

// minProbeSamples is the fewest requests any rate probe is judged on.
const minProbeSamples = 5

// enter starts p's next window, stage, of length window at windowStart:
// what comes before it is p's warmup. The load (re)starts so that a
// constant rate has an arrival at windowStart.
func (c *capacityRun) enter(ctx context.Context, p *capacity.Probe, stage string, windowStart time.Time, window time.Duration) (*probePhase, error) {
	c.load.halt()
	ph := &probePhase{
		probe: p.Index + 1, load: p.Load, stage: stage,
		warmup: fmt.Sprintf("probe-%02d warmup", p.Index+1), drain: stage + " drain",
		windowStart: windowStart, windowEnd: windowStart.Add(window), win: newWindowCount(c.markDrop),
	}
	c.phase.Store(ph)
	return ph, c.load.apply(ctx, p.Load, windowStart)
}

// measure runs ph's window as a stage of its own, drains it and asks the
// judge; err is set when ctx ended first.
func (c *capacityRun) measure(ctx context.Context, p *capacity.Probe, ph *probePhase) (capacity.Verdict, error) {
	mark := c.windowStarted(ph)
	if len(p.Stages) == 0 {
		p.Start = ph.windowStart
	}
	p.Stages = append(p.Stages, ph.stage)
	reached := sleepUntil(ctx, ph.windowEnd)
	c.stageEnded(mark, ph.windowEnd, reached)
	p.End = ph.windowEnd
	if !reached {
		p.End = runclock.Now()
		return capacity.Verdict{}, ctx.Err()
	}
	if !c.drain(ctx, ph.win) {
		return capacity.Verdict{}, ctx.Err()
	}
	return c.eng.judge.JudgeProbe(*p), nil
}

// windowStarted marks ph's window opening, its load as the stage's.
func (c *capacityRun) windowStarted(ph *probePhase) engine.StageMark {
	m := engine.StageMark{
		Scenario: c.sc.Name, Stage: ph.stage, Index: c.windows,
		At: ph.windowStart, Late: lateSince(ph.windowStart), Planned: ph.windowEnd.Sub(ph.windowStart),
	}
	if c.rate {
		m.Rate = ph.load
	} else {
		m.Target = int(ph.load)
	}
	c.windows++
	c.opened.Store(int32(c.windows))
	c.eng.sink.StageStarted(m)
	return m
}

// drain waits until every iteration that started in the window has
// ended, for at most max(Window, ProbeDrainTimeout); it reports false
// when ctx ended first.
func (c *capacityRun) drain(ctx context.Context, w *windowCount) bool {
	t := time.NewTimer(max(c.cs.Window, ProbeDrainTimeout))
	defer t.Stop()
	select {
	case <-w.close():
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// probePhase is what an iteration belongs to by its start (its intended
// start, in the open model): before windowStart the probe's warmup, in
// [windowStart, windowEnd) the window's stage, after it the drain. It is
// immutable; capacityRun.phase swaps it.
type probePhase struct {
	probe                  int     // 1-based
	load                   float64 // iterations/s or VUs
	stage, warmup, drain   string  // the stage names of the three parts
	windowStart, windowEnd time.Time
	win                    *windowCount
}

// label is the stage and warmup flag of an iteration starting at at, and
// the window it is counted in (nil outside): the caller calls its leave
// once the iteration has ended (or was dropped).
func (ph *probePhase) label(at time.Time) (stage string, warmup bool, win *windowCount) {
	switch {
	case at.Before(ph.windowStart):
		return ph.warmup, true, nil
	case at.Before(ph.windowEnd) && ph.win.enter():
		return ph.stage, false, ph.win
	}
	return ph.drain, true, nil
}

// part is the stage of an iteration starting at at and the probe's part.
func (ph *probePhase) part(at time.Time) (stage, part string) {
	switch {
	case at.Before(ph.windowStart):
		return ph.warmup, ProbeWarmup
	case at.Before(ph.windowEnd):
		return ph.stage, ProbeWindow
	}
	return ph.drain, ProbeDrain
}

// windowCount counts the iterations that started in a window and have
// not ended; once closed it takes no more, and done closes when the last
// has ended. Safe for concurrent use.
type windowCount struct {
	mu     sync.Mutex
	n      int
	closed bool
	done   chan struct{}
	// then and dropped are the open model's job hooks that leave the
	// window; dropped also marks the drop in the sink.
	then    func(*openVU, engine.Iteration) (openJob, bool)
	dropped func(engine.Iteration, string)
}

// newWindowCount is a window's count; mark records its drops.
func newWindowCount(mark func(stage string, at time.Time, reason string)) *windowCount {
	w := &windowCount{done: make(chan struct{})}
	w.then = func(*openVU, engine.Iteration) (openJob, bool) {
		w.leave()
		return openJob{}, false
	}
	w.dropped = func(it engine.Iteration, reason string) {
		mark(it.Stage, it.Scheduled, reason)
		w.leave()
	}
	return w
}

// enter counts one more iteration, unless the window is closed.
func (w *windowCount) enter() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.n++
	return true
}

// leave counts an iteration out.
func (w *windowCount) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 && w.closed {
		close(w.done)
	}
}

// close takes no more iterations; the channel closes once none runs.
func (w *windowCount) close() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		if w.n == 0 {
			close(w.done)
		}
	}
	return w.done
}
