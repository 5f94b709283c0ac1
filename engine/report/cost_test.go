package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/tokenize"
)

// spendFixture is a run the budget stopped: a warmup, two stages, setup,
// most counts from usage and a few of llmload's own.
func spendFixture() *cost.Summary {
	return &cost.Summary{Currency: "USD", InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Budget: 25,
		Total: 24.9812, Requests: 9003, Unbilled: 3, FromUsage: 8820, MaxRequest: 0.0123, Refused: 14,
		InputFrom:  map[string]int64{"usage": 8820, "tokenizer": 180},
		OutputFrom: map[string]int64{"usage": 8820, "events": 180},
		Stages: []cost.StageSpend{
			{Scenario: "sweep", Stage: "warmup", Warmup: true, Requests: 5, InputTokens: 4210, OutputTokens: 1000, Spend: 0.0276, FromUsage: 5},
			{Scenario: "sweep", Stage: "c1", Requests: 1200, InputTokens: 1010000, CachedTokens: 200000, OutputTokens: 240000, Spend: 6.09, FromUsage: 1200},
			{Scenario: "sweep", Stage: "c16", Requests: 7796, Unbilled: 3, InputTokens: 3120000, CachedTokens: 900000, OutputTokens: 780000, Spend: 18.3536, FromUsage: 7613},
		},
		Lifecycle:       &cost.StageSpend{Stage: cost.LifecycleStage, Requests: 2, InputTokens: 3000, OutputTokens: 200, Spend: 0.012, FromUsage: 2},
		StoppedByBudget: true, Stop: &cost.Stop{Committed: 24.9931, Next: 0.0123, InFlight: 16},
	}
}

func TestSpendGolden(t *testing.T) {
	meta, sum := singleFixture()
	r := result.New(meta, sum)
	r.Cost = spendFixture()
	var b strings.Builder
	if err := Text(r)(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	i := strings.Index(text, "\nspend (estimated)")
	if i < 0 {
		t.Fatalf("no spend in the summary:\n%s", text)
	}
	part := text[i+1:]
	if end := strings.Index(part, "\n\n"); end >= 0 {
		part = part[:end+1]
	}
	golden(t, "spend.txt.golden", []byte(part))
}

func TestSpendWithoutBudgetAndInHTMLAndJSON(t *testing.T) {
	meta, sum := singleFixture()
	r := result.New(meta, sum)
	s := spendFixture()
	s.Budget, s.StoppedByBudget, s.Stop = 0, false, nil
	r.Cost = s
	text := string(render(t, Text(r)))
	for _, want := range []string{"spend (estimated): 24.98 USD; input 3, cached input 0.3, output 15 USD per million tokens", cost.NoBudgetNote} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	html := string(render(t, HTML(r)))
	for _, want := range []string{"<h2>Spend (estimated)</h2>", "setup/teardown", "<td>18.35</td>", cost.NoBudgetNote} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if back.Cost == nil || back.Cost.Total != s.Total || len(back.Cost.Stages) != 3 || back.Cost.Lifecycle == nil {
		t.Errorf("cost read back %+v", back.Cost)
	}
	for _, key := range []string{`"cost":{"currency":"USD","input_per_mtok":3,"output_per_mtok":15,"cached_input_per_mtok":0.3,"total":24.9812`, `"from_usage":8820`, `"setup_teardown":{`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestUnpricedResultShowsNoSpend(t *testing.T) {
	meta, sum := singleFixture()
	r := result.New(meta, sum)
	if text := string(render(t, Text(r))); strings.Contains(text, "spend") {
		t.Errorf("an unpriced summary mentions spend:\n%s", text)
	}
	if html := string(render(t, HTML(r))); strings.Contains(html, "Spend") {
		t.Error("an unpriced HTML report has a spend section")
	}
}

func TestSpendPlanGolden(t *testing.T) {
	p := plan.Plan{
		Warmup: plan.Warmup{Requests: 5},
		Cost:   plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Currency: "USD", Budget: 25},
		Scenarios: []plan.Scenario{
			{Name: "open", Executor: plan.ExecutorConstantArrivalRate, Stages: []plan.Stage{{Name: "r2", Rate: 2, Duration: 60e9}}},
			{Name: "sweep", Executor: plan.ExecutorRampingVUs, Stages: []plan.Stage{{Name: "c4", Target: 4, Duration: 60e9}, {Name: "c8", Target: 8, Duration: 60e9}}},
		},
	}
	req := func(words, maxTokens int) *engine.ChatRequest {
		return &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: strings.Repeat("word ", words)}}, MaxTokens: maxTokens}
	}
	samples := []cost.Sampled{{Scenario: "open", Request: req(300, 200)}, {Scenario: "open", Iteration: 1, Request: req(100, 200)},
		{Scenario: "sweep", Request: req(50, 0)}}
	codec := tokenizeCodec(t)
	golden(t, "spend_plan.txt.golden", render(t, SpendPlan(cost.Plan(p, samples, codec))))
}

func tokenizeCodec(t *testing.T) tokenize.Codec {
	t.Helper()
	codec, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return codec
}
