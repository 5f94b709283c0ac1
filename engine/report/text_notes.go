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
	"github.com/llmload/llmload/engine/threshold"
)

// writeErrorClasses lists failed requests per stage and class, most
// frequent first, with their share of the stage's requests.
func writeErrorClasses(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	if !slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return len(s.Errors) > 0 }) {
		return
	}
	b.WriteString("\nerrors\n")
	tw := newTable(b)
	var col1, col2, counts, shares []string
	for i, s := range stages {
		for j, class := range sortedByCount(s.Errors) {
			n := s.Errors[class]
			label := ""
			if j == 0 {
				label = labels[i]
			}
			col1, col2 = append(col1, label), append(col2, class)
			counts = append(counts, fmt.Sprint(n))
			shares = append(shares, fmt.Sprintf("%.1f%%", share(n, s.Requests)))
		}
	}
	h1, col1 := leftColumn("stage", col1)
	h2, col2 := leftColumn("class", col2)
	row(tw, h1, h2, "count", "share")
	for i := range col1 {
		row(tw, col1[i], col2[i], counts[i], shares[i])
	}
	tw.Flush()
}

func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func sortedByCount(m map[string]int64) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(x, y string) int {
		return cmp.Or(cmp.Compare(m[y], m[x]), cmp.Compare(x, y))
	})
	return keys
}

// writeScriptErrors lists script errors as "count  file:line: message".
func writeScriptErrors(b *bytes.Buffer, errs []metrics.ScriptError) {
	if len(errs) == 0 {
		return
	}
	b.WriteString("\nscript errors\n")
	w := len(fmt.Sprint(errs[0].Count))
	for _, e := range errs {
		w = max(w, len(fmt.Sprint(e.Count)))
	}
	for _, e := range errs {
		fmt.Fprintf(b, "  %*d  %s\n", w, e.Count, oneLine(e.Message))
	}
}

// writeChecks lists each check with its pass rate; failing ones get a ✗.
func writeChecks(b *bytes.Buffer, checks []metrics.CheckSummary) {
	if len(checks) == 0 {
		return
	}
	b.WriteString("\nchecks\n")
	for _, c := range checks {
		mark, total := "✓", c.Passes+c.Fails
		if c.Fails > 0 {
			mark = "✗"
		}
		rate := 0.0
		if total > 0 {
			rate = 100 * float64(c.Passes) / float64(total)
		}
		fmt.Fprintf(b, "  %s %s: %.2f%% (%d of %d passed)\n", mark, oneLine(c.Name), rate, c.Passes, total)
	}
}

// writeMetrics summarises the script's custom metrics over the run.
func writeMetrics(b *bytes.Buffer, ms map[string]metrics.MetricSummary) {
	if len(ms) == 0 {
		return
	}
	b.WriteString("\ncustom metrics\n")
	for _, name := range slices.Sorted(maps.Keys(ms)) {
		m := ms[name]
		switch m.Kind {
		case engine.MetricTrend:
			d := m.Trend
			if d.Count == 0 {
				fmt.Fprintf(b, "  %s (trend): no values\n", name)
				continue
			}
			fmt.Fprintf(b, "  %s (trend): avg %.4g, p50 %.4g, p90 %.4g, p99 %.4g, max %.4g, n %d\n",
				name, d.Mean, d.P50, d.P90, d.P99, d.Max, d.Count)
		case engine.MetricCounter:
			fmt.Fprintf(b, "  %s (counter): %.6g in all, %.4g/s\n", name, m.Sum, m.PerSec)
		case engine.MetricRate:
			fmt.Fprintf(b, "  %s (rate): %.2f%% (%d of %d)\n", name, 100*m.Rate, m.Passes, m.Total)
		}
	}
}

// writeMetricErrors lists custom-metric values the collector rejected.
func writeMetricErrors(b *bytes.Buffer, errs []metrics.MetricError) {
	if len(errs) == 0 {
		return
	}
	b.WriteString("\nrejected custom metric values\n")
	for _, e := range errs {
		fmt.Fprintf(b, "  %d  %s\n", e.Count, oneLine(e.Message))
	}
}

// writeWarnings prints why results cannot be taken at face value.
func writeWarnings(b *bytes.Buffer, ws []string) {
	if len(ws) == 0 {
		return
	}
	b.WriteString("\nWARNING\n")
	for _, w := range ws {
		b.WriteString(wrap(w, "  ! ", "    ", maxWidth))
	}
}

// maxWidth is the widest line the text summary writes.
const maxWidth = 120

// wrap breaks s at spaces into lines of at most width columns (a longer
// word gets a line of its own), the first prefixed by first, the others by
// rest; every line ends in a newline.
func wrap(s, first, rest string, width int) string {
	var b strings.Builder
	line, n := first, len([]rune(first))
	empty := true
	for _, word := range strings.Fields(s) {
		w := len([]rune(word))
		if !empty && n+1+w > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, len([]rune(rest)), true
		}
		if !empty {
			line, n = line+" ", n+1
		}
		line, n, empty = line+word, n+w, false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// writeThresholds lists each threshold condition with ✓ or ✗ and the
// value observed.
func writeThresholds(b *bytes.Buffer, results []threshold.Result) {
	rows := thresholdRows(results)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nthresholds\n")
	for _, row := range rows {
		mark, note := "✓", ""
		if !row.Passed {
			mark = "✗"
		}
		if row.Note != "" {
			note = " (" + row.Note + ")"
		}
		fmt.Fprintf(b, "  %s %s %s: %s%s\n", mark, row.Expr, row.Condition, row.Observed, note)
	}
}

// oneLine keeps a multi-line message (a Lua traceback) from breaking the
// layout: only its first line is shown.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func writeClamped(b *bytes.Buffer, stages []metrics.StageSummary) {
	var n int64
	for _, s := range stages {
		n += s.TTFB.Clamped + s.TTFT.Clamped + s.TTFC.Clamped + s.TPOT.Clamped + s.ITL.Clamped +
			s.ITLToken.Clamped + s.E2E.Clamped
	}
	if n > 0 {
		fmt.Fprintf(b, "\n%s outside 0 .. 1h %s clamped to the nearest bound\n", textfmt.Count(n, "latency value", "latency values"), textfmt.Plural(n, "was", "were"))
	}
}
