package result

import "github.com/llmload/llmload/engine/servermetrics"

// ServerSpans is what the run's OTLP trace receiver took and how its spans met
// the requests: every span is accounted for, joined or not.
type ServerSpans struct {
	// Listen is the receiver's address, as the server's
	// --otlp-traces-endpoint should name it.
	Listen string `json:"listen"`
	// Spans are the request spans received (each once; Duplicates apart).
	// Joined of them met their request by trace id, ByRequestID by the
	// server's request id (the server did not continue the trace);
	// Unjoined met none by the end, Evicted were dropped unjoined when the
	// cap on waiting spans was reached.
	Spans       int64 `json:"spans"`
	Joined      int64 `json:"joined"`
	ByRequestID int64 `json:"by_request_id"`
	Unjoined    int64 `json:"unjoined"`
	Evicted     int64 `json:"evicted"`
	Duplicates  int64 `json:"duplicates"`
	// Malformed spans carried a request attribute that was not a number
	// (that part is left out, the span still joined); Other spans carried
	// none of the request attributes (not a request's span). Rejected
	// payloads could not be decoded at all.
	Malformed int64 `json:"malformed"`
	Other     int64 `json:"other"`
	Rejected  int64 `json:"rejected"`
	// Preflight spans are of the preflight's requests: llmload's checks
	// of the target before the load, no request of it.
	Preflight int64 `json:"preflight,omitempty"`
	// Requests are the requests that carried a trace id; NoSpan of them
	// got no span within the wait.
	Requests int64 `json:"requests"`
	NoSpan   int64 `json:"no_span"`
}

// NegativeResidual is one request whose server-side parts (from its span
// or from llama.cpp's timings) exceeded its client TTFT: named by both
// ids, so it can be found in the server's log.
type NegativeResidual struct {
	Scenario   string  `json:"scenario"`
	Stage      string  `json:"stage"`
	RequestID  string  `json:"request_id,omitempty"`
	TraceID    string  `json:"trace_id,omitempty"`
	Source     string  `json:"source"`
	TTFTMS     float64 `json:"ttft_ms"`
	ResidualMS float64 `json:"residual_ms"`
}

// MaxNegativeExamples bounds Result.NegativeResiduals.
const MaxNegativeExamples = 10

// StageServerParts is one stage's queue, prefill and decode as the
// server's /metrics histograms give them over the stage's window (vLLM's
// request_queue_time, request_prefill_time, request_decode_time): per
// stage, not per request, so no residual.
type StageServerParts struct {
	Scenario string `json:"scenario"`
	Stage    string `json:"stage"`
	servermetrics.Parts
}

// AddServerParts fills ServerParts from ServerMetrics, for every stage
// whose window the server's histograms cover; none without them.
func (r *Result) AddServerParts() {
	r.ServerParts = nil
	if r.ServerMetrics == nil || r.Run.Start.IsZero() {
		return
	}
	for _, st := range r.Stages {
		if st.Start.IsZero() {
			continue
		}
		from, to := st.Start.Sub(r.Run.Start).Seconds(), st.End.Sub(r.Run.Start).Seconds()
		if p, ok := servermetrics.StageParts(r.ServerMetrics, from, to); ok {
			r.ServerParts = append(r.ServerParts, StageServerParts{Scenario: st.Scenario, Stage: st.Stage, Parts: p})
		}
	}
}
