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
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// Caps of the robustness table's list cells, so that a server answering
// with many distinct statuses or errors cannot push it past the width.
const (
	maxStatusCells = 4
	maxClassCells  = 2
)

// robustnessLegend says what each verdict means, since "handled" and
// "defect" are llmload's judgement, not the server's.
const robustnessLegend = "✓ handled: a 4xx with an error body  ✗ DEFECT: a 5xx, a timeout, a reset, a broken stream or a bare 4xx\n" +
	"· accepted: served (200), as some malformed inputs may be; error classes leave out HTTP ones, shown as status codes\n"

// writeRobustness writes, when dirty requests were sent, how the server
// answered them per stage and kind, and a one-line verdict for the run.
func writeRobustness(b *bytes.Buffer, r *result.Result, labels []string) {
	if !slices.ContainsFunc(r.Stages, func(s metrics.StageSummary) bool { return len(s.Robustness) > 0 }) {
		return
	}
	b.WriteString("\nrobustness: how the server answered deliberately malformed requests\n")
	canceled := slices.ContainsFunc(r.Stages, func(s metrics.StageSummary) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(s.Robustness)),
			func(rs metrics.RobustnessSummary) bool { return rs.Canceled > 0 })
	})
	var cols [4][]string // stage, kind, statuses, classes: left-aligned
	var counts, verdicts [][]string
	for i, s := range r.Stages {
		for j, kind := range slices.Sorted(maps.Keys(s.Robustness)) {
			rs := s.Robustness[kind]
			label := ""
			if j == 0 {
				label = labels[i]
			}
			cols[0], cols[1] = append(cols[0], label), append(cols[1], textfmt.Clip(kind))
			cols[2], cols[3] = append(cols[2], statusCell(rs.Statuses)), append(cols[3], classCell(rs.Errors))
			counts = append(counts, robustnessCounts(&rs, canceled))
			verdicts = append(verdicts, []string{verdictCell(rs.Verdict)})
		}
	}
	writeRobustnessTable(b, cols, counts, verdicts, canceled)
	b.WriteString(robustnessLegend)
	b.WriteString(robustnessLine(runRobustness(r)) + "\n")
}

func writeRobustnessTable(b *bytes.Buffer, cols [4][]string, counts, verdicts [][]string, canceled bool) {
	heads := [4]string{"stage", "kind", "status codes", "error classes"}
	for i := range cols {
		heads[i], cols[i] = leftColumn(heads[i], cols[i])
	}
	vHead, vCol := leftColumn("verdict", slices.Concat(verdicts...))
	countHead := []string{"n", "handled/defects/accepted"}
	if canceled {
		countHead = append(countHead, "canceled")
	}
	tw := newTable(b)
	row(tw, slices.Concat([]string{heads[0], heads[1]}, countHead[:1], heads[2:], countHead[1:], []string{vHead})...)
	for i := range cols[0] {
		c := counts[i]
		row(tw, slices.Concat([]string{cols[0][i], cols[1][i]}, c[:1], []string{cols[2][i], cols[3][i]}, c[1:], []string{vCol[i]})...)
	}
	tw.Flush()
}

func robustnessCounts(rs *metrics.RobustnessSummary, canceled bool) []string {
	c := []string{fmt.Sprint(rs.Count), fmt.Sprintf("%d/%d/%d", rs.Handled, rs.Defects, rs.Accepted)}
	if canceled {
		c = append(c, fmt.Sprint(rs.Canceled))
	}
	return c
}

// statusCell lists statuses by code, "none" (no response) last: 400×12 500×1.
func statusCell(statuses map[int]int64) string {
	codes := slices.SortedFunc(maps.Keys(statuses), func(x, y int) int {
		return cmp.Or(cmp.Compare(b2i(x == 0), b2i(y == 0)), cmp.Compare(x, y))
	})
	cells := make([]string, len(codes))
	for i, code := range codes {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "none"
		}
		cells[i] = fmt.Sprintf("%s×%d", name, statuses[code])
	}
	return joinCapped(cells, maxStatusCells)
}

// classCell lists error classes by count, descending, but for the HTTP
// ones, which the status codes already show; "-" for none.
func classCell(errs map[string]int64) string {
	var cells []string
	for _, class := range sortedByCount(errs) {
		if !strings.HasPrefix(class, "http_") {
			cells = append(cells, fmt.Sprintf("%s×%d", textfmt.Clip(class), errs[class]))
		}
	}
	return joinCapped(cells, maxClassCells)
}

// joinCapped joins up to limit cells and counts the rest: "a b +3".
func joinCapped(cells []string, limit int) string {
	if len(cells) == 0 {
		return "-"
	}
	if len(cells) > limit {
		cells = append(cells[:limit:limit], fmt.Sprintf("+%d", len(cells)-limit))
	}
	return strings.Join(cells, " ")
}

func verdictCell(v string) string {
	switch v {
	case engine.VerdictHandled:
		return "✓ handled"
	case engine.VerdictDefect:
		return "✗ DEFECT"
	case engine.VerdictAccepted:
		return "· accepted"
	case engine.VerdictCanceled:
		return "- canceled"
	}
	return "?"
}

// runRobustness is the run-wide table: the result's own, or the stages'
// total when the result carries none (a file written before it existed).
func runRobustness(r *result.Result) map[string]metrics.RobustnessSummary {
	if len(r.Robustness) > 0 {
		return r.Robustness
	}
	return metrics.MergeRobustness(r.Stages)
}

// robustnessLine sums the run up: "dirty data: 120 requests, 3 defects in
// 2 kinds: overlong, bad_role".
func robustnessLine(run map[string]metrics.RobustnessSummary) string {
	var n, defects, handled, accepted int64
	for _, rs := range run {
		n, defects, handled, accepted = n+rs.Count, defects+rs.Defects, handled+rs.Handled, accepted+rs.Accepted
	}
	line := fmt.Sprintf("dirty data: %d %s in %d %s", n, textfmt.Plural(n, "request", "requests"),
		len(run), textfmt.Plural(int64(len(run)), "kind", "kinds"))
	kinds := metrics.DefectKinds(run)
	if len(kinds) == 0 {
		return fmt.Sprintf("%s, no defects (%d handled, %d accepted)", line, handled, accepted)
	}
	return fmt.Sprintf("dirty data: %d %s, %d %s in %d %s: %s", n, textfmt.Plural(n, "request", "requests"),
		defects, textfmt.Plural(defects, "defect", "defects"), len(kinds), textfmt.Plural(int64(len(kinds)), "kind", "kinds"),
		textfmt.KindList(kinds))
}
