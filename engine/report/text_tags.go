package report

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeByTag writes one table per tag key that splits some stage's
// requests into two values or more: the per-kind latencies a mixed
// workload's overall percentiles blur together. starred says the latency
// table already explained the * mark.
func writeByTag(b *bytes.Buffer, stages []metrics.StageSummary, labels []string, starred bool) {
	star := false
	for _, key := range splitKeys(stages) {
		star = writeTagTable(b, stages, labels, key) || star
	}
	switch {
	case star && starred:
		b.WriteString("* not reliable, as in the latency table\n")
	case star:
		b.WriteString(unreliableNote)
	}
	for i, s := range stages {
		if s.TagKeysOverflow > 0 {
			fmt.Fprintf(b, "%s: requests carried more than %d tag keys; %s beyond them %s not broken down\n",
				labels[i], metrics.MaxTagKeys, textfmt.Count(s.TagKeysOverflow, "(request, key) pair", "(request, key) pairs"), textfmt.Plural(s.TagKeysOverflow, "is", "are"))
		}
	}
}

// splitKeys returns, sorted, the tag keys with at least two values in some stage.
func splitKeys(stages []metrics.StageSummary) []string {
	var keys []string
	for _, s := range stages {
		for key, values := range s.ByTag {
			if len(values) >= 2 && !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// writeTagTable writes the table of one key and reports whether it
// starred a percentile.
func writeTagTable(b *bytes.Buffer, stages []metrics.StageSummary, labels []string, key string) (star bool) {
	fmt.Fprintf(b, "\nby tag %s (latency ms)\n", textfmt.Clip(key))
	return writeSplitTable(b, stages, labels, textfmt.Clip(key), func(s *metrics.StageSummary) map[string]metrics.TagSummary { return s.ByTag[key] })
}

// writeByAPI writes, for stages that sent requests of several APIs, each
// API's requests and latencies apart: an embedding's E2E and a chat
// answer's say nothing about each other blurred together. starred: see
// writeByTag.
func writeByAPI(b *bytes.Buffer, stages []metrics.StageSummary, labels []string, starred bool) {
	if !slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return len(s.ByAPI) >= 2 }) {
		return
	}
	b.WriteString("\nby API (latency ms)\n")
	star := writeSplitTable(b, stages, labels, "api", func(s *metrics.StageSummary) map[string]metrics.TagSummary { return s.ByAPI })
	switch {
	case star && starred:
		b.WriteString("* not reliable, as in the latency table\n")
	case star:
		b.WriteString(unreliableNote)
	}
}

// writeAPIs names the APIs a run sent requests to, with their counts,
// when any was another than chat completions.
func writeAPIs(b *bytes.Buffer, stages []metrics.StageSummary) {
	counts := map[string]int64{}
	for _, s := range stages {
		for api, t := range s.ByAPI {
			counts[api] += t.Requests
		}
	}
	if len(counts) == 0 {
		return
	}
	var parts []string
	for _, api := range engine.Endpoints() {
		if n, ok := counts[api]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", api, n))
		}
	}
	b.WriteString("api: " + strings.Join(parts, ", ") + " requests\n")
}

// writeSplitTable writes the requests and latencies of each value of a
// split (a tag's values, the APIs) for the stages that have two values or
// more, and reports whether it starred a percentile.
func writeSplitTable(b *bytes.Buffer, stages []metrics.StageSummary, labels []string, key string,
	split func(*metrics.StageSummary) map[string]metrics.TagSummary) (star bool) {
	var stageCol, valueCol []string
	var rest [][]string
	for i := range stages {
		values := split(&stages[i])
		if len(values) < 2 {
			continue
		}
		for j, v := range sortedTagValues(values) {
			label := ""
			if j == 0 {
				label = labels[i]
			}
			t := values[v]
			stageCol, valueCol = append(stageCol, label), append(valueCol, textfmt.Clip(v))
			rest = append(rest, []string{fmt.Sprint(t.Requests), fmt.Sprint(t.OK), fmt.Sprint(t.Failed),
				fmtP(t.TTFT, "p50", t.TTFT.P50), fmtP(t.TTFT, "p90", t.TTFT.P90), fmtP(t.TTFT, "p99", t.TTFT.P99),
				fmtP(t.E2E, "p50", t.E2E.P50), fmtP(t.E2E, "p90", t.E2E.P90), fmtP(t.E2E, "p99", t.E2E.P99)})
			star = star || anyStar(t.TTFT, "p50", "p90", "p99") || anyStar(t.E2E, "p50", "p90", "p99")
		}
	}
	h1, stageCol := leftColumn("stage", stageCol)
	h2, valueCol := leftColumn(key, valueCol)
	tw := newTable(b)
	row(tw, h1, h2, "n", "ok", "failed", "TTFT p50 ", "p90 ", "p99 ", "E2E p50 ", "p90 ", "p99 ")
	for i := range stageCol {
		row(tw, append([]string{stageCol[i], valueCol[i]}, rest[i]...)...)
	}
	tw.Flush()
	return star
}

// sortedTagValues sorts values by name, with the overflow entry last.
func sortedTagValues(values map[string]metrics.TagSummary) []string {
	return slices.SortedFunc(maps.Keys(values), func(x, y string) int {
		return cmp.Or(cmp.Compare(b2i(x == metrics.OtherTagValue), b2i(y == metrics.OtherTagValue)), cmp.Compare(x, y))
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
