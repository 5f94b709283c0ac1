// Package metrics aggregates what a run measures into per-stage counts,
// rates, checks, custom metrics and HDR distributions, and answers
// threshold queries over them through consistent snapshots.
package metrics

import (
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/outbox"
	"github.com/llmload/llmload/engine/plan"
)

// DefaultBuffer is how many events may wait for the aggregator: 8,192,
// which the aggregator drains in about 10 ms (≈ 1.1 µs an event,
// BenchmarkCollectorSample), so producers block only when completions
// outpace that for longer; they then wait rather than drop a sample. The
// buffer is allocated whole and its events hold pointers the garbage
// collector scans, so a larger one (65,536 events were 20 MB) costs every
// collection without buying anything.
const DefaultBuffer = 1 << 13

// Option configures a Collector.
type Option func(*Collector)

// WithBuffer sets the event buffer size (minimum 1).
func WithBuffer(n int) Option {
	return func(c *Collector) { c.buffer = max(n, 1) }
}

// WithSLO sets the service level that defines goodput. Without it (or
// with no request objective: SLO.RequestZero) no request is judged and the
// goodput figures are zero; its Task objective judges tasks only.
func WithSLO(slo plan.SLO) Option {
	return func(c *Collector) { c.slo = slo }
}

// ErrClosed is returned by calls that need the aggregator after Close.
var ErrClosed = errors.New("metrics: collector closed")

// Collector is an engine.Sink that aggregates samples per (scenario, stage),
// and answers threshold queries through Snapshot. Its methods are safe for
// concurrent use; the Sink methods and Live only send on a buffered
// channel, and one goroutine owns every histogram. Sink calls after Close
// are ignored and counted in Live().Late.
type Collector struct {
	buffer  int
	slo     plan.SLO
	events  *outbox.Outbox[event]
	result  chan result
	closing atomic.Bool // Close has begun: warmup counters refuse too

	requests, failed, outputTokens, iterErrors     atomic.Int64
	iterations, dropped, dirty                     atomic.Int64
	warmupRequests, warmupFailed, warmupIterErrors atomic.Int64
	late                                           atomic.Int64

	closeOnce sync.Once
	done      chan struct{} // closed when Close has its result
	summary   *Summary
	final     *Snapshot
	series    *series          // for State
	views     map[string]*view // for State: the views' metrics and filters
}

var _ engine.Sink = (*Collector)(nil)

// NewCollector starts a Collector's aggregator goroutine; Close stops it.
func NewCollector(opts ...Option) *Collector {
	c := &Collector{buffer: DefaultBuffer, result: make(chan result, 1), done: make(chan struct{})}
	for _, o := range opts {
		o(c)
	}
	c.events = outbox.New[event](c.buffer)
	go func() { c.result <- aggregate(c.events.Receive()) }()
	return c
}

// Sample records one request. The collector keeps s.ITL, s.TokenITL and
// s.Tags and reads them later, so the caller must not modify them
// afterwards; s.Text is dropped. A dirty sample (s.Dirty set) is only
// counted, in its stage's DirtyRequests and Live().Dirty.
func (c *Collector) Sample(s engine.Sample) {
	if s.Warmup {
		if c.open() {
			c.warmupRequests.Add(1)
			// A request cut off by the warmup's own end is not a failure.
			if s.Err != nil && s.Err.Class != engine.ErrCanceled {
				c.warmupFailed.Add(1)
			}
		}
		return
	}
	if s.Dirty != "" {
		if c.accept(dirtyEvent(&s)) {
			c.dirty.Add(1)
		}
		return
	}
	e := sampleEvent(&s)
	if !c.slo.RequestZero() {
		// Judged here, on the producer's goroutine, to keep the
		// aggregator's path short.
		e.judged, e.good = true, sloMet(c.slo, &s.Result)
	}
	if !c.accept(e) {
		return
	}
	c.requests.Add(1)
	if s.Err != nil {
		c.failed.Add(1)
	} else {
		c.outputTokens.Add(int64(s.OutputTokens))
	}
}

// IterationError records a script error raised in one iteration.
func (c *Collector) IterationError(e engine.IterationError) {
	if e.Warmup {
		if c.open() {
			c.warmupIterErrors.Add(1)
		}
		return
	}
	if c.accept(event{kind: evIterErr, scenario: e.Scenario, stage: e.Stage, name: e.Message}) {
		c.iterErrors.Add(1)
	}
}

// StageStarted opens a stage window.
func (c *Collector) StageStarted(m engine.StageMark) { c.accept(markEvent(evStageStart, m)) }

