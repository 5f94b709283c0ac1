package report

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeTraces describes each replayed trace: which records ran and how
// fast, their lengths, sessions and blocks, and the prefix reuse the
// trace describes beside the hit share the server reported, so that a
// reader can tell a cold cache from a workload that shares nothing.
func writeTraces(b *bytes.Buffer, r *result.Result) {
	for i := range r.Traces {
		t := &r.Traces[i]
		b.WriteString("\n")
		head := traceHeadline(t)
		if len(r.Traces) > 1 {
			head = t.Scenario + ": " + head
		}
		// One line however long, like a table row: the source is the user's
		// path, and the headline is what one greps a log for.
		b.WriteString("replay  " + head + "\n")
		if s := sliceLine(t); s != "" {
			b.WriteString(traceIndent + s + "\n")
		}
		writeTraceLengths(b, t, traceIndent)
		for _, line := range append(traceLines(t), prefixReuseLine(t)) {
			b.WriteString(wrap(line, traceIndent, traceIndent+"  ", maxWidth))
		}
	}
}

// traceIndent aligns a trace's lines under its source.
const traceIndent = "        "

// writeTraceLengths is the records' input and output lengths, one row
// each, indented by indent (at least two spaces).
func writeTraceLengths(b *bytes.Buffer, t *result.Trace, indent string) {
	if !described(t) {
		return
	}
	// The table's padding adds two columns before the first cell.
	in := indent[2:]
	head, names := leftColumn(in+"lengths", []string{in + "input tokens", in + "output tokens"})
	tw := newTable(b)
	row(tw, head, "mean", "p50", "p90", "p99", "max")
	for i, l := range []result.TraceLengths{t.Input, t.Output} {
		row(tw, names[i], fmt.Sprintf("%.0f", l.Mean), fmt.Sprint(l.P50), fmt.Sprint(l.P90), fmt.Sprint(l.P99), fmt.Sprint(l.Max))
	}
	tw.Flush()
}

// traceHeadline says what was replayed: "data/t.jsonl (mooncake), 200
// records over 3.99 s at 1× (digest ...)", with the replay's own length
// when it was sped up or slowed down.
func traceHeadline(t *result.Trace) string {
	s := fmt.Sprintf("%s, %s over %.2f s at %s", t.Source, textfmt.Count(int64(t.Records), "record", "records"),
		t.SpanS, speedupText(t.Speedup))
	switch {
	case t.Children > 0:
		// Children start at their parents' answers: the server sets the length.
		s += fmt.Sprintf(", replayed in at least %.2f s (longer as the answers take time)", t.DurationS)
	case t.Speedup != 1:
		s += fmt.Sprintf(", replayed in %.2f s", t.DurationS)
	}
	return s + " (digest " + t.Digest + ")"
}

// sliceLine says which part of the file a scenario replayed; "" for all.
func sliceLine(t *result.Trace) string {
	switch {
	case t.TimeOffsetS > 0 && t.Limit > 0:
		return fmt.Sprintf("slice: from %s s into the trace, at most %d records (time_offset, limit)", trimZeros(t.TimeOffsetS), t.Limit)
	case t.TimeOffsetS > 0:
		return fmt.Sprintf("slice: from %s s into the trace (time_offset)", trimZeros(t.TimeOffsetS))
	case t.Limit > 0:
		return fmt.Sprintf("slice: the first %d records (limit)", t.Limit)
	}
	return ""
}

// speedupText is "1×", "0.2×", "2.5×".
func speedupText(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + "×" }

// traceLines are the sessions and the blocks, one line each; a line that
// has nothing to say is left out.
func traceLines(t *result.Trace) []string {
	var out []string
	switch {
	case t.Conversations:
		out = append(out, fmt.Sprintf("sessions: %d, replayed as conversations (each session's records in order, on one VU)", t.Sessions))
	case t.Sessions > 0:
		out = append(out, fmt.Sprintf("sessions: %d in the records, each record sent on its own (sessions = true replays them as conversations)", t.Sessions))
	}
	if t.Children > 0 {
		out = append(out, fmt.Sprintf("trees: %d of %d records start at their parent's answer plus the recorded gap, so a slow server stretches the replay",
			t.Children, t.Records))
	}
	if t.WarmTurns > 0 {
		out = append(out, fmt.Sprintf("warm_turns %d: the first %d turns of each session (levels of each tree) run as warmup, out of the figures",
			t.WarmTurns, t.WarmTurns))
	}
	if t.WithHashIDs > 0 {
		out = append(out, fmt.Sprintf("prefix blocks: %d tokens each, %d unique, in %d of %d records",
			t.BlockTokens, t.UniqueBlocks, t.WithHashIDs, t.Records))
	}
	return out
}

// described reports a Trace with its records' figures, which a plan
// printed from an engine.Trace alone lacks.
func described(t *result.Trace) bool {
	return t.Records > 0 && (t.Input.Max > 0 || t.Output.Max > 0)
}

// traceReuse is the prefix reuse the trace describes: "trace 62.1% (an
// infinite cache)".
func traceReuse(t *result.Trace) string {
	if t.WithHashIDs == 0 {
		return "the trace has no hash ids, so it describes no sharing"
	}
	return "trace " + pct(t.PrefixReuse) + " (an infinite cache)"
}

// prefixReuseLine sets the trace's own prefix reuse beside the server's
// hit share: "prefix reuse: trace 62.1% (an infinite cache) · server
// 58.3% (cached_tokens of usage)".
func prefixReuseLine(t *result.Trace) string {
	trace := traceReuse(t)
	server := "the server did not report cached tokens (no cached_tokens in its usage)"
	if s := t.ServerPrefixHitShare; s != nil {
		server = "server " + pct(*s) + " (cached_tokens of usage)"
	}
	return "prefix reuse: " + trace + " · " + server
}

func pct(share float64) string { return fmt.Sprintf("%.1f%%", 100*share) }

// hasHitShare reports a run in which the server reported cached tokens:
// the stage tables then show each stage's prefix hit share.
func hasHitShare(stages []metrics.StageSummary) bool {
	return slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.PrefixHitShare != nil })
}

// hitShareText is a stage's prefix hit share; "-" where the stage has
// none (no input token the server counted), never a 0% it did not say.
func hitShareText(s *metrics.StageSummary) string {
	if s.PrefixHitShare == nil {
		return "-"
	}
	return pct(*s.PrefixHitShare)
}

// cacheHitNote explains the stage tables' cache hit column.
const cacheHitNote = "cache hit: the share of input tokens the server served from its prefix cache (cached_tokens of usage)"

// traceArrivalsNote explains target/s for a replay, which follows the
// records' times rather than a rate.
func traceArrivalsNote(r *result.Result) string {
	if len(r.Traces) == 0 {
		return ""
	}
	return "a trace's target/s is its mean rate (records over the replay); its records arrive at their own times"
}
