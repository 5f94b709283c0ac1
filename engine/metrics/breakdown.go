package metrics

import (
	"time"

	"github.com/llmload/llmload/engine"
)

// BreakdownSummary is where a stage's time went, over its successful
// requests that have an engine.Breakdown: each part's distribution in ms
// (Residual and Tail may be negative), how many requests each source
// split, and how many had a residual below zero. A part no request had
// (Queue under llama.cpp's timings) has a zero Dist, left out of JSON.
type BreakdownSummary struct {
	Requests    int64 `json:"requests"`
	FromSpans   int64 `json:"from_spans,omitempty"`
	FromTimings int64 `json:"from_timings,omitempty"`
	// Negative counts the requests whose residual was below zero: the
	// server timed more than the client measured (engine.Breakdown).
	Negative int64 `json:"negative,omitempty"`
	Upload   Dist  `json:"upload,omitzero"`
	Residual Dist  `json:"residual,omitzero"`
	Queue    Dist  `json:"queue,omitzero"`
	Prefill  Dist  `json:"prefill,omitzero"`
	Decode   Dist  `json:"decode,omitzero"`
	Tail     Dist  `json:"tail,omitzero"`
}

// breakdownOf is a successful request's breakdown; nil for one without.
func breakdownOf(r *engine.Result) *engine.Breakdown {
	if r.Err != nil || (r.Span == nil && r.Server == nil) {
		return nil
	}
	b := r.Breakdown()
	if b.Source == "" {
		return nil
	}
	return &b
}

// partMetrics are the built-ins a sample with a breakdown feeds.
var partMetrics = [...]metricID{
	mParts, mPartsSpan, mPartsTimings, mPartsNegative,
	mPartUpload, mPartResidual, mPartQueue, mPartPrefill, mPartDecode, mPartTail,
}

func isPartMetric(id metricID) bool { return id >= mParts && id <= mPartTail }

// feedParts adds a request's part to the cell of built-in id; a part the
// source did not time (engine.Absent) adds nothing.
func feedParts(id metricID, c *cell, e *event) {
	p := e.parts
	if p == nil {
		return
	}
	switch id {
	case mParts:
		c.add(1)
	case mPartsSpan:
		c.add(b2f(p.Source == engine.BreakdownSpan))
	case mPartsTimings:
		c.add(b2f(p.Source == engine.BreakdownTimings))
	case mPartsNegative:
		c.add(b2f(p.Negative))
	case mPartUpload:
		c.add(ms(p.Upload))
	case mPartResidual:
		c.add(ms(p.Residual))
	case mPartQueue:
		addPart(c, p.Queue)
	case mPartPrefill:
		c.add(ms(p.Prefill))
	case mPartDecode:
		addPart(c, p.Decode)
	case mPartTail:
		if p.Decode != engine.Absent {
			c.add(ms(p.Tail))
		}
	}
}

// addPart adds d in ms unless it was not timed.
func addPart(c *cell, d time.Duration) {
	if d != engine.Absent {
		c.add(ms(d))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// partsFigures fills st.Breakdown; it stays nil when no request of the
// stage had one.
func partsFigures(st *StageSummary, ss *stageSnap) {
	c := &ss.cells
	if c[mParts].n == 0 {
		return
	}
	st.Breakdown = &BreakdownSummary{
		Requests: int64(c[mParts].sum), FromSpans: int64(c[mPartsSpan].sum), FromTimings: int64(c[mPartsTimings].sum),
		Negative: int64(c[mPartsNegative].sum),
		Upload:   c[mPartUpload].t.dist(), Residual: c[mPartResidual].t.dist(), Queue: c[mPartQueue].t.dist(),
		Prefill: c[mPartPrefill].t.dist(), Decode: c[mPartDecode].t.dist(), Tail: c[mPartTail].t.dist(),
	}
}

// Breakdown records the breakdown of a request already recorded by Sample,
// whose server's span arrived after it (a trace receiver joins spans to
// requests seconds later). Only the part metrics of its stage take it; a
// sample whose breakdown Sample already counted (llama.cpp's timings) must
// not be given again. Warmup, dirty and failed samples, and those with no
// breakdown, are ignored.
func (c *Collector) Breakdown(s engine.Sample) {
	if s.Warmup || s.Dirty != "" || s.Err != nil {
		return
	}
	p := breakdownOf(&s.Result)
	if p == nil {
		return
	}
	c.accept(event{kind: evParts, scenario: s.Scenario, stage: s.Stage, at: s.Start, parts: p})
}
