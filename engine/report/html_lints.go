package report

import "github.com/llmload/llmload/engine/lint"

// lintRow is one lint as the HTML report lists it.
type lintRow struct {
	Mark  string
	ID    string
	Where string
	Text  string
	Fix   string // the fix, or "ignored: reason"
}

// lintRows are the result's lints, in their order.
func lintRows(ls []lint.Lint) []lintRow {
	rows := make([]lintRow, len(ls))
	for i, l := range ls {
		mark := lintMark(l)
		fix := "fix: " + l.Fix
		if l.Ignored != "" {
			fix = "ignored: " + l.Ignored
		}
		rows[i] = lintRow{Mark: mark, ID: l.ID, Where: l.Where(), Text: l.Message, Fix: fix}
	}
	return rows
}
