package run

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/traces"
)

// spanJoin is the run's trace receiver and the joiner between it and the
// recording sink: a traced request reaches the collector as it ends, and
// its record and its breakdown once its span came or its wait ended.
type spanJoin struct {
	recv   *traces.Receiver
	join   *traces.Joiner
	listen string
	wait   time.Duration
	checks map[traces.TraceID]bool // the preflights' trace ids
	// checked counts the spans of the preflights' requests: llmload's
	// checks, no request of the load.
	checked atomic.Int64
}

// startSpans starts the receiver of c.Spans and hooks its joiner into
// sink; nil, nil without one. A port in use is an error before any load.
func (c *Config) startSpans(sink *recordingSink) (*spanJoin, error) {
	if c.Spans.Listen == "" {
		return nil, nil
	}
	wait := c.Spans.Wait
	if wait <= 0 {
		wait = traces.DefaultWait
	}
	s := &spanJoin{join: traces.NewJoiner(traces.JoinOptions{Wait: wait}, sink.joined), wait: wait, checks: map[traces.TraceID]bool{}}
	for _, id := range c.checkTraces {
		if t, ok := traces.ParseTraceID(id); ok {
			s.checks[t] = true
		}
	}
	var r *traces.Receiver
	var err error
	if ln := c.spansLn; ln != nil {
		c.spansLn = nil // the receiver's now, closed with it
		r, err = traces.Serve(ln, traces.Options{Deliver: s.deliver})
	} else {
		r, err = traces.Listen(c.Spans.Listen, traces.Options{Deliver: s.deliver})
	}
	if err != nil {
		return nil, fmt.Errorf("--otlp-traces-listen: %w", err)
	}
	sink.join = s.join
	s.recv, s.listen = r, r.Addr().String()
	if len(c.sims) > 0 {
		c.log("server spans: OTLP traces received at %s; the built-in simulator exports its spans there", s.listen)
	} else {
		c.log("server spans: OTLP traces received at %s (HTTP and gRPC); point the server there, e.g. vLLM --otlp-traces-endpoint http://%s",
			s.listen, s.listen)
	}
	return s, nil
}

// deliver hands the joiner a span, unless it is of a preflight request.
func (s *spanJoin) deliver(sp traces.Span) {
	if s.checks[sp.TraceID] {
		s.checked.Add(1)
		return
	}
	s.join.Span(sp)
}

// flushSims has the run's built-in simulators export the spans they
// hold, rather than at their batcher's next round seconds later.
func (c *Config) flushSims(s *spanJoin, aborted bool) {
	if s == nil || aborted {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.wait)
	defer cancel()
	for _, srv := range c.sims {
		if err := srv.FlushSpans(ctx); err != nil {
			c.log("built-in simulator: its spans: %v", err)
		}
	}
}

// stop waits for the spans of the last requests, at most one wait and
// not at all when the run was aborted or no span ever came (a server not
// exporting would only delay the result), then closes the receiver. The
// held requests go on to the sink either way.
func (s *spanJoin) stop(aborted bool) {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.wait+time.Second)
	if aborted || s.join.Stats().Spans == 0 {
		cancel()
	}
	s.join.Flush(ctx)
	cancel()
	_ = s.recv.Close()
}

// summary is the result's account of the spans; nil without a receiver.
func (s *spanJoin) summary() *result.ServerSpans {
	if s == nil {
		return nil
	}
	st := s.join.Stats().WithReceiver(s.recv.Stats())
	return &result.ServerSpans{Listen: s.listen, Spans: st.Spans, Joined: st.Joined - st.ByRequestID,
		ByRequestID: st.ByRequestID, Unjoined: st.Unjoined + st.Pending, Evicted: st.Evicted, Duplicates: st.Duplicates,
		Malformed: st.Malformed, Other: st.Other, Rejected: st.Rejected,
		Requests: st.Samples - st.Untraced, NoSpan: st.NoSpan + st.Held, Preflight: s.checked.Load()}
}

// negatives keeps the first requests whose residual was below zero, for
// the result to name. Safe for concurrent use.
type negatives struct {
	mu   sync.Mutex
	seen []result.NegativeResidual
}

// note keeps x when its breakdown's residual is negative, up to
// result.MaxNegativeExamples.
func (n *negatives) note(x *engine.Sample) {
	if x.Warmup || x.Dirty != "" || x.Err != nil || (x.Span == nil && x.Server == nil) {
		return
	}
	b := x.Breakdown()
	if !b.Negative {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.seen) < result.MaxNegativeExamples {
		n.seen = append(n.seen, result.NegativeResidual{Scenario: x.Scenario, Stage: x.Stage, RequestID: x.RequestID,
			TraceID: x.TraceID, Source: b.Source, TTFTMS: ms(x.TTFT), ResidualMS: ms(b.Residual)})
	}
}

func (n *negatives) list() []result.NegativeResidual {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seen
}
