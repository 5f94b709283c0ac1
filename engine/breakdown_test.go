package engine

import (
	"testing"
	"time"
)

func TestBreakdown(t *testing.T) {
	const ms = time.Millisecond
	span := func(queue, prefill, decode time.Duration) *ServerSpan {
		return &ServerSpan{Queue: queue, Prefill: prefill, Decode: decode, TTFT: Absent, E2E: Absent, PromptTokens: -1, CompletionTokens: -1}
	}
	tests := []struct {
		name string
		r    Result
		want Breakdown
	}{
		{"span: every part",
			Result{TTFT: 250 * ms, E2E: 1250 * ms, Upload: 2 * ms, Span: span(180*ms, 60*ms, 990*ms)},
			Breakdown{Source: BreakdownSpan, Upload: 2 * ms, Residual: 8 * ms, Queue: 180 * ms, Prefill: 60 * ms, Decode: 990 * ms, Tail: 10 * ms}},
		{"span: the server timed more than the client measured",
			Result{TTFT: 50 * ms, E2E: 60 * ms, Span: span(40*ms, 15*ms, Absent)},
			Breakdown{Source: BreakdownSpan, Residual: -5 * ms, Queue: 40 * ms, Prefill: 15 * ms, Decode: Absent, Tail: Absent, Negative: true}},
		{"span without a queue time: the timings are used",
			Result{TTFT: 50 * ms, E2E: 90 * ms, Span: span(Absent, 15*ms, 30*ms), Server: &ServerTimings{PromptMS: 20, PredictedMS: 35, PredictedN: 8}},
			Breakdown{Source: BreakdownTimings, Residual: 30 * ms, Queue: Absent, Prefill: 20 * ms, Decode: 35 * ms, Tail: 5 * ms}},
		{"llama.cpp timings: the slot wait stays in the residual",
			Result{TTFT: 400 * ms, E2E: 600 * ms, Upload: time.Millisecond, Server: &ServerTimings{PromptMS: 12.5, PredictedMS: 190, PredictedN: 16}},
			Breakdown{Source: BreakdownTimings, Upload: ms, Residual: 386500 * time.Microsecond, Queue: Absent, Prefill: 12500 * time.Microsecond, Decode: 190 * ms, Tail: 10 * ms}},
		{"timings without generation",
			Result{TTFT: 40 * ms, E2E: 40 * ms, Server: &ServerTimings{PromptMS: 10}},
			Breakdown{Source: BreakdownTimings, Residual: 30 * ms, Queue: Absent, Prefill: 10 * ms, Decode: Absent, Tail: Absent}},
		{"a failed request has none",
			Result{TTFT: 40 * ms, Err: &Error{Class: ErrTimeoutIdle}, Span: span(ms, ms, ms)},
			Breakdown{Queue: Absent, Decode: Absent, Tail: Absent}},
		{"a non-streamed request has no TTFT to split",
			Result{E2E: 40 * ms, Span: span(ms, ms, ms)},
			Breakdown{Queue: Absent, Decode: Absent, Tail: Absent}},
		{"nothing timed by the server",
			Result{TTFT: 40 * ms, E2E: 50 * ms},
			Breakdown{Queue: Absent, Decode: Absent, Tail: Absent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Breakdown(); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// For a request split by its span, the parts add up to the client's
// TTFT and E2E exactly: the residual and the tail are what is left.
func TestBreakdownAddsUp(t *testing.T) {
	r := Result{TTFT: 333 * time.Millisecond, E2E: 2 * time.Second, Upload: 1234 * time.Microsecond,
		Span: &ServerSpan{Queue: 100 * time.Millisecond, Prefill: 77 * time.Millisecond, Decode: 1500 * time.Millisecond}}
	b := r.Breakdown()
	if sum := b.Upload + b.Residual + b.Queue + b.Prefill; sum != r.TTFT {
		t.Errorf("upload + residual + queue + prefill = %v, TTFT %v", sum, r.TTFT)
	}
	if sum := r.TTFT + b.Decode + b.Tail; sum != r.E2E {
		t.Errorf("TTFT + decode + tail = %v, E2E %v", sum, r.E2E)
	}
}
