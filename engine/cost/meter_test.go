package cost

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/llmload/llmload/engine"
)

// fakeClient answers every request with usage: the prompt's InputBound
// less a quarter, and output tokens out (a share of max_tokens).
type fakeClient struct {
	out  func(req *engine.ChatRequest) int
	sent atomic.Int64
}

func (f *fakeClient) Chat(_ context.Context, req *engine.ChatRequest) *engine.Result {
	f.sent.Add(1)
	return &engine.Result{Status: 200, InputTokens: InputBound(req) * 3 / 4, InputTokensSource: engine.TokensFromUsage,
		OutputTokens: f.out(req), TokensSource: engine.TokensFromUsage}
}

func request(maxTokens int) *engine.ChatRequest {
	return &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: strings.Repeat("word ", 40)}}, MaxTokens: maxTokens}
}

func TestGateStopsSequentialRequestsWithinOneRequest(t *testing.T) {
	c := prices
	c.Budget = 0.05
	var stops atomic.Int64
	m := NewMeter(c, WithBudget(c.Budget, func(*BudgetReached) { stops.Add(1) }))
	inner := &fakeClient{out: func(r *engine.ChatRequest) int { return r.MaxTokens / 2 }}
	g := NewGate(inner, m)
	req := request(200)
	worst := Worst(c, InputBound(req), 200)
	refused := 0
	for range 1000 {
		if res := g.Chat(context.Background(), req); res.NotSent {
			refused++
			if res.Err == nil || !strings.HasPrefix(res.Err.Message, "spend budget reached") {
				t.Fatalf("refused with %+v", res.Err)
			}
		}
	}
	spent := m.Spent()
	if spent > c.Budget || spent <= c.Budget-worst {
		t.Errorf("spent %v: want within one request's worst case (%v) below the budget %v", spent, worst, c.Budget)
	}
	if got, want := inner.sent.Load()+int64(refused), int64(1000); got != want {
		t.Errorf("sent + refused = %d, want %d", got, want)
	}
	if stops.Load() != 1 {
		t.Errorf("onStop called %d times, want once", stops.Load())
	}
	s := m.Summary()
	if !s.StoppedByBudget || s.Refused != int64(refused) || s.Requests != inner.sent.Load() || !near(s.MaxRequest, worst) {
		t.Errorf("summary %+v: want stopped, %d refused, %d requests, max request %v", s, refused, inner.sent.Load(), worst)
	}
	if got, want := s.StopReason(), "spend budget reached: "+Money(spent)+" USD spent of 0.05 USD"; got != want {
		t.Errorf("StopReason = %q, want %q", got, want)
	}
}

// TestGateAccountsForRequestsInFlight holds 32 requests in flight at
// once, then lets them end: the budget counts their reservations, so the
// spend never passes it however many are in flight.
func TestGateAccountsForRequestsInFlight(t *testing.T) {
	c := prices
	c.Budget = 0.02
	m := NewMeter(c)
	release := make(chan struct{})
	inner := &blockingClient{fakeClient: fakeClient{out: func(r *engine.ChatRequest) int { return r.MaxTokens }}, release: release}
	g := NewGate(inner, m)
	req := request(100)
	worst := Worst(c, InputBound(req), 100)
	const vus = 32
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res := g.Chat(context.Background(), req)
				if res.NotSent {
					refused.Add(1)
					return
				}
			}
		}()
	}
	close(release)
	wg.Wait()
	spent := m.Spent()
	if spent > c.Budget {
		t.Errorf("spent %v over the budget %v", spent, c.Budget)
	}
	if low := c.Budget - (vus+1)*worst; spent < low {
		t.Errorf("spent %v: stopped more than the in-flight reservations (%v) short of the budget", spent, low)
	}
	if refused.Load() != vus {
		t.Errorf("%d VUs refused, want every one of %d", refused.Load(), vus)
	}
}

type blockingClient struct {
	fakeClient
	release <-chan struct{}
}

func (b *blockingClient) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	<-b.release
	return b.fakeClient.Chat(ctx, req)
}

// TestUnboundedRequestsStopWhenTheEstimateReachesTheBudget: without
// max_tokens a request reserves the longest answer seen so far, which may
// be short; the estimate reaching the budget stops the meter then.
func TestUnboundedRequestsStopWhenTheEstimateReachesTheBudget(t *testing.T) {
	c := prices
	c.Budget = 0.01
	m := NewMeter(c)
	n := 0
	inner := &fakeClient{out: func(*engine.ChatRequest) int { n++; return 100 * n }} // ever longer answers
	g := NewGate(inner, m)
	for range 100 {
		g.Chat(context.Background(), request(0))
	}
	s := m.Summary()
	if !s.StoppedByBudget || s.Unbounded == 0 {
		t.Fatalf("summary %+v: want stopped, with unbounded requests", s)
	}
	if m.Spent() > c.Budget+Worst(c, InputBound(request(0)), 100*n) {
		t.Errorf("spent %v: more than one answer over the budget %v", m.Spent(), c.Budget)
	}
}

