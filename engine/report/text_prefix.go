package report

import (
	"bytes"

	"github.com/llmload/llmload/engine/metrics"
)

// writePrefixTargets sets, per stage, the prefix-cache hit share that
// prompts built for one asked beside what the server served of the same
// requests, so that a run at a target hit rate shows whether it got it.
func writePrefixTargets(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	lines := prefixTargetLines(stages, labels)
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n")
	for _, l := range lines {
		b.WriteString(wrap(l, "", "  ", maxWidth))
	}
	b.WriteString(wrap(prefixTargetNote, "", "  ", maxWidth))
}

// prefixTargetLines are "prefix cache: asked 60.0% of input tokens,
// server served 58.3% (cached_tokens)", one per stage whose prompts asked
// a share, each naming its stage when there are several.
func prefixTargetLines(stages []metrics.StageSummary, labels []string) []string {
	n := 0
	for i := range stages {
		if stages[i].PrefixTarget != nil {
			n++
		}
	}
	var out []string
	for i := range stages {
		t := stages[i].PrefixTarget
		if t == nil {
			continue
		}
		head := "prefix cache: "
		if n > 1 {
			head = "prefix cache, " + labels[i] + ": "
		}
		out = append(out, head+prefixTargetText(t))
	}
	return out
}

// prefixTargetText is the asked share beside the served one, or beside
// "did not report" when the server gave no cached_tokens: a server that
// never says is not one that never hits, so it is never shown as 0%.
func prefixTargetText(t *metrics.PrefixTarget) string {
	asked := "asked " + pct(t.AskedShare) + " of input tokens, "
	if t.ServedShare == nil {
		return asked + "the server did not report cached tokens (no cached_tokens in its usage)"
	}
	return asked + "server served " + pct(*t.ServedShare) + " (cached_tokens)"
}

// prefixTargetNote says what "asked" is and why the server's share
// reads a little lower (docs/scenarios.md has the arithmetic).
const prefixTargetNote = "asked: the share of the prompts' tokens built to repeat a shared prefix (llm.synthetic's prefix_hit); " +
	"a server serves whole cache blocks and counts its chat template, so its share reads a little lower " +
	"(1.7 points at 60% of 500-token chat prompts in 16-token blocks)"
