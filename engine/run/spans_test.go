package run

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// A receiver port in use is an error before any load, naming the flag and
// the address.
func TestSpansPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	col := metrics.NewCollector()
	defer col.Close()
	sink := &recordingSink{Collector: col}
	c := &Config{Spans: Spans{Listen: l.Addr().String(), Wait: time.Second}}
	s, err := c.startSpans(sink)
	if err == nil {
		s.stop(true)
		t.Fatal("a receiver started on a port in use")
	}
	if !strings.Contains(err.Error(), "--otlp-traces-listen") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Errorf("error %q, want the flag and %s named", err, l.Addr())
	}
	if sink.join != nil {
		t.Error("the sink holds samples for a receiver that never started")
	}
}

// The first negative residuals are kept, named by both ids; a request
// whose server timed less than the client measured, or timed nothing, is
// not.
func TestNegatives(t *testing.T) {
	const ms = time.Millisecond
	sample := func(ttft, queue time.Duration, id string) engine.Sample {
		return engine.Sample{Scenario: "s", Stage: "c8", Result: engine.Result{TTFT: ttft, E2E: 2 * ttft, RequestID: id,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
			Span:    &engine.ServerSpan{Queue: queue, Prefill: 10 * ms, Decode: engine.Absent, TTFT: engine.Absent, E2E: engine.Absent}}}
	}
	var n negatives
	for i := range result.MaxNegativeExamples + 5 {
		x := sample(50*ms, 45*ms, "neg")
		n.note(&x)
		y := sample(50*ms, 20*ms, "pos")
		n.note(&y)
		_ = i
	}
	untimed := engine.Sample{Result: engine.Result{TTFT: ms}}
	n.note(&untimed)
	got := n.list()
	if len(got) != result.MaxNegativeExamples {
		t.Fatalf("%d kept, want %d", len(got), result.MaxNegativeExamples)
	}
	if g := got[0]; g.RequestID != "neg" || g.TraceID == "" || g.ResidualMS != -5 || g.TTFTMS != 50 || g.Source != engine.BreakdownSpan {
		t.Errorf("kept %+v", g)
	}
	// llama.cpp's timings, with no receiver at all, are named too.
	var byTimings negatives
	x := engine.Sample{Scenario: "s", Stage: "c8", Result: engine.Result{TTFT: 50 * ms, E2E: 60 * ms, RequestID: "chatcmpl-1",
		Server: &engine.ServerTimings{PromptN: 10, PromptMS: 55, PredictedN: 2, PredictedMS: 5, PredictedPerTokenMS: 5}}}
	byTimings.note(&x)
	if got := byTimings.list(); len(got) != 1 || got[0].RequestID != "chatcmpl-1" || got[0].Source != engine.BreakdownTimings || got[0].ResidualMS >= 0 {
		t.Errorf("a negative residual by timings kept as %+v", got)
	}
}

// With no target, the built-in simulator exports its spans to the run's
// own receiver: every request of the load meets its span, the
// preflight's are counted apart, and the stage is split from spans: the
// run flushes the simulator's spans rather than waiting for its batcher.
func TestBuiltInSimulatorSpans(t *testing.T) {
	p := testPlan(400 * time.Millisecond)
	r := &fakeRunner{}
	r.iterate = func(ctx context.Context, it engine.Iteration) error {
		res := r.deps.Client.Chat(ctx, &engine.ChatRequest{Model: r.deps.Model, MaxTokens: 4,
			Messages: []engine.Message{{Role: "user", Content: "hello"}}})
		r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Result: *res})
		return nil
	}
	cfg := testConfig(t, p, r)
	cfg.Client = nil
	cfg.Spans = Spans{Listen: "127.0.0.1:0", Wait: 20 * time.Second}
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's batcher exports every 5 s, after the load ended: the
	// spans are all there only because the run flushed them.
	sp := res.ServerSpans
	if sp == nil || sp.Requests == 0 || sp.Joined != sp.Requests || sp.NoSpan != 0 || sp.Preflight == 0 || sp.Unjoined != 0 {
		t.Fatalf("server spans %+v", sp)
	}
	st := res.Stages[0]
	if st.Breakdown == nil || st.Breakdown.FromSpans != st.Requests || st.Requests != sp.Requests {
		t.Errorf("stage %d requests, breakdown %+v", st.Requests, st.Breakdown)
	}
}