func TestMeterBooksStagesAndSources(t *testing.T) {
	m := NewMeter(prices)
	g := NewGate(clientFunc(func(_ context.Context, req *engine.ChatRequest) *engine.Result {
		if req.MaxTokens == 1 {
			return &engine.Result{Status: 200, InputTokens: 10, InputTokensSource: "tokenizer", OutputTokens: 2, TokensSource: "events"}
		}
		if req.MaxTokens == 2 {
			return &engine.Result{Status: 503, Err: &engine.Error{Class: "http_5xx:503"}}
		}
		return &engine.Result{Status: 200, InputTokens: 100, CachedTokens: 40, InputTokensSource: "usage", OutputTokens: 10, TokensSource: "usage"}
	}), m)
	warm := WithLedger(context.Background(), m.Ledger("chat", "warmup", true))
	c1 := WithLedger(context.Background(), m.Ledger("chat", "c1", false))
	g.Chat(warm, request(10))
	for range 3 {
		g.Chat(c1, request(10))
	}
	g.Chat(c1, request(1))
	g.Chat(c1, request(2))
	g.Chat(context.Background(), request(10)) // setup()
	s := m.Summary()
	usage := Price(prices, Usage{Input: 100, Cached: 40, Output: 10, Billed: true})
	own := Price(prices, Usage{Input: 10, Output: 2, Billed: true})
	want := []StageSpend{
		{Scenario: "chat", Stage: "warmup", Warmup: true, Requests: 1, InputTokens: 100, CachedTokens: 40, OutputTokens: 10, Spend: usage, FromUsage: 1},
		{Scenario: "chat", Stage: "c1", Requests: 5, Unbilled: 1, InputTokens: 310, CachedTokens: 120, OutputTokens: 32, Spend: 3*usage + own, FromUsage: 3},
	}
	if len(s.Stages) != len(want) {
		t.Fatalf("stages %+v, want %+v", s.Stages, want)
	}
	for i := range want {
		got := s.Stages[i]
		if !near(got.Spend, want[i].Spend) {
			t.Errorf("stage %d spend %v, want %v", i, got.Spend, want[i].Spend)
		}
		got.Spend = want[i].Spend
		if got != want[i] {
			t.Errorf("stage %d = %+v, want %+v", i, got, want[i])
		}
	}
	if s.Lifecycle == nil || s.Lifecycle.Requests != 1 || s.Lifecycle.Stage != LifecycleStage {
		t.Errorf("setup/teardown %+v, want 1 request", s.Lifecycle)
	}
	if !near(s.Total, 5*usage+own) || s.Requests != 7 || s.Unbilled != 1 || s.FromUsage != 5 {
		t.Errorf("total %v over %d requests (%d unbilled, %d from usage), want %v over 7 (1, 5)", s.Total, s.Requests, s.Unbilled, s.FromUsage, 5*usage+own)
	}
	if got, want := s.Sources(), "from the server's usage for 83% of requests; 17% from llmload's own counts (input: tokenizer 1; output: events 1)"; got != want {
		t.Errorf("Sources = %q\nwant     %q", got, want)
	}
}

type clientFunc func(ctx context.Context, req *engine.ChatRequest) *engine.Result

func (f clientFunc) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	return f(ctx, req)
}

func TestMergeAddsSegments(t *testing.T) {
	a := &Summary{Currency: "USD", InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 3, Budget: 10, Cap: 5, Total: 1,
		Stages: []StageSpend{{Scenario: "s", Stage: "c1", Requests: 2, Spend: 1, FromUsage: 2}}, MaxRequest: 0.1}
	b := &Summary{Currency: "USD", InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 3, Budget: 10, Cap: 5, Total: 2,
		Stages: []StageSpend{{Scenario: "s", Stage: "c1", Requests: 3, Spend: 2, FromUsage: 1}}, MaxRequest: 0.2, StoppedByBudget: true}
	got, err := Merge([]*Summary{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 3 || got.Requests != 5 || got.FromUsage != 3 || got.MaxRequest != 0.2 || !got.StoppedByBudget || len(got.Stages) != 1 || got.Cap != 0 {
		t.Errorf("merged %+v", got)
	}
	c := *b
	c.OutputPerMTok = 10
	if _, err := Merge([]*Summary{a, &c}); err == nil {
		t.Error("segments priced differently merged")
	}
}
