package cost

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// wordCodec counts words: a tokenizer whose counts a test can make by hand.
type wordCodec struct{}

func (wordCodec) Count(s string) int       { return len(strings.Fields(s)) }
func (wordCodec) Encode(s string) []uint   { return make([]uint, len(strings.Fields(s))) }
func (wordCodec) Decode(ids []uint) string { return "" }
func (wordCodec) Name() string             { return "words" }

func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

func sample(scenario string, it int64, prompt, maxTokens int) Sampled {
	return Sampled{Scenario: scenario, Iteration: it, Request: &engine.ChatRequest{
		Messages: []engine.Message{{Role: "user", Content: words(prompt)}}, MaxTokens: maxTokens}}
}

// TestWorstCaseOfASmallPlanByHand: a warmup of 5, an open model of 20
// expected arrivals, 30 shared iterations of two requests, a closed
// model and setup's one request, each priced by hand.
func TestWorstCaseOfASmallPlanByHand(t *testing.T) {
	p := plan.Plan{
		Warmup: plan.Warmup{Requests: 5},
		Cost:   plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Budget: 1},
		Scenarios: []plan.Scenario{
			{Name: "open", Executor: plan.ExecutorConstantArrivalRate, Arrival: plan.ArrivalConstant,
				Stages: []plan.Stage{{Name: "r2", Rate: 2, Duration: 10 * time.Second}}},
			{Name: "iters", Executor: plan.ExecutorSharedIterations, VUs: 2, Iterations: 30,
				Stages: []plan.Stage{{Name: "all", Target: 2, Duration: time.Minute}}},
			{Name: "closed", Executor: plan.ExecutorConstantVUs,
				Stages: []plan.Stage{{Name: "c4", Target: 4, Duration: 10 * time.Second}}},
		},
	}
	samples := []Sampled{
		sample("open", 0, 4, 100), sample("open", 1, 10, 100), sample("open", 2, 6, 100),
		sample("iters", 0, 50, 20), sample("iters", 0, 70, 20), sample("iters", 1, 10, 20),
		sample("closed", 0, 100, 10),
		{Setup: true, Request: &engine.ChatRequest{Prompt: words(1000), MaxTokens: 1}},
	}
	w := Plan(p, samples, wordCodec{})
	open := (10*3 + 100*15) / 1e6 // the dearest of its three iterations
	iters := ((50+70)*3 + 40*15) / 1e6
	closed := (100*3 + 10*15) / 1e6
	setup := (1000*3 + 1*15) / 1e6
	want := []struct {
		name        string
		iterations  float64
		estimate    float64
		perIt, cost float64
	}{
		{"warmup", 5, 0, open, 5 * open}, // the first scenario's exec
		{"open", 21, 0, open, 21 * open}, // 20 evenly spaced, rounded up, and one
		{"iters", 30, 0, iters, 30 * iters},
		{"closed", 0, 40, closed, 0}, // 4 VUs × 10 s at one iteration a second
		{"setup", 1, 0, setup, setup},
	}
	if len(w.Parts) != len(want) {
		t.Fatalf("parts %+v", w.Parts)
	}
	for i, x := range want {
		got := w.Parts[i]
		if got.Name != x.name || got.Iterations != x.iterations || got.Estimate != x.estimate || !near(got.PerIteration, x.perIt) || !near(got.Worst, x.cost) {
			t.Errorf("part %d = %s: %v iterations (≈ %v), %v each, %v in all; want %s: %v (≈ %v), %v, %v",
				i, got.Name, got.Iterations, got.Estimate, got.PerIteration, got.Worst, x.name, x.iterations, x.estimate, x.perIt, x.cost)
		}
	}
	if c := w.Parts[3]; c.Unbounded == "" || !near(c.EstimateCost, 40*closed) {
		t.Errorf("closed model %+v: want unbounded, ≈ 40 iterations", c)
	}
	bound := 5*open + 21*open + 30*iters + setup
	if !w.Unbounded || !near(w.Bound, bound) || !near(w.Estimate, bound+40*closed) {
		t.Errorf("worst case %v (≈ %v), unbounded %v; want %v, ≈ %v, unbounded", w.Bound, w.Estimate, w.Unbounded, bound, bound+40*closed)
	}
	if got := w.Parts[2].Requests; got != 2 {
		t.Errorf("iters' dearest iteration sends %d requests, want 2", got)
	}
}

func TestWorstCaseBounds(t *testing.T) {
	poisson := plan.Scenario{Name: "p", Executor: plan.ExecutorConstantArrivalRate,
		Stages: []plan.Stage{{Name: "r", Rate: 10, Duration: 10 * time.Second}}}
	trace := plan.Scenario{Name: "t", Executor: plan.ExecutorTrace, Trace: &plan.Trace{Arrivals: make([]plan.TraceArrival, 7)}}
	perVU := plan.Scenario{Name: "v", Executor: plan.ExecutorPerVUIterations, VUs: 3, Iterations: 4}
	search := plan.Scenario{Name: "c", Executor: plan.ExecutorCapacity, Capacity: &plan.CapacitySearch{Load: plan.CapacityRate,
		Start: 1, Max: 10, Growth: 2, Warmup: 10 * time.Second, Window: 30 * time.Second, MaxWindow: 90 * time.Second}}
	tests := []struct {
		sc         plan.Scenario
		iterations float64
		unbounded  bool
	}{
		{poisson, 100 + 4*10, false}, // 100 expected, + 4√100
		{trace, 7, false},
		{perVU, 12, false},
		{search, 0, true},
	}
	for _, tt := range tests {
		p := plan.Plan{Cost: plan.Cost{InputPerMTok: 1, OutputPerMTok: 1}, Scenarios: []plan.Scenario{tt.sc}}
		w := Plan(p, []Sampled{sample(tt.sc.Name, 0, 5, 5)}, wordCodec{})
		part := w.Parts[0]
		if part.Iterations != tt.iterations || (part.Unbounded != "") != tt.unbounded || w.Unbounded != tt.unbounded {
			t.Errorf("%s: %v iterations, unbounded %q; want %v, unbounded %v", tt.sc.Name, part.Iterations, part.Unbounded, tt.iterations, tt.unbounded)
		}
	}
}

func TestWorstCaseWithoutMaxTokensIsUnbounded(t *testing.T) {
	p := plan.Plan{Cost: plan.Cost{InputPerMTok: 1, OutputPerMTok: 1},
		Scenarios: []plan.Scenario{{Name: "s", Executor: plan.ExecutorSharedIterations, VUs: 1, Iterations: 10}}}
	w := Plan(p, []Sampled{sample("s", 0, 5, 0)}, wordCodec{})
	if !w.Unbounded || !w.Parts[0].NoMaxTokens || len(w.Unestimated) != 1 {
		t.Errorf("worst case %+v: want unbounded for want of max_tokens", w)
	}
	w = Plan(p, nil, wordCodec{})
	if !w.Unbounded || w.Parts[0].Sampled != 0 {
		t.Errorf("worst case %+v with nothing sampled: want unbounded", w)
	}
}
