package cost

import (
	"context"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// noopClient answers at once with usage, so a benchmark measures only
// what wraps it.
type noopClient struct{ res engine.Result }

func (n *noopClient) Chat(context.Context, *engine.ChatRequest) *engine.Result { return &n.res }

func benchRequest() *engine.ChatRequest {
	return &engine.ChatRequest{Messages: []engine.Message{{Role: "system", Content: "You are helpful."},
		{Role: "user", Content: strings.Repeat("token ", 2000)}}, MaxTokens: 200}
}

var usageResult = engine.Result{Status: 200, InputTokens: 2010, InputTokensSource: "usage", CachedTokens: 512,
	OutputTokens: 200, TokensSource: "usage"}

// BenchmarkDirect is the baseline: the inner client alone.
func BenchmarkDirect(b *testing.B) {
	c, req := &noopClient{usageResult}, benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		c.Chat(context.Background(), req)
	}
}

// BenchmarkGate is one request through the budget gate: its bounds and
// reservation before the inner client, its booking after.
func BenchmarkGate(b *testing.B) {
	m := NewMeter(plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Budget: 1e12})
	g, req := NewGate(&noopClient{usageResult}, m), benchRequest()
	ctx := WithLedger(context.Background(), m.Ledger("chat", "c1", false))
	b.ReportAllocs()
	for b.Loop() {
		g.Chat(ctx, req)
	}
}

// BenchmarkGateParallel is the gate under contention: every goroutine
// books into one meter.
func BenchmarkGateParallel(b *testing.B) {
	m := NewMeter(plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Budget: 1e12})
	g := NewGate(&noopClient{usageResult}, m)
	ctx := WithLedger(context.Background(), m.Ledger("chat", "c1", false))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := benchRequest()
		for pb.Next() {
			g.Chat(ctx, req)
		}
	})
}

// BenchmarkReserve is the part before the send: what a request's t0 and
// an open model's schedule lag wait for.
func BenchmarkReserve(b *testing.B) {
	m := NewMeter(plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, Budget: 1e12})
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		h, _ := m.Reserve(req)
		m.Settle(nil, h, req, nil)
	}
}

// BenchmarkLedgerPerIteration is the per-iteration cost of labelling a
// VU's context with its stage's ledger.
func BenchmarkLedgerPerIteration(b *testing.B) {
	m := NewMeter(plan.Cost{InputPerMTok: 3, OutputPerMTok: 15})
	b.ReportAllocs()
	for b.Loop() {
		_ = WithLedger(context.Background(), m.Ledger("chat", "c1", false))
	}
}