// StageEnded closes a stage window.
func (c *Collector) StageEnded(m engine.StageMark) { c.accept(markEvent(evStageEnd, m)) }

// IterationStarted counts an iteration and, in open models, its schedule
// lag. Warmup iterations are left out.
func (c *Collector) IterationStarted(m engine.IterationMark) {
	if m.Warmup {
		c.open()
		return
	}
	if c.accept(iterationEvent(&m)) {
		c.iterations.Add(1)
	}
}

// Dropped counts an open-model iteration that found no free VU.
func (c *Collector) Dropped(m engine.DropMark) {
	if c.accept(event{kind: evDrop, scenario: m.Scenario, stage: m.Stage, at: m.Scheduled, source: m.Reason}) {
		c.dropped.Add(1)
	}
}

// Metric records one value of a custom metric or of the checks rate. The
// collector keeps m.Tags, so the caller must not modify them afterwards.
// Samples the aggregator cannot use are counted in Summary.MetricErrors.
func (c *Collector) Metric(m engine.MetricSample) {
	if m.Warmup {
		c.open()
		return
	}
	c.accept(metricEvent(&m))
}

// Live returns running totals without waiting for the aggregator.
func (c *Collector) Live() Live {
	return Live{
		Requests:        c.requests.Load(),
		Failed:          c.failed.Load(),
		OutputTokens:    c.outputTokens.Load(),
		IterationErrors: c.iterErrors.Load(),
		WarmupRequests:  c.warmupRequests.Load(),
		Iterations:      c.iterations.Load(),
		Dropped:         c.dropped.Load(),
		Dirty:           c.dirty.Load(),
		Late:            c.late.Load(),
	}
}

// Declare registers custom metrics before their first value, so that Track
// and queries know them from the start (a query then has n == 0 rather
// than an unknown metric). A metric keeps the first kind it is declared or
// used with. Errors name each bad definition; the good ones still count.
func (c *Collector) Declare(defs ...plan.MetricDef) error {
	return c.call(&request{op: reqDeclare, defs: defs, err: make(chan error, 1)})
}

// Track registers a filtered view of a metric so that later queries with
// that filter can be answered. Values recorded before Track are not in the
// view, so call it before the first sample. Filters on scenario and stage
// only (and, for checks, check) need no Track; tracking one is a no-op, as
// is tracking a pair twice. Unknown metric, a tag filter on a metric whose
// events carry no tags, or a closed collector → error.
func (c *Collector) Track(metric string, f Filter) error {
	return c.call(&request{op: reqTrack, metric: metric, filter: maps.Clone(f), err: make(chan error, 1)})
}

// call sends a request to the aggregator and waits for its answer.
func (c *Collector) call(r *request) error {
	if !c.events.Send(event{kind: evRequest, req: r}) {
		return ErrClosed
	}
	return <-r.err
}

// Snapshot returns a consistent copy of everything queryable, taken by the
// aggregator after every event already sent. Its cost grows with the
// number of histograms changed since the last snapshot, not with samples.
// After Close it returns the final state.
func (c *Collector) Snapshot() *Snapshot {
	r := &request{op: reqSnapshot, snapshot: make(chan *Snapshot, 1)}
	if c.events.Send(event{kind: evRequest, req: r}) {
		return <-r.snapshot
	}
	<-c.done
	return c.final
}

// open reports whether Close has not begun, counting a late call if it has.
func (c *Collector) open() bool {
	if c.closing.Load() {
		c.late.Add(1)
		return false
	}
	return true
}

// accept hands e to the aggregator, blocking while the buffer is full,
// and counts it late when Close has begun; the Outbox never closes under
// a sender, so nothing accepted is lost.
func (c *Collector) accept(e event) bool {
	if !c.events.Send(e) {
		c.late.Add(1)
		return false
	}
	return true
}

// Close waits for the aggregator to drain every event, stops it and returns
// the summary. Later calls return the same summary. Safe for concurrent use.
func (c *Collector) Close() *Summary {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.events.Close() // the aggregator keeps draining meanwhile
		r := <-c.result
		c.summary, c.final, c.series, c.views = r.summary, r.final, r.series, r.views
		c.summary.Warmup = WarmupSummary{
			Requests:        c.warmupRequests.Load(),
			Failed:          c.warmupFailed.Load(),
			IterationErrors: c.warmupIterErrors.Load(),
		}
		c.summary.SLOSet = !c.slo.RequestZero()
		close(c.done)
	})
	return c.summary
}
