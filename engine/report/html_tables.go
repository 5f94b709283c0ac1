package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
	"github.com/llmload/llmload/engine/threshold"
)

// htmlCell is one table cell of the HTML report.
type htmlCell struct {
	Text string
	Left bool // text, not a number
	Weak bool // an unreliable percentile
	Bad  bool // a failure worth the eye
}

// htmlTable is a header and rows; Note explains its marks.
type htmlTable struct {
	Head []string
	Rows [][]htmlCell
}

func intCellH(n int64) htmlCell { return htmlCell{Text: fmt.Sprint(n)} }

// pCell is a percentile, marked weak when too few samples back it.
func pCell(d metrics.Dist, p string, v float64) htmlCell {
	if d.Count == 0 {
		return htmlCell{Text: "-"}
	}
	return htmlCell{Text: textfmt.DistMS(d, v), Weak: unreliable(d, p)}
}

// stageTable is the per-stage overview: load, counts, rates and the
// p50/p99 of each latency.
func stageTable(r *result.Result, labels []string) htmlTable {
	t := htmlTable{Head: []string{"stage", "VUs / rate", "window", "ok", "failed", "req/s", "out tok/s"}}
	if hasInputs(r.Stages) {
		t.Head = append(t.Head, "inputs/s")
	}
	if r.SLOSet {
		t.Head = append(t.Head, "goodput/s", "good %")
	}
	if hasHitShare(r.Stages) {
		t.Head = append(t.Head, "cache hit")
	}
	for _, f := range []string{"TTFT", "TPOT", "ITL", "E2E"} {
		t.Head = append(t.Head, f+" p50", f+" p99")
	}
	for i := range r.Stages {
		t.Rows = append(t.Rows, stageRow(r, &r.Stages[i], labels[i]))
	}
	return t
}

// hasInputs reports a run that embedded inputs: its tables get inputs/s.
func hasInputs(stages []metrics.StageSummary) bool {
	return slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.Inputs > 0 })
}

func stageRow(r *result.Result, s *metrics.StageSummary, label string) []htmlCell {
	load := fmt.Sprint(s.VUs)
	if s.TargetRate > 0 {
		load = fmtRate(s.TargetRate) + "/s"
	}
	window := fmt.Sprintf("%.1fs", s.DurationS)
	switch {
	case !s.Complete:
		window += " (cut)"
	case s.Slipped() && s.LateS > metrics.MaxWindowSlip*s.PlannedS:
		window += fmt.Sprintf(" (load changed %.1fs late)", s.LateS)
	case s.Slipped():
		window += fmt.Sprintf(" (planned %gs)", s.PlannedS)
	}
	if mark := clientMark(s); mark != "" {
		label += " ! " + mark
	}
	row := []htmlCell{{Text: label, Left: true, Bad: clientMark(s) != ""}, {Text: load}, {Text: window, Bad: s.Slipped()},
		intCellH(s.OK), {Text: fmt.Sprint(s.Failed), Bad: s.Failed > 0}, {Text: fmtRate(s.ReqPerSec)}, {Text: fmtRate(s.OutputTokPerSec)}}
	if hasInputs(r.Stages) {
		row = append(row, htmlCell{Text: fmtRate(s.InputsPerSec)})
	}
	if r.SLOSet {
		row = append(row, htmlCell{Text: fmtRate(s.Goodput)}, htmlCell{Text: fmt.Sprintf("%.1f%%", 100*s.GoodShare)})
	}
	if hasHitShare(r.Stages) {
		row = append(row, htmlCell{Text: hitShareText(s)})
	}
	for _, d := range []metrics.Dist{s.TTFT, s.TPOT, s.ITL, s.E2E} {
		row = append(row, pCell(d, "p50", d.P50), pCell(d, "p99", d.P99))
	}
	return row
}

// thresholdRow is one threshold condition with its verdict.
type thresholdRow struct {
	Passed    bool
	Expr      string
	Condition string
	Observed  string
	Note      string
}

func thresholdRows(results []threshold.Result) []thresholdRow {
	var out []thresholdRow
	for _, r := range results {
		for _, o := range r.Outcomes {
			observed := threshold.FormatValue(r.Kind, o.Agg, o.Observed)
			switch {
			case o.Error != "":
				observed = "error: " + o.Error
			case o.NoData:
				observed = "no data"
			}
			note := ""
			if r.Aborted {
				note = "aborted the run"
			}
			out = append(out, thresholdRow{Passed: o.Passed, Expr: r.Expr, Condition: o.Condition, Observed: observed, Note: note})
		}
	}
	return out
}

// errorTable has a row per error class and a column per stage.
func errorTable(stages []metrics.StageSummary, labels []string) htmlTable {
	total := map[string]int64{}
	for _, s := range stages {
		for class, n := range s.Errors {
			total[class] += n
		}
	}
	if len(total) == 0 {
		return htmlTable{}
	}
	t := htmlTable{Head: append(append([]string{"error class"}, labels...), "total")}
	for _, class := range sortedByCount(total) {
		row := []htmlCell{{Text: class, Left: true}}
		for _, s := range stages {
			row = append(row, intCellH(s.Errors[class]))
		}
		t.Rows = append(t.Rows, append(row, htmlCell{Text: fmt.Sprint(total[class]), Bad: true}))
	}
	return t
}

// robustnessTable totals the run's dirty requests by kind.
func robustnessTable(r *result.Result) htmlTable {
	run := runRobustness(r)
	if len(run) == 0 {
		return htmlTable{}
	}
	t := htmlTable{Head: []string{"kind", "sent", "status codes", "error classes", "handled", "defects", "accepted", "canceled", "verdict"}}
	for _, kind := range slices.Sorted(maps.Keys(run)) {
		rs := run[kind]
		t.Rows = append(t.Rows, []htmlCell{{Text: kind, Left: true}, intCellH(rs.Count),
			{Text: statusList(rs.Statuses), Left: true}, {Text: classList(rs.Errors), Left: true},
			intCellH(rs.Handled), {Text: fmt.Sprint(rs.Defects), Bad: rs.Defects > 0}, intCellH(rs.Accepted),
			intCellH(rs.Canceled), {Text: rs.Verdict, Left: true, Bad: rs.Defects > 0}})
	}
	return t
}

// statusList prints every status with its count, 0 as "none"; the page
// has the room the terminal lacks.
func statusList(statuses map[int]int64) string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(statuses)) {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "none"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, statuses[code]))
	}
	return strings.Join(parts, " ")
}

func classList(errs map[string]int64) string {
	var parts []string
	for _, class := range sortedByCount(errs) {
		parts = append(parts, fmt.Sprintf("%s×%d", class, errs[class]))
	}
	return strings.Join(parts, " ")
}
