// Package metrics aggregates what a run measures into per-stage counts,
// rates and HDR latency distributions.
package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
)

// DefaultBuffer is how many events may wait for the aggregator. It is large
// so that producers almost never block; when they do, they wait rather than
// drop a sample.
const DefaultBuffer = 1 << 16

// Option configures a Collector.
type Option func(*Collector)

// WithBuffer sets the event buffer size (minimum 1).
func WithBuffer(n int) Option {
	return func(c *Collector) { c.buffer = max(n, 1) }
}

// Collector is an engine.Sink that aggregates samples per (scenario, stage).
// Its Sink methods and Live are safe for concurrent use and only send on a
// buffered channel; one goroutine owns every histogram. Calls after Close
// are ignored and counted in Live().Late.
type Collector struct {
	buffer  int
	events  chan event
	result  chan *Summary
	closing atomic.Bool
	senders atomic.Int64 // calls between their closing check and their send

	requests, failed, outputTokens, iterErrors     atomic.Int64
	warmupRequests, warmupFailed, warmupIterErrors atomic.Int64
	late                                           atomic.Int64

	closeOnce sync.Once
	summary   *Summary
}

// NewCollector starts a Collector's aggregator goroutine; Close stops it.
func NewCollector(opts ...Option) *Collector {
	c := &Collector{buffer: DefaultBuffer, result: make(chan *Summary, 1)}
	for _, o := range opts {
		o(c)
	}
	c.events = make(chan event, c.buffer)
	go func() { c.result <- aggregate(c.events) }()
	return c
}

// Sample records one request. The collector keeps s.ITL and reads it later,
// so the caller must not modify that slice afterwards; s.Text is dropped.
func (c *Collector) Sample(s engine.Sample) {
	if s.Warmup {
		if c.open() {
			c.warmupRequests.Add(1)
			if s.Err != nil {
				c.warmupFailed.Add(1)
			}
		}
		return
	}
	if !c.send(sampleEvent(&s)) {
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
	if c.send(event{kind: evIterErr, scenario: e.Scenario, stage: e.Stage, errMsg: e.Message}) {
		c.iterErrors.Add(1)
	}
}

// StageStarted opens a stage window.
func (c *Collector) StageStarted(m engine.StageMark) { c.send(markEvent(evStageStart, m)) }

// StageEnded closes a stage window.
func (c *Collector) StageEnded(m engine.StageMark) { c.send(markEvent(evStageEnd, m)) }

// Live returns running totals without waiting for the aggregator.
func (c *Collector) Live() Live {
	return Live{
		Requests:        c.requests.Load(),
		Failed:          c.failed.Load(),
		OutputTokens:    c.outputTokens.Load(),
		IterationErrors: c.iterErrors.Load(),
		WarmupRequests:  c.warmupRequests.Load(),
		Late:            c.late.Load(),
	}
}

// open reports whether Close has not begun, counting a late call if it has.
func (c *Collector) open() bool {
	if c.closing.Load() {
		c.late.Add(1)
		return false
	}
	return true
}

// send hands e to the aggregator, blocking while the buffer is full, and
// reports whether it was accepted. The senders count lets Close wait for
// sends already past the closing check, so the channel is never closed
// under a sender and nothing accepted is lost.
func (c *Collector) send(e event) bool {
	c.senders.Add(1)
	defer c.senders.Add(-1)
	if !c.open() {
		return false
	}
	c.events <- e
	return true
}

// Close waits for the aggregator to drain every event, stops it and returns
// the summary. Later calls return the same summary. Safe for concurrent use.
func (c *Collector) Close() *Summary {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		for c.senders.Load() > 0 {
			runtime.Gosched() // the aggregator keeps draining meanwhile
		}
		close(c.events)
		c.summary = <-c.result
		c.summary.Warmup = WarmupSummary{
			Requests:        c.warmupRequests.Load(),
			Failed:          c.warmupFailed.Load(),
			IterationErrors: c.warmupIterErrors.Load(),
		}
	})
	return c.summary
}
