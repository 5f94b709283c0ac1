package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmload/llmload/engine/report"
)

// Text renders r for a terminal: a table per matched stage (metric, base,
// new, change, verdict), the capacities, the stages only one side ran, then a summary
// line marked ✅, ⚠ (some rows inconclusive) or ❌. The output is deterministic for a given Result.
func Text(r *Result) report.Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		fmt.Fprintf(&b, "base  %s\nnew   %s\n", r.Base, r.New)
		for _, stage := range r.Matched {
			fmt.Fprintf(&b, "\n%s\n", stage)
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "  metric\tbase\tnew\tchange\t  verdict\t\n")
			for _, row := range stageRows(r, stage) {
				// The note trails the last cell, so it is not padded to align.
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t  %s\t%s\n", row.Metric, value(row.Metric, row.Base, row.NoData),
					value(row.Metric, row.New, row.NoData), change(row), row.Verdict(), why(row))
			}
			tw.Flush()
		}
		writeCapacity(&b, r)
		writeOnly(&b, "only in base", r.OnlyBase)
		writeOnly(&b, "only in new", r.OnlyNew)
		fmt.Fprintf(&b, "\n%s %s\n", mark(r), summary(r))
		_, err := w.Write(trimLines(b.Bytes()))
		return err
	}
}

// writeCapacity is the capacity searches' table, with why a row could not
// be decided.
func writeCapacity(b *bytes.Buffer, r *Result) {
	if len(r.Capacity) == 0 {
		return
	}
	fmt.Fprintf(b, "\ncapacity (a drop beyond %s fails)\n", pct(r.MaxCapacityDrop))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "  scenario\tbase\tnew\tchange\t  verdict\t\n")
	for _, row := range r.Capacity {
		note := ""
		if row.Note != "" {
			note = "  " + row.Note
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t  %s\t%s\n", row.Scenario, capacityValue(row.Base, row.Unit),
			capacityValue(row.New, row.Unit), capacityChange(row), row.Decision, note)
	}
	tw.Flush()
}

// why says why a row has no data or could not be decided, which a reader
// needs in order to act; other notes are in the JSON.
func why(row Row) string {
	if (row.NoData || row.Inconclusive) && row.Note != "" {
		return "  " + row.Note
	}
	return ""
}

// verdictWithNote is the verdict and, where the reader needs it, why.
func verdictWithNote(row Row) string {
	if w := why(row); w != "" {
		return row.Verdict() + " (" + w[2:] + ")"
	}
	return row.Verdict()
}

func stageRows(r *Result, stage string) []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Stage == stage {
			out = append(out, row)
		}
	}
	return out
}

func writeOnly(b *bytes.Buffer, what string, stages []string) {
	if len(stages) > 0 {
		fmt.Fprintf(b, "\n%s (not compared): %s\n", what, strings.Join(stages, ", "))
	}
}

// trimLines drops the spaces that padded table cells leave at line ends.
func trimLines(text []byte) []byte {
	lines := bytes.Split(text, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

// JSON renders r as indented JSON.
func JSON(r *Result) report.Reporter {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	}
}
