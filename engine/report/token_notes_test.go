package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// TestTokenNotes: the token note is one per run whatever the number of
// stages: nothing when usage counted and the tokenizer agrees, one
// informational note with the fix when it does not, and a note naming the
// tokenizer when it counted for want of usage.
func TestTokenNotes(t *testing.T) {
	usage := func(ok int64, tc metrics.TokenCheck) metrics.StageSummary {
		return metrics.StageSummary{Scenario: "chat", Stage: "s", OK: ok, TokenCheck: tc,
			TokensSource: map[string]int64{engine.TokensFromUsage: ok}}
	}
	from := func(src string, ok int64) metrics.StageSummary {
		return metrics.StageSummary{Scenario: "chat", Stage: "s", OK: ok, TokensSource: map[string]int64{src: ok}}
	}
	agree := metrics.TokenCheck{Compared: 64, MeanRelDiff: 0.01}
	stories := metrics.TokenCheck{Compared: 64, Mismatched: 64, MeanRelDiff: 0.46}
	tests := []struct {
		name      string
		tokenizer string
		stages    []metrics.StageSummary
		want      []string // one entry per note, each a part of it
	}{
		{"usage, tokenizer agrees", "", []metrics.StageSummary{usage(80, agree), usage(80, agree)}, nil},
		{"usage, nothing compared", "none", []metrics.StageSummary{usage(80, metrics.TokenCheck{})}, nil},
		{"usage, tokenizer not the model's", "", []metrics.StageSummary{usage(64, stories), usage(16, metrics.TokenCheck{Compared: 16, Mismatched: 16, MeanRelDiff: 0.46})},
			[]string{"note: the offline tokenizer cl100k_base differs from the server's usage by 46.0% on average (80 of 80 requests " +
				"compared differ by more than 5%): it is not the model's tokenizer. Set options.target.tokenizer to the model's tokenizer.json " +
				`(or "none") to count exactly; output tokens are from the server's usage either way`}},
		{"usage, a few requests off", "", []metrics.StageSummary{usage(58, metrics.TokenCheck{Compared: 58, Mismatched: 3, MeanRelDiff: 0.021})},
			[]string{"note: the offline tokenizer cl100k_base differs from the server's usage by 2.1% on average (3 of 58 requests " +
				"compared differ by more than 5%). Set options.target.tokenizer to the model's tokenizer.json"}},
		{"usage, a tokenizer.json that disagrees", "/models/tok.json", []metrics.StageSummary{usage(64, stories)},
			[]string{"the offline tokenizer /models/tok.json differs from the server's usage by 46.0% on average (64 of 64 requests " +
				"compared differ by more than 5%): is it the served model's tokenizer.json? Output tokens are from the server's usage either way"}},
		{"no usage: the tokenizer counted", "o200k_base", []metrics.StageSummary{from(engine.TokensFromTokenizer, 30), from(engine.TokensFromTokenizer, 20)},
			[]string{"output tokens of 50 of 50 requests were counted by llmload's tokenizer o200k_base (the server sent no usage), " +
				"which may not be the model's: set options.target.tokenizer to the model's tokenizer.json to count exactly"}},
		{"no usage: the model's tokenizer.json counted", "/m/tokenizer.json", []metrics.StageSummary{from(engine.TokensFromTokenizer, 5)},
			[]string{"output tokens of 5 of 5 requests were counted by llmload's tokenizer /m/tokenizer.json (the server sent no usage)"}},
		{"no usage, no tokenizer", "none", []metrics.StageSummary{from(engine.TokensFromEvents, 7), from(engine.TokensFromEvents, 3)},
			[]string{"output tokens of 10 of 10 requests are counts of text events"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Result{Stages: tt.stages}
			r.Run.Tokenizer = tt.tokenizer
			got := tokenNotes(r)
			if len(got) != len(tt.want) {
				t.Fatalf("%d notes, want %d: %q", len(got), len(tt.want), got)
			}
			for i, part := range tt.want {
				if !strings.Contains(got[i], part) {
					t.Errorf("note %d = %q\nwant it to contain %q", i, got[i], part)
				}
			}
			var b bytes.Buffer
			writeTokenNotes(&b, r, nil)
			if text := b.String(); strings.Contains(text, "chat/s") || strings.Count(text, "\ntokens\n") > 1 {
				t.Errorf("the note names a stage or repeats:\n%s", text)
			}
			if tt.want == nil && b.Len() != 0 {
				t.Errorf("wrote %q, want nothing", b.String())
			}
		})
	}
}
