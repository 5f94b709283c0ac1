package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// prefixResult is a run of stages c1 and c4 whose prompts asked 60% of
// their 500 tokens from the prefix cache; the server served 288 of 507
// (its chat template's 7 tokens included) when it reports cached tokens
// at all, and c4 sends also prompts that asked nothing.
func prefixResult(t testing.TB, reports bool) *result.Result {
	t.Helper()
	col := metrics.NewCollector()
	for i, stage := range []string{"c1", "c4"} {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		col.StageStarted(engine.StageMark{Scenario: "s", Stage: stage, Index: i, Target: 1, At: at})
		for k := range 10 {
			res := engine.Result{Start: at.Add(time.Duration(k) * time.Second), Status: 200, TTFB: 20 * time.Millisecond,
				TTFT: 40 * time.Millisecond, TTFC: 40 * time.Millisecond, E2E: 500 * time.Millisecond,
				OutputTokens: 10, InputTokens: 507, TokensSource: engine.TokensFromUsage, InputTokensSource: engine.TokensFromUsage}
			if reports {
				res.CachedTokens = 288
			}
			s := engine.Sample{Scenario: "s", Stage: stage, Result: res, PrefixAsked: engine.PrefixAsked{Shared: 300, Tokens: 500}}
			if stage == "c4" && k%2 == 1 {
				s.PrefixAsked, s.CachedTokens = engine.PrefixAsked{}, 0
			}
			col.Sample(s)
		}
		col.StageEnded(engine.StageMark{Scenario: "s", Stage: stage, Index: i, At: at.Add(10 * time.Second)})
	}
	meta := result.Meta{Scenario: "prefix.lua", Model: "sim-7b", Simulator: true, Start: t0,
		End: t0.Add(20 * time.Second), Version: "v0.1.0", Complete: true, Seed: 7}
	return result.New(meta, col.Close())
}

// TestPrefixTargetReport: the summary and the HTML report set the asked
// share beside the served one per stage, over the requests that asked,
// and say "did not report" rather than 0% for a server without
// cached_tokens.
func TestPrefixTargetReport(t *testing.T) {
	tests := map[string]struct {
		reports  bool
		want     []string
		dontWant []string
	}{
		"served": {reports: true, want: []string{
			"prefix cache, c1: asked 60.0% of input tokens, server served 56.8% (cached_tokens)\n",
			"prefix cache, c4: asked 60.0% of input tokens, server served 56.8% (cached_tokens)\n",
			"asked: the share of the prompts' tokens built to repeat a shared prefix",
		}},
		"not reported": {reports: false, want: []string{
			"prefix cache, c1: asked 60.0% of input tokens, the server did not report cached tokens (no cached_tokens in its usage)\n",
		}, dontWant: []string{"served", "cached_tokens)"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := prefixResult(t, tt.reports)
			text, html := string(render(t, Text(r))), string(render(t, HTML(r)))
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the summary lacks %q:\n%s", w, text)
				}
				if w = strings.TrimSuffix(w, "\n"); !strings.Contains(html, htmlEscape(w)) {
					t.Errorf("the HTML report lacks %q", w)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(text, w) {
					t.Errorf("the summary has %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestPrefixTargetOneStage: a single stage's line names no stage, and a
// run whose prompts asked nothing has no such line.
func TestPrefixTargetOneStage(t *testing.T) {
	one := prefixTargetLines([]metrics.StageSummary{{Stage: "c1", PrefixTarget: &metrics.PrefixTarget{AskedShare: 0.3}}}, []string{"c1"})
	if want := "prefix cache: asked 30.0% of input tokens, the server did not report cached tokens (no cached_tokens in its usage)"; len(one) != 1 || one[0] != want {
		t.Errorf("lines = %q, want [%q]", one, want)
	}
	if got := prefixTargetLines([]metrics.StageSummary{{Stage: "c1"}}, []string{"c1"}); got != nil {
		t.Errorf("lines without a target = %q, want none", got)
	}
}

// htmlEscape is what html/template makes of a note's apostrophes.
func htmlEscape(s string) string { return strings.ReplaceAll(s, "'", "&#39;") }
