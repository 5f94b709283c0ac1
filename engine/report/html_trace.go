package report

import (
	"fmt"

	"github.com/llmload/llmload/engine/result"
)

// traceSection is one replayed trace: what ran, the records' lengths and
// the prefix reuse beside the server's hit share, as in the text summary.
type traceSection struct {
	Title    string
	Headline string
	Lengths  htmlTable
	Lines    []string
}

func traceSections(r *result.Result) []traceSection {
	var out []traceSection
	for i := range r.Traces {
		t := &r.Traces[i]
		s := traceSection{Title: t.Scenario, Headline: traceHeadline(t), Lines: append(traceLines(t), prefixReuseLine(t))}
		if line := sliceLine(t); line != "" {
			s.Lines = append([]string{line}, s.Lines...)
		}
		if t.Records > 0 {
			s.Lengths = htmlTable{Head: []string{"lengths (tokens)", "mean", "p50", "p90", "p99", "max"}}
			for _, l := range []struct {
				name string
				l    result.TraceLengths
			}{{"input", t.Input}, {"output", t.Output}} {
				s.Lengths.Rows = append(s.Lengths.Rows, []htmlCell{{Text: l.name, Left: true}, {Text: fmt.Sprintf("%.0f", l.l.Mean)},
					intCellH(int64(l.l.P50)), intCellH(int64(l.l.P90)), intCellH(int64(l.l.P99)), intCellH(int64(l.l.Max))})
			}
		}
		out = append(out, s)
	}
	return out
}
