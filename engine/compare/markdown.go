package compare

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/llmload/llmload/engine/report"
)

// Markdown renders r as a GitHub comment for CI: a ✅, ⚠ (inconclusive)
// or ❌ headline, then one table of every compared metric, regressions in
// bold.
func Markdown(r *Result) report.Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		fmt.Fprintf(&b, "### %s llmload: %s\n\n", mark(r), summary(r))
		fmt.Fprintf(&b, "Base: `%s` · New: `%s`\n\n", mdCode(r.Base), mdCode(r.New))
		if len(r.Rows) > 0 {
			b.WriteString("| stage | metric | base | new | change | verdict |\n")
			b.WriteString("| --- | --- | ---: | ---: | ---: | --- |\n")
		}
		for _, row := range r.Rows {
			verdict := verdictWithNote(row)
			switch {
			case row.Regression:
				verdict = "❌ **" + VerdictRegression + "**"
			case row.Inconclusive:
				verdict = "⚠ " + verdict
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(row.Stage), row.Metric,
				value(row.Metric, row.Base, row.NoData), value(row.Metric, row.New, row.NoData), change(row), mdCell(verdict))
		}
		mdCapacity(&b, r)
		mdOnly(&b, "Only in base", r.OnlyBase)
		mdOnly(&b, "Only in new", r.OnlyNew)
		_, err := w.Write(b.Bytes())
		return err
	}
}

// mdCapacity is the capacity searches' table.
func mdCapacity(b *bytes.Buffer, r *Result) {
	if len(r.Capacity) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**Capacity** (a drop beyond %s fails)\n\n", pct(r.MaxCapacityDrop))
	b.WriteString("| scenario | base | new | change | verdict |\n")
	b.WriteString("| --- | ---: | ---: | ---: | --- |\n")
	for _, row := range r.Capacity {
		verdict := row.Decision
		if row.Note != "" {
			verdict += " (" + row.Note + ")"
		}
		switch {
		case row.Regression:
			verdict = "❌ **" + VerdictRegression + "**"
		case row.Inconclusive:
			verdict = "⚠ " + verdict
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCell(row.Scenario), mdCell(capacityValue(row.Base, row.Unit)),
			mdCell(capacityValue(row.New, row.Unit)), capacityChange(row), mdCell(verdict))
	}
}

func mdOnly(b *bytes.Buffer, what string, stages []string) {
	if len(stages) > 0 {
		fmt.Fprintf(b, "\n%s (not compared): %s\n", what, mdCell(strings.Join(stages, ", ")))
	}
}

// mdCell escapes what would break a table row.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// mdCode keeps a label inside its backticks.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ").Replace(s)
}
