package metrics

import (
	"time"

	"github.com/llmload/llmload/engine"
)

type eventKind uint8

const (
	evSample eventKind = iota
	evIterErr
	evStageStart
	evStageEnd
)

// event is what travels to the aggregator: only the fields it needs, so the
// large buffer stays small and a sample's text is not kept alive.
type event struct {
	kind            eventKind
	failed          bool
	scenario, stage string
	at              time.Time // sample start, or the mark's time
	ttfb, ttft      time.Duration
	tpot, e2e       time.Duration
	itl             []time.Duration
	inTok, outTok   int
	source          string
	errClass        string
	errMsg          string
	index, target   int
}

func sampleEvent(s *engine.Sample) event {
	e := event{
		kind: evSample, scenario: s.Scenario, stage: s.Stage, at: s.Start,
		ttfb: s.TTFB, ttft: s.TTFT, tpot: s.TPOT, e2e: s.E2E, itl: s.ITL,
		inTok: s.InputTokens, outTok: s.OutputTokens, source: s.TokensSource,
	}
	if s.Err != nil {
		e.failed = true
		e.errClass = s.Err.Class
	}
	return e
}

func markEvent(k eventKind, m engine.StageMark) event {
	return event{kind: k, scenario: m.Scenario, stage: m.Stage, at: m.At, index: m.Index, target: m.Target}
}

// done is when the sample's request finished, as far as it was measured.
func (e *event) done() time.Time {
	return e.at.Add(max(e.e2e, e.ttft, e.ttfb))
}
