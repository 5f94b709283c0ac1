package report

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeTasks writes, for runs whose scripts timed tasks (llm.task), what
// the tasks of each stage took. A run without tasks writes nothing.
func writeTasks(b *bytes.Buffer, r *result.Result, labels []string) {
	rows := taskRows(r.Stages, labels)
	if len(rows) == 0 {
		return
	}
	// The first error is text: clipped, and left-aligned where writeRows
	// right-aligns figures.
	errs := make([]string, len(rows))
	for i, row := range rows {
		errs[i] = clipError(row[len(row)-1])
	}
	head := taskHead[1:]
	last, errs := leftColumn(head[len(head)-1], errs)
	for i := range rows {
		rows[i][len(rows[i])-1] = errs[i]
	}
	b.WriteString("\ntasks (llm.task: an agent's unit of work, timed whole)\n")
	writeRows(b, append(head[:len(head)-1:len(head)-1], last), rows)
	b.WriteString(wrap(taskNote(r.Run.SLO), "", "  ", maxWidth))
}

// taskHead is the tasks table's header, the HTML table's too.
var taskHead = []string{"stage", "tasks", "tasks/s", "ok %", "p50", "p99", "calls p50", "tool p50", "goodput/s", "first error"}

// taskRows are the tasks table's rows, label first: one per stage that
// had tasks, followed, when it had tasks of several names (nested ones
// are counted apart from the task around them), by one per name with the
// figures kept by name; none for a run without.
func taskRows(stages []metrics.StageSummary, labels []string) [][]string {
	var rows [][]string
	for i, s := range stages {
		t := s.Tasks
		if t == nil {
			continue
		}
		rows = append(rows, []string{labels[i], fmt.Sprint(t.Tasks), figure(t.TasksPerSec), okShare(t.OK, t.Tasks),
			textfmt.DistMS(t.Duration, t.Duration.P50), textfmt.DistMS(t.Duration, t.Duration.P99),
			valueCell(t.Calls, t.Calls.P50), textfmt.DistMS(t.Tool, t.Tool.P50),
			figure(t.Goodput), firstErrorCell(t)})
		if len(t.ByName) < 2 {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(t.ByName)) {
			n := t.ByName[name]
			rows = append(rows, []string{labels[i] + " · " + name, fmt.Sprint(n.Tasks), "", okShare(n.OK, n.Tasks),
				textfmt.DistMS(n.Duration, n.Duration.P50), textfmt.DistMS(n.Duration, n.Duration.P99), "", "", "", ""})
		}
	}
	return rows
}

// okShare is ok of n in percent.
func okShare(ok, n int64) string { return fmt.Sprintf("%.1f", 100*float64(ok)/float64(max(n, 1))) }

// firstErrorCell is the first error that ended one of a stage's tasks;
// "-" when none did.
func firstErrorCell(t *metrics.TaskSummary) string {
	if e := t.FirstError(); e != "" {
		return e
	}
	return "-"
}

// maxErrorWidth bounds the text table's first error, its last column:
// "file:line: " and the start of the message, within the line's width.
const maxErrorWidth = 40

// clipError puts an error on one line of at most maxErrorWidth columns.
func clipError(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > maxErrorWidth {
		return string(r[:maxErrorWidth-1]) + "…"
	}
	return string(r)
}

// taskNote says what the tasks table's columns count, and the objective
// its goodput met.
func taskNote(slo *result.SLO) string {
	good := "every ok task (options.slo sets no task objective)"
	if slo != nil && slo.TaskMS > 0 {
		good = "the ok tasks that took at most " + plan.FormatDuration(textfmt.Duration(slo.TaskMS))
	}
	return "ok: the task's function returned and none of its requests failed; a nested task is a task of its own, " +
		"its requests counted in the task around it too; p50, p99: wall time of the ok tasks, " +
		"from llm.task's call to its return (ms); calls: requests per ok task; tool: time in llm.tool_delay (ms); goodput: " +
		good + ", per second"
}

// taskTable is the HTML report's tasks table, with no rows for a run
// without tasks; the first error is text.
func taskTable(stages []metrics.StageSummary, labels []string) htmlTable {
	t := htmlTable{Head: taskHead}
	for _, r := range taskRows(stages, labels) {
		cells := htmlRow(r)
		cells[len(cells)-1].Left = true
		t.Rows = append(t.Rows, cells)
	}
	return t
}
