package report

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeTargets lists the endpoints of a run with several targets, one
// line each, in place of the one target line.
func writeTargets(b *bytes.Buffer, m result.Meta) {
	for i, t := range m.Targets {
		head := "        "
		if i == 0 {
			head = "targets "
		}
		url := t.URL
		if m.Simulator || url == "" {
			url = "built-in simulator " + url
		}
		fmt.Fprintf(b, "%s%s: %s, model %s, weight %s\n", head, textfmt.Clip(t.Name), strings.TrimSpace(url),
			t.Model, textfmt.Load(t.Weight))
	}
}

// writeByTarget writes each target's share of every stage: requests,
// rates and the latencies users feel, side by side, so that an A/B of two
// deployments, or a replica slower than its peers, reads at a glance.
// starred: see writeByTag.
func writeByTarget(b *bytes.Buffer, r *result.Result, labels []string, starred bool) {
	if len(r.Run.Targets) == 0 {
		return
	}
	b.WriteString("\nby target (latency ms)\n")
	var stageCol, targetCol []string
	var rest [][]string
	star := false
	for i := range r.Stages {
		s := &r.Stages[i]
		for j, name := range slices.Sorted(maps.Keys(s.ByTarget)) {
			label := ""
			if j == 0 {
				label = labels[i]
			}
			t := s.ByTarget[name]
			stageCol, targetCol = append(stageCol, label), append(targetCol, textfmt.Clip(name))
			cells := []string{fmt.Sprint(t.Requests), fmt.Sprint(t.Failed),
				fmt.Sprintf("%.2f", t.ReqPerSec(s.DurationS)), fmt.Sprintf("%.1f", t.OutputTokPerSec(s.DurationS))}
			if r.SLOSet {
				cells = append(cells, fmt.Sprintf("%.2f", t.Goodput(s.DurationS)))
			}
			cells = append(cells, fmtP(t.TTFT, "p50", t.TTFT.P50), fmtP(t.TTFT, "p99", t.TTFT.P99),
				fmtP(t.TPOT, "p50", t.TPOT.P50), fmtP(t.TPOT, "p99", t.TPOT.P99),
				fmtP(t.E2E, "p50", t.E2E.P50), fmtP(t.E2E, "p99", t.E2E.P99), topErrors(t.Errors))
			rest = append(rest, cells)
			star = star || anyStar(t.TTFT, "p50", "p99") || anyStar(t.TPOT, "p50", "p99") || anyStar(t.E2E, "p50", "p99")
		}
	}
	h1, stageCol := leftColumn("stage", stageCol)
	h2, targetCol := leftColumn("target", targetCol)
	head := []string{h1, h2, "n", "failed", "req/s", "out tok/s"}
	if r.SLOSet {
		head = append(head, "goodput")
	}
	head = append(head, "TTFT p50 ", "p99 ", "TPOT p50 ", "p99 ", "E2E p50 ", "p99 ", "errors")
	tw := newTable(b)
	row(tw, head...)
	for i := range stageCol {
		row(tw, append([]string{stageCol[i], targetCol[i]}, rest[i]...)...)
	}
	tw.Flush()
	switch {
	case star && starred:
		b.WriteString("* not reliable, as in the latency table\n")
	case star:
		b.WriteString(unreliableNote)
	}
}

// topErrors names a target's error classes, the most frequent first:
// "-" when it had none.
func topErrors(errs map[string]int64) string {
	if len(errs) == 0 {
		return "-"
	}
	classes := slices.SortedFunc(maps.Keys(errs), func(x, y string) int {
		if errs[x] != errs[y] {
			return int(errs[y] - errs[x])
		}
		return strings.Compare(x, y)
	})
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%s %d", c, errs[c])
	}
	return strings.Join(parts, ", ")
}
