package metrics

import (
	"cmp"
	"math"
	"time"
)

// stageAgg accumulates one (scenario, stage). Owned by the aggregator.
type stageAgg struct {
	key             stageKey
	index, vus      int
	rate            float64 // target iterations per second, open model
	start, end      time.Time
	started, ended  bool
	startSeq        int
	firstAt, lastAt time.Time // earliest start seen, latest completion
	sources, errors map[string]int64

	cells  [numBuiltin]cell
	checks map[string]*cell // by check name
	custom map[string]*cell // by custom metric name
}

func newStageAgg(k stageKey) *stageAgg {
	s := &stageAgg{
		key: k, sources: map[string]int64{}, errors: map[string]int64{},
		checks: map[string]*cell{}, custom: map[string]*cell{},
	}
	for id, d := range builtins {
		s.cells[id] = newCell(d.kind, durationGeo)
	}
	return s
}

func (s *stageAgg) orderKey() int {
	if s.started {
		return s.startSeq
	}
	return math.MaxInt
}

// seen widens the span of activity that bounds a stage without marks.
func (s *stageAgg) seen(from, to time.Time) {
	if s.firstAt.IsZero() || from.Before(s.firstAt) {
		s.firstAt = from
	}
	if to.After(s.lastAt) {
		s.lastAt = to
	}
}

// sample adds one request. Failed requests count in requests and errors,
// nowhere else.
func (s *stageAgg) sample(e *event) {
	s.seen(e.at, e.done())
	if e.failed {
		s.errors[cmp.Or(e.class, "unknown")]++
	} else {
		s.sources[cmp.Or(e.source, "unknown")]++
	}
	for _, id := range sampleMetrics {
		feedSample(id, &s.cells[id], e)
	}
}

// feedSample adds a request to the cell of built-in metric id. A zero
// duration means "not measured" (see engine.Result) and is skipped, except
// in ITL where a zero gap is real: two events read at once.
func feedSample(id metricID, c *cell, e *event) {
	switch id {
	case mRequests:
		c.add(1)
	case mErrors:
		c.add(b2f(e.failed))
	}
	if e.failed {
		return
	}
	switch id {
	case mTTFT:
		c.addSet(e.ttft)
	case mTPOT:
		c.addSet(e.tpot)
	case mE2E:
		c.addSet(e.e2e)
	case mTTFB:
		c.addSet(e.ttfb)
	case mITL:
		for _, g := range e.itl {
			c.addDuration(g)
		}
	case mTTFTSched:
		feedSched(c, e, e.ttft)
	case mE2ESched:
		feedSched(c, e, e.e2e)
	case mOutTok:
		c.add(float64(e.outTok))
	case mInTok:
		c.add(float64(e.inTok))
	}
}

// feedSched records d measured from the intended start rather than t0, so
// time spent waiting for a free VU is not hidden (coordinated omission).
func feedSched(c *cell, e *event, d time.Duration) {
	if e.hasSched && d != 0 {
		c.addDuration(d + e.sched)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (s *stageAgg) iteration(e *event) {
	s.seen(e.at, e.at)
	s.cells[mIterations].add(1)
	if e.hasSched {
		s.cells[mScheduleLag].addDuration(e.sched)
	}
}

func (s *stageAgg) drop(e *event) {
	if !e.at.IsZero() {
		s.seen(e.at, e.at)
	}
	s.cells[mDropped].add(1)
}

// check counts one evaluation of a named check.
func (s *stageAgg) check(name string, v float64) {
	c := s.checks[name]
	if c == nil {
		c = &cell{kind: kindRate}
		s.checks[name] = c
	}
	c.add(v)
	s.cells[mChecks].add(v)
}

// metric adds one value of a custom metric whose kind is already settled.
func (s *stageAgg) metric(name string, k kind, v float64) {
	c := s.custom[name]
	if c == nil {
		nc := newCell(k, valueGeo)
		c = &nc
		s.custom[name] = c
	}
	c.add(v)
}

// window returns the stage's bounds. A stage that never started begins at
// its first sample; one that never ended ends now during the run, and at
// close at its last completion (an interrupted run), or at close when
// nothing completed after its start. ok is false for a stage named only by
// events without a time (script errors, metric samples): its window is
// empty.
func (s *stageAgg) window(now time.Time, final bool) (start, end time.Time, ok bool) {
	start = s.start
	if !s.started {
		start = s.firstAt
	}
	end = s.end
	if !s.ended {
		end = now
		if final && s.lastAt.After(start) {
			end = s.lastAt
		}
	}
	if start.IsZero() {
		return end, end, false
	}
	return start, end, true
}

// snap copies what queries need. share: see recorder.freeze.
func (s *stageAgg) snap(now time.Time, final bool) stageSnap {
	ss := stageSnap{
		scenario: s.key.scenario, stage: s.key.stage,
		checks: make(map[string]cellSnap, len(s.checks)),
		custom: make(map[string]cellSnap, len(s.custom)),
	}
	ss.start, ss.end, ss.timed = s.window(now, final)
	for id := range s.cells {
		ss.cells[id] = s.cells[id].snap(final)
	}
	for name, c := range s.checks {
		ss.checks[name] = c.snap(final)
	}
	for name, c := range s.custom {
		ss.custom[name] = c.snap(final)
	}
	return ss
}

// summary renders the stage from its final snapshot.
func (s *stageAgg) summary(ss *stageSnap) StageSummary {
	secs := ss.seconds()
	c := &ss.cells
	requests, failed := c[mRequests].n, c[mErrors].hits
	outTok, inTok := int64(c[mOutTok].sum), int64(c[mInTok].sum)
	iters, dropped := c[mIterations].n, c[mDropped].n
	return StageSummary{
		Scenario: s.key.scenario, Stage: s.key.stage, Index: s.index, VUs: s.vus,
		Start: ss.start, End: ss.end, DurationS: secs, Complete: s.started && s.ended,
		Requests: requests, OK: requests - failed, Failed: failed,
		IterationErrors: c[mIterErrors].n,
		ReqPerSec:       perSecond(float64(requests), secs),
		OutputTokPerSec: perSecond(float64(outTok), secs),
		InputTokPerSec:  perSecond(float64(inTok), secs),
		OutputTokens:    outTok, InputTokens: inTok,
		TokensSource: s.sources, Errors: s.errors,
		TTFB: c[mTTFB].t.dist(), TTFT: c[mTTFT].t.dist(), TPOT: c[mTPOT].t.dist(),
		ITL: c[mITL].t.dist(), E2E: c[mE2E].t.dist(),
		Iterations: iters, DroppedIterations: dropped,
		TargetRate:    s.rate,
		AchievedRate:  perSecond(float64(iters), secs),
		ScheduledRate: perSecond(float64(iters+dropped), secs),
		ScheduleLag:   c[mScheduleLag].t.dist(),
		TTFTSched:     c[mTTFTSched].t.dist(),
		E2ESched:      c[mE2ESched].t.dist(),
		Checks:        checkList(ss.checks),
		Metrics:       metricSummaries(ss.custom, secs),
	}
}
