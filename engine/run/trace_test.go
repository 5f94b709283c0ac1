package run

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/result"
)

// TestRunKeepsTraces: the traces the config describes reach the result
// and its file, with the server's hit share from the scenario's stage.
func TestRunKeepsTraces(t *testing.T) {
	var r fakeRunner
	r.iterate = func(ctx context.Context, it engine.Iteration) error {
		res := *r.deps.Client.Chat(ctx, &engine.ChatRequest{Model: r.deps.Model})
		res.InputTokens, res.InputTokensSource, res.CachedTokens = 400, engine.TokensFromUsage, 100
		r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Result: res})
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	var summary strings.Builder
	cfg := testConfig(t, testPlan(200*time.Millisecond), &r)
	cfg.Summary = &summary
	cfg.Traces = []result.Trace{{Scenario: "s", Source: "t.jsonl (mooncake)", Digest: "d1", Speedup: 1, Records: 3,
		WithHashIDs: 3, BlockTokens: 16, PrefixReuse: 0.5}}
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 || res.Traces[0].Digest != "d1" {
		t.Fatalf("traces = %+v, want the config's", res.Traces)
	}
	if s := res.Traces[0].ServerPrefixHitShare; s == nil || *s != 0.25 {
		t.Errorf("server share = %v, want 0.25 (100 of 400 tokens)", s)
	}
	if got := readBack(t, cfg.Outputs.Out).Traces; len(got) != 1 || got[0].ServerPrefixHitShare == nil {
		t.Errorf("file's traces = %+v, want the trace with the server's share", got)
	}
	if want := "prefix reuse: trace 50.0% (an infinite cache) · server 25.0%"; !strings.Contains(summary.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, summary.String())
	}
}
