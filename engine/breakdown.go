package engine

import "time"

// Sources of a request's Breakdown.
const (
	// BreakdownSpan: the server's trace span (queue and prefill from
	// vLLM's gen_ai.latency.time_in_queue and time_in_model_prefill).
	BreakdownSpan = "span"
	// BreakdownTimings: llama.cpp's "timings" (prompt_ms, predicted_ms);
	// they do not time the wait for a slot, which stays in the residual.
	BreakdownTimings = "timings"
)

// Breakdown is where one request's time went, from the client's TTFT and
// E2E and the server's own account of the request:
//
//	TTFT = Upload + Residual + Queue + Prefill
//	E2E  = TTFT + Decode + Tail
//
// Upload is the client's, from t0 to the body's last byte. Residual is
// what neither side timed: the network both ways, the server's HTTP front
// (parsing, tokenisation, routing) and the first token's way back. Tail
// is the last token's way back and the end of the stream. Connect comes
// before t0 and is in neither sum (DESIGN.md: TTFT starts at t0).
//
// A residual below zero means the server timed more than the client
// measured: clocks or definitions disagree (a server that counts its
// queue from before the request reached it, a gateway's retry). It is
// kept as measured, not clamped, and flagged by Negative.
type Breakdown struct {
	Source string // BreakdownSpan or BreakdownTimings; "" when there is none
	// Queue is Absent where the source does not time it (BreakdownTimings:
	// the wait for a slot is then in Residual); Decode and Tail are Absent
	// for a failed or non-streamed request, or a span without decode time.
	Upload, Residual, Queue, Prefill, Decode, Tail time.Duration
	Negative                                       bool
}

// Breakdown splits r's TTFT and E2E by its span, else by its server
// timings; Source is "" for a request with neither, a failed one, or one
// without a TTFT (not streamed).
func (r *Result) Breakdown() Breakdown {
	b := Breakdown{Queue: Absent, Decode: Absent, Tail: Absent}
	if r.Err != nil || r.TTFT <= 0 {
		return b
	}
	var decode time.Duration
	switch sp, t := r.Span, r.Server; {
	case sp != nil && sp.Queue >= 0 && sp.Prefill >= 0:
		b.Source, b.Queue, b.Prefill, decode = BreakdownSpan, sp.Queue, sp.Prefill, sp.Decode
	case t != nil && t.PromptMS >= 0:
		b.Source, b.Prefill = BreakdownTimings, msDuration(t.PromptMS)
		decode = Absent
		if t.PredictedMS >= 0 && t.PredictedN > 0 {
			decode = msDuration(t.PredictedMS)
		}
	default:
		return Breakdown{Queue: Absent, Decode: Absent, Tail: Absent}
	}
	b.Upload = max(r.Upload, 0)
	b.Residual = r.TTFT - b.Upload - b.Prefill
	if b.Queue > 0 {
		b.Residual -= b.Queue
	}
	b.Negative = b.Residual < 0
	if decode >= 0 && r.E2E >= r.TTFT {
		b.Decode, b.Tail = decode, r.E2E-r.TTFT-decode
	}
	return b
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
