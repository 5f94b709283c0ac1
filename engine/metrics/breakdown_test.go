package metrics

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// spanSample is a successful request whose span timed queue and prefill
// (and decode, when decode ≥ 0).
func spanSample(stage string, startS float64, ttft, e2e, queue, prefill, decode time.Duration) engine.Sample {
	s := okSample(stage, startS, e2e)
	s.TTFT = ttft
	s.Span = &engine.ServerSpan{Queue: queue, Prefill: prefill, Decode: decode, TTFT: engine.Absent, E2E: engine.Absent,
		PromptTokens: -1, CompletionTokens: -1}
	return s
}

// A stage's breakdown: each part's distribution over the requests the
// server timed, their sources, and the negative residuals counted, not
// clamped; a stage the server timed nothing of has none.
func TestBreakdownSummary(t *testing.T) {
	const ms = time.Millisecond
	c := NewCollector()
	for i, stage := range []string{"plain", "traced"} {
		c.StageStarted(mark("sweep", stage, i, 1, 0))
	}
	c.Sample(okSample("plain", 1, time.Second))
	for _, s := range []engine.Sample{
		spanSample("traced", 1, 100*ms, 500*ms, 60*ms, 30*ms, 395*ms),      // residual 10, tail 5
		spanSample("traced", 2, 200*ms, 900*ms, 150*ms, 30*ms, 690*ms),     // residual 20, tail 10
		spanSample("traced", 3, 50*ms, 60*ms, 40*ms, 15*ms, engine.Absent), // residual −5: flagged
	} {
		c.Sample(s)
	}
	timed := okSample("traced", 4, 400*time.Millisecond)
	timed.TTFT = 100 * ms
	timed.Server = &engine.ServerTimings{PromptMS: 40, PredictedMS: 280, PredictedN: 20}
	c.Sample(timed) // residual 60 (the slot wait in it), tail 20
	failed := spanSample("traced", 5, 100*ms, 500*ms, 60*ms, 30*ms, 395*ms)
	failed.Err = &engine.Error{Class: engine.ErrTimeoutIdle}
	c.Sample(failed)
	for i, stage := range []string{"plain", "traced"} {
		c.StageEnded(mark("sweep", stage, i, 1, 10))
	}
	sum := c.Close()
	if b := findStage(t, sum, "plain").Breakdown; b != nil {
		t.Errorf("plain stage: breakdown %+v, want none", b)
	}
	b := findStage(t, sum, "traced").Breakdown
	if b == nil {
		t.Fatal("traced stage: no breakdown")
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(b.Requests), 4},
		{"from spans", float64(b.FromSpans), 3},
		{"from timings", float64(b.FromTimings), 1},
		{"negative", float64(b.Negative), 1},
		{"residual min", b.Residual.Min, -5},
		{"residual max", b.Residual.Max, 60},
		{"residual count", float64(b.Residual.Count), 4},
		{"queue count (the timings do not time it)", float64(b.Queue.Count), 3},
		{"queue max", b.Queue.Max, 150},
		{"prefill min", b.Prefill.Min, 15},
		{"prefill max", b.Prefill.Max, 40},
		{"decode count", float64(b.Decode.Count), 3},
		{"decode max", b.Decode.Max, 690},
		{"tail min", b.Tail.Min, 5},
		{"tail max", b.Tail.Max, 20},
		{"tail count", float64(b.Tail.Count), 3},
	} {
		if !within(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// A span that comes after its request: the request is counted once, its
// breakdown once, when Breakdown gives it.
func TestBreakdownLater(t *testing.T) {
	const ms = time.Millisecond
	c := NewCollector()
	c.StageStarted(mark("sweep", "traced", 0, 1, 0))
	s := spanSample("traced", 1, 100*ms, 500*ms, 60*ms, 30*ms, 395*ms)
	span := s.Span
	s.Span = nil
	c.Sample(s) // as the request ended: no span yet
	s.Span = span
	c.Breakdown(s) // as the span joined it
	warm := s
	warm.Warmup = true
	c.Breakdown(warm)
	c.StageEnded(mark("sweep", "traced", 0, 1, 10))
	st := findStage(t, c.Close(), "traced")
	if st.Requests != 1 || st.Breakdown == nil || st.Breakdown.Requests != 1 || st.Breakdown.Queue.Max != 60 {
		t.Errorf("requests %d, breakdown %+v: want one request, split once with queue 60 ms", st.Requests, st.Breakdown)
	}
}
