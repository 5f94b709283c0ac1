package metrics

import (
	"cmp"
	"math"
	"time"
)

// stageAgg accumulates one (scenario, stage). Owned by the aggregator.
type stageAgg struct {
	key              stageKey
	index, vus       int
	start, end       time.Time
	started, ended   bool
	startSeq         int
	firstAt, lastAt  time.Time // earliest sample start, latest sample completion
	requests, ok     int64
	failed, iterErrs int64
	outTok, inTok    int64
	sources, errors  map[string]int64

	ttfb, ttft, tpot, itl, e2e *recorder
}

func newStageAgg(k stageKey) *stageAgg {
	return &stageAgg{
		key: k, sources: map[string]int64{}, errors: map[string]int64{},
		ttfb: newRecorder(), ttft: newRecorder(), tpot: newRecorder(),
		itl: newRecorder(), e2e: newRecorder(),
	}
}

func (s *stageAgg) orderKey() int {
	if s.started {
		return s.startSeq
	}
	return math.MaxInt
}

// sample adds one request. A zero duration means "not measured" (see
// engine.Result) and is skipped, except in ITL where a zero gap is real:
// two events read at once.
func (s *stageAgg) sample(e *event) {
	s.requests++
	if s.firstAt.IsZero() || e.at.Before(s.firstAt) {
		s.firstAt = e.at
	}
	if d := e.done(); d.After(s.lastAt) {
		s.lastAt = d
	}
	if e.failed {
		s.failed++
		s.errors[cmp.Or(e.errClass, "unknown")]++
		return
	}
	s.ok++
	s.outTok += int64(e.outTok)
	s.inTok += int64(e.inTok)
	s.sources[cmp.Or(e.source, "unknown")]++
	recordSet(s.ttfb, e.ttfb)
	recordSet(s.ttft, e.ttft)
	recordSet(s.tpot, e.tpot)
	recordSet(s.e2e, e.e2e)
	for _, g := range e.itl {
		s.itl.record(g)
	}
}

func recordSet(r *recorder, d time.Duration) {
	if d != 0 {
		r.record(d)
	}
}

// window returns the stage's bounds. A stage that never started begins at
// its first sample; one that never ended (an interrupted run) ends at its
// last completion, or at close when nothing completed after its start.
func (s *stageAgg) window(closedAt time.Time) (start, end time.Time, complete bool) {
	start = s.start
	if !s.started {
		start = s.firstAt
	}
	end = s.end
	if !s.ended {
		end = closedAt
		if s.lastAt.After(start) {
			end = s.lastAt
		}
	}
	if start.IsZero() {
		start = end // named only by iteration errors: an empty window
	}
	return start, end, s.started && s.ended
}

func (s *stageAgg) summary(closedAt time.Time) StageSummary {
	start, end, complete := s.window(closedAt)
	secs := max(end.Sub(start).Seconds(), 0)
	return StageSummary{
		Scenario: s.key.scenario, Stage: s.key.stage, Index: s.index, VUs: s.vus,
		Start: start, End: end, DurationS: secs, Complete: complete,
		Requests: s.requests, OK: s.ok, Failed: s.failed, IterationErrors: s.iterErrs,
		ReqPerSec:       rate(s.requests, secs),
		OutputTokPerSec: rate(s.outTok, secs),
		InputTokPerSec:  rate(s.inTok, secs),
		OutputTokens:    s.outTok, InputTokens: s.inTok,
		TokensSource: s.sources, Errors: s.errors,
		TTFB: s.ttfb.dist(), TTFT: s.ttft.dist(), TPOT: s.tpot.dist(),
		ITL: s.itl.dist(), E2E: s.e2e.dist(),
	}
}

func rate(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}
