package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// unreliableNote explains the * that marks a percentile, with both rules
// engine/metrics applies.
const unreliableNote = "* not reliable: too few samples for that percentile (p50 needs 20, p90 100, p95 200, p99 1000),\n" +
	"  or its 95% confidence interval is wider than 25% of the value\n"

const itlNote = "ITL = gap between chunks as a user sees them; ITL/tok = per token (chunk gap ÷ tokens it carried)\n"

// uploadNote explains the upload row, shown for stages with large bodies.
var uploadNote = fmt.Sprintf("upload = t0 to the request body's upload, inside TTFT: requests with media or a body of %d KB or more;\n"+
	"  acknowledged by the peer where the kernel says (a proxy that buffers acknowledges it early)\n", engine.LargeBody>>10)

type family struct {
	name string
	dist func(*metrics.StageSummary) metrics.Dist
	show func(*metrics.StageSummary) bool // nil: always
}

var (
	famTTFT   = family{"TTFT", func(s *metrics.StageSummary) metrics.Dist { return s.TTFT }, nil}
	famUpload = family{"upload", func(s *metrics.StageSummary) metrics.Dist { return s.Upload },
		func(s *metrics.StageSummary) bool { return s.Upload.Count > 0 }}
	famTTFC = family{"TTFC", func(s *metrics.StageSummary) metrics.Dist { return s.TTFC }, hadReasoning}
	famTPOT = family{"TPOT", func(s *metrics.StageSummary) metrics.Dist { return s.TPOT }, nil}
	famITL  = family{"ITL", func(s *metrics.StageSummary) metrics.Dist { return s.ITL }, nil}
	famITLT = family{"ITL/tok", func(s *metrics.StageSummary) metrics.Dist { return s.ITLToken },
		func(s *metrics.StageSummary) bool { return s.ITLToken.Count > 0 }}
	famE2E = family{"E2E", func(s *metrics.StageSummary) metrics.Dist { return s.E2E }, nil}
	// The @ts rows are shown for open-model runs: latencies measured from
	// the intended start, so waiting for a late start is not hidden.
	famTTFTSched = family{"TTFT@ts", func(s *metrics.StageSummary) metrics.Dist { return s.TTFTSched }, hasSched}
	famE2ESched  = family{"E2E@ts", func(s *metrics.StageSummary) metrics.Dist { return s.E2ESched }, hasSched}
)

var families = []family{famTTFT, famUpload, famTTFC, famTPOT, famITL, famITLT, famE2E, famTTFTSched, famE2ESched}

// hadReasoning is true when some request thought before answering, so
// that its first answer text came after its first text: only then is the
// TTFC row more than a copy of TTFT.
func hadReasoning(s *metrics.StageSummary) bool {
	c, t := s.TTFC, s.TTFT
	return c.Count > 0 && (s.ReasoningTokens > 0 || c.Count != t.Count || c.Mean != t.Mean || c.Max != t.Max)
}

func hasSched(s *metrics.StageSummary) bool { return s.TTFTSched.Count > 0 || s.E2ESched.Count > 0 }

// stageFamilies are the latency rows of one stage. A stage that sent only
// embeddings has E2E alone: nothing is generated, so no TTFT, TPOT or ITL
// is missing.
func stageFamilies(s *metrics.StageSummary) []family {
	embeddings := embeddingsOnly(s)
	return slices.DeleteFunc(slices.Clone(families), func(f family) bool {
		if embeddings && f.name != famE2E.name && f.name != famE2ESched.name {
			return true
		}
		return f.show != nil && !f.show(s)
	})
}

// embeddingsOnly reports a stage whose every request was an embeddings one.
func embeddingsOnly(s *metrics.StageSummary) bool {
	_, ok := s.ByAPI[engine.EndpointEmbeddings]
	return ok && len(s.ByAPI) == 1
}

// writeLatency writes the latency table and reports whether it starred a
// percentile.
func writeLatency(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) (starred bool) {
	b.WriteString("\n")
	tw := newTable(b)
	head, labels := leftColumn("latency ms", labels)
	names := familyNames(stages)
	row(tw, head, names[""], "p50 ", "p90 ", "p95 ", "p99 ", "max", "n", "p99 95% CI")
	blank := strings.Repeat(" ", len([]rune(head)))
	itlTok, upload := false, false
	for i := range stages {
		for j, f := range stageFamilies(&stages[i]) {
			label := blank
			if j == 0 {
				label = labels[i]
			}
			d := f.dist(&stages[i])
			starred = starred || anyStar(d, "p50", "p90", "p95", "p99")
			itlTok = itlTok || f.name == famITLT.name
			upload = upload || f.name == famUpload.name
			row(tw, label, names[f.name], fmtP(d, "p50", d.P50), fmtP(d, "p90", d.P90), fmtP(d, "p95", d.P95),
				fmtP(d, "p99", d.P99), textfmt.DistMS(d, d.Max), fmt.Sprint(d.Count), fmtCI(d, d.CI.P99))
		}
	}
	tw.Flush()
	if starred {
		b.WriteString(unreliableNote)
	}
	if itlTok {
		b.WriteString(itlNote)
	}
	if upload {
		b.WriteString(uploadNote)
	}
	if slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.TTFTSched.Count > 0 }) {
		b.WriteString("@ts: measured from the intended start (open model), so a late start is not hidden\n")
	}
	return starred
}

// familyNames pads the names of the rows shown, so that they read
// left-aligned in a right-aligning table; "" is the blank header.
func familyNames(stages []metrics.StageSummary) map[string]string {
	var shown []string
	for i := range stages {
		for _, f := range stageFamilies(&stages[i]) {
			if !slices.Contains(shown, f.name) {
				shown = append(shown, f.name)
			}
		}
	}
	padded := padRight(append([]string{""}, shown...))
	out := make(map[string]string, len(padded))
	for i, name := range append([]string{""}, shown...) {
		out[name] = padded[i] + " "
	}
	return out
}

// unreliable reports whether a percentile ("p99") should not be read as a
// figure. Results written before Dist.Unreliable existed only flag p99,
// through LowSamples.
func unreliable(d metrics.Dist, p string) bool {
	return slices.Contains(d.Unreliable, p) || (p == "p99" && d.LowSamples)
}

func anyStar(d metrics.Dist, ps ...string) bool {
	return d.Count > 0 && slices.ContainsFunc(ps, func(p string) bool { return unreliable(d, p) })
}

// fmtP prints a percentile with a trailing * when it is unreliable, or a
// space, so that digits stay aligned.
func fmtP(d metrics.Dist, p string, v float64) string {
	if d.Count == 0 {
		return "- "
	}
	if unreliable(d, p) {
		return textfmt.DistMS(d, v) + "*"
	}
	return textfmt.DistMS(d, v) + " "
}

// fmtCI prints a confidence interval as lo..hi; "-" when there is none
// (no samples, or a result written before intervals existed).
func fmtCI(d metrics.Dist, iv metrics.Interval) string {
	if d.Count == 0 || iv == (metrics.Interval{}) {
		return "-"
	}
	return textfmt.DistMS(d, iv[0]) + ".." + textfmt.DistMS(d, iv[1])
}
