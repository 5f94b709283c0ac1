package run

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/plan"
)

var testPrices = plan.Cost{InputPerMTok: 3, CachedInputPerMTok: 0.3, OutputPerMTok: 15, Currency: "USD"}

// usageClient answers with usage: 500 prompt tokens, 100 of them cached,
// and half of max_tokens generated.
type usageClient struct{}

func (usageClient) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	return &engine.Result{Start: time.Now(), Status: 200, TTFT: time.Millisecond, E2E: 2 * time.Millisecond,
		InputTokens: 500, InputTokensSource: engine.TokensFromUsage, CachedTokens: 100,
		OutputTokens: req.MaxTokens / 2, TokensSource: engine.TokensFromUsage, FinishReason: "stop", Streamed: true}
}

// sendOne is an iteration that sends one request of max_tokens 200 and
// records its sample, as luabind's llm.chat does.
func sendOne(deps *RunnerDeps) func(ctx context.Context, it engine.Iteration) error {
	return func(ctx context.Context, it engine.Iteration) error {
		req := &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: strings.Repeat("x", 2000)}}, MaxTokens: 200}
		res := deps.Client.Chat(ctx, req)
		if !res.NotSent {
			deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: *res})
		}
		return nil
	}
}

func iterationsPlan(vus, iterations int) plan.Plan {
	return plan.Plan{Script: "fake.lua", Seed: 1, Target: plan.Target{Model: "m"},
		Scenarios: []plan.Scenario{{
			Name: "s", Executor: plan.ExecutorSharedIterations, Exec: "chat", VUs: vus, Iterations: iterations,
			Stages: []plan.Stage{{Name: "all", Target: vus, Duration: time.Minute}}, GracefulStop: time.Second,
		}}}
}

func TestBudgetStopsTheRunLikeAnAbortingThreshold(t *testing.T) {
	p := iterationsPlan(8, 100000)
	p.Cost = testPrices
	p.Cost.Budget = 0.5
	r := &fakeRunner{}
	r.iterate = sendOne(&r.deps)
	cfg := testConfig(t, p, r)
	cfg.Client = usageClient{}
	var summary strings.Builder
	cfg.Summary = &summary
	res, out, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != GateFailed || !strings.HasPrefix(out.Reason, "spend budget reached: ") {
		t.Errorf("outcome %+v, want the budget's gate failure", out)
	}
	back := readBack(t, cfg.Outputs.Out)
	c := back.Cost
	if c == nil || !c.StoppedByBudget {
		t.Fatalf("result file's cost %+v: want stopped by the budget", c)
	}
	if c.Total > p.Cost.Budget {
		t.Errorf("spent %v over the budget %v", c.Total, p.Cost.Budget)
	}
	worst := cost.Worst(p.Cost, cost.InputBound(&engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: strings.Repeat("x", 2000)}}}), 200)
	if !near(c.MaxRequest, worst) || c.Total < p.Cost.Budget-9*worst {
		t.Errorf("spent %v, max request %v: want within 9 requests' worst case (%v) of %v", c.Total, c.MaxRequest, worst, p.Cost.Budget)
	}
	if back.Run.Complete || !strings.HasPrefix(back.Run.Aborted, "spend budget reached: "+cost.Money(c.Total)+" USD spent of 0.5 USD") {
		t.Errorf("run complete %v, aborted %q: want incomplete, the budget's reason", back.Run.Complete, back.Run.Aborted)
	}
	// Every request the budget let through is a sample; none it refused.
	if got, want := res.Stages[0].Requests, c.Requests; got != want {
		t.Errorf("%d samples, %d requests metered", got, want)
	}
	if !strings.Contains(summary.String(), "spend (estimated): ") || !strings.Contains(summary.String(), "budget: the run stopped before sending") {
		t.Errorf("summary lacks the spend:\n%s", summary.String())
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestPriceWithoutBudgetIsExplained(t *testing.T) {
	p := iterationsPlan(2, 10)
	p.Cost = testPrices
	r := &fakeRunner{}
	r.iterate = sendOne(&r.deps)
	cfg := testConfig(t, p, r)
	cfg.Client = usageClient{}
	var logs, summary strings.Builder
	cfg.Log = func(format string, a ...any) { fmt.Fprintf(&logs, format+"\n", a...) }
	cfg.Summary = &summary
	res, out, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != Passed {
		t.Errorf("outcome %+v, want passed", out)
	}
	// Ten requests of 400 + 100 cached prompt tokens and 100 output tokens.
	want := 10 * (400*3 + 100*0.3 + 100*15) / 1e6
	if res.Cost == nil || !near(res.Cost.Total, want) || res.Cost.StoppedByBudget {
		t.Errorf("cost %+v, want %v in all, not stopped", res.Cost, want)
	}
	for name, text := range map[string]string{"log": logs.String(), "summary": summary.String()} {
		if !strings.Contains(text, cost.NoBudgetNote) {
			t.Errorf("the %s does not explain the missing budget:\n%s", name, text)
		}
	}
}

func TestUnpricedRunHasNoCost(t *testing.T) {
	r := &fakeRunner{}
	r.iterate = sendOne(&r.deps)
	cfg := testConfig(t, iterationsPlan(1, 3), r)
	cfg.Client = usageClient{}
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cost != nil {
		t.Errorf("cost %+v without prices", res.Cost)
	}
	if _, isGate := r.deps.Client.(*cost.Gate); isGate {
		t.Error("an unpriced run's VUs send through the budget gate")
	}
}

// record is the part of a per-request JSON line the hand computation reads.
type record struct {
	Stage        string `json:"stage"`
	Warmup       bool   `json:"warmup"`
	Status       *int   `json:"status"`
	InputTokens  *int   `json:"input_tokens"`
	InputSource  string `json:"input_tokens_source"`
	CachedTokens *int   `json:"cached_tokens"`
	OutputTokens *int   `json:"output_tokens"`
	TokensSource string `json:"tokens_source"`
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// TestSpendMatchesAHandComputationOnTheSimulator runs requests that share
// a long prefix against the built-in simulator (which sends usage, cached
// tokens included), a warmup first, and computes every stage's spend by
// hand from the per-request records: the cached prompt tokens at the
// cached price, the rest at the input price, the output at the output
// price.
func TestSpendMatchesAHandComputationOnTheSimulator(t *testing.T) {
	p := iterationsPlan(2, 12)
	p.Target = plan.Target{Tokenizer: plan.DefaultTokenizer}
	p.Warmup = plan.Warmup{Requests: 3}
	p.Cost = testPrices
	prefix := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 60)
	r := &fakeRunner{}
	r.iterate = func(ctx context.Context, it engine.Iteration) error {
		req := &engine.ChatRequest{Model: r.deps.Model, MaxTokens: 24,
			Messages: []engine.Message{{Role: "user", Content: prefix + it.Stage + " question " + string(rune('a'+it.Iteration%26))}}}
		res := r.deps.Client.Chat(ctx, req)
		r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: *res})
		return nil
	}
	dir := t.TempDir()
	cfg := Config{Plan: p, NewRunner: func(d RunnerDeps) engine.Runner { r.deps = d; return r },
		Outputs: Outputs{Out: filepath.Join(dir, "result.json"), JSONL: filepath.Join(dir, "requests.jsonl")}}
	res, out, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != Passed {
		t.Fatalf("outcome %+v", out)
	}
	byStage := map[string]float64{}
	requests, cached := 0, 0
	for _, rec := range readRecords(t, cfg.Outputs.JSONL) {
		if rec.InputSource != engine.TokensFromUsage || rec.TokensSource != engine.TokensFromUsage || deref(rec.Status) != 200 {
			t.Fatalf("record %+v: want a 200 with usage", rec)
		}
		in, c, o := deref(rec.InputTokens), deref(rec.CachedTokens), deref(rec.OutputTokens)
		byStage[rec.Stage] += (float64(in-c)*3 + float64(c)*0.3 + float64(o)*15) / 1e6
		requests++
		cached += c
	}
	if requests != 15 || cached == 0 {
		t.Fatalf("%d records with %d cached tokens: want 15 (3 warmup), some cached", requests, cached)
	}
	s := res.Cost
	if s == nil || len(s.Stages) != 2 {
		t.Fatalf("cost %+v: want the warmup and one stage", s)
	}
	total := 0.0
	for _, st := range s.Stages {
		if !near(st.Spend, byStage[st.Stage]) {
			t.Errorf("stage %s: %v, by hand %v", st.Stage, st.Spend, byStage[st.Stage])
		}
		total += byStage[st.Stage]
	}
	if !near(s.Total, total) || s.FromUsage != 15 || s.Sources() != "from the server's usage for every request" {
		t.Errorf("total %v (by hand %v), %d from usage, %q", s.Total, total, s.FromUsage, s.Sources())
	}
}

func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// TestSegmentStopsAtItsShareOfTheBudget: a segment of four caps at a
// quarter of the budget, so the segments together stay within it.
func TestSegmentStopsAtItsShareOfTheBudget(t *testing.T) {
	p := iterationsPlan(1, 1)
	p.Cost = testPrices
	p.Cost.Budget = 1
	p.Segment = plan.Segment{Index: 1, Count: 4}
	s := (&Config{Plan: p}).newSpend(func(error) {})
	if got := s.summary(); got.Budget != 1 || got.Cap != 0.25 {
		t.Errorf("budget %v, cap %v; want 1 and a quarter of it", got.Budget, got.Cap)
	}
	if (&Config{Plan: iterationsPlan(1, 1)}).newSpend(func(error) {}) != nil {
		t.Error("an unpriced plan has a meter")
	}
}
