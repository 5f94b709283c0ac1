package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/llmload/llmload/engine/metrics"
)

// stageDetail is one stage's latency histograms and per-tag tables.
type stageDetail struct {
	Label  string
	Charts []chartOut
	Tags   []tagTable
}

// tagTable is one tag key's breakdown of a stage, or its breakdown by
// API; Title says which.
type tagTable struct {
	Key   string
	Title string
	Table htmlTable
}

// tagHead is the header of every tagTable.
var tagHead = []string{"value", "requests", "ok", "failed", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p50", "E2E p99"}

var histMetrics = []struct {
	name string
	dist func(*metrics.StageSummary) metrics.Dist
	tag  func(metrics.TagSummary) metrics.Dist
}{
	{"TTFT", func(s *metrics.StageSummary) metrics.Dist { return s.TTFT }, func(t metrics.TagSummary) metrics.Dist { return t.TTFT }},
	{"E2E", func(s *metrics.StageSummary) metrics.Dist { return s.E2E }, func(t metrics.TagSummary) metrics.Dist { return t.E2E }},
}

func stageDetails(stages []metrics.StageSummary, labels []string) []stageDetail {
	var out []stageDetail
	for i := range stages {
		d := stageDetailOf(&stages[i], i, labels[i])
		if len(d.Charts) > 0 || len(d.Tags) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func stageDetailOf(s *metrics.StageSummary, i int, label string) stageDetail {
	d := stageDetail{Label: label}
	keys := slices.Sorted(maps.Keys(s.ByTag))
	for _, m := range histMetrics {
		all := m.dist(s)
		if len(all.Histogram) == 0 {
			continue
		}
		base := histSeries{Name: label + " all", Buckets: all.Histogram}
		c := histChart{Name: fmt.Sprintf("hist-%d-%s", i, lower(m.name)), Metric: m.name,
			Title: fmt.Sprintf("%s: %s distribution", label, m.name), Series: []histSeries{base}}
		d.Charts = append(d.Charts, c.render())
		for k, key := range keys {
			if tc, ok := tagHistChart(s.ByTag[key], base, m.tag); ok {
				tc.Name = fmt.Sprintf("hist-%d-%s-by-%d", i, lower(m.name), k)
				tc.Metric = m.name
				tc.Title = fmt.Sprintf("%s: %s by tag %s", label, m.name, key)
				d.Charts = append(d.Charts, tc.render())
			}
		}
	}
	for _, key := range keys {
		d.Tags = append(d.Tags, tagTableOf(key, s.ByTag[key]))
	}
	if len(s.ByTarget) > 0 {
		d.Tags = append(d.Tags, targetTableOf(s))
		byTarget := targetTags(s.ByTarget)
		for _, m := range histMetrics {
			base := histSeries{Name: label + " all", Buckets: m.dist(s).Histogram}
			if tc, ok := tagHistChart(byTarget, base, m.tag); ok && len(base.Buckets) > 0 {
				tc.Name = fmt.Sprintf("hist-%d-%s-by-target", i, lower(m.name))
				tc.Metric = m.name
				tc.Title = fmt.Sprintf("%s: %s by target", label, m.name)
				d.Charts = append(d.Charts, tc.render())
			}
		}
	}
	if len(s.ByAPI) >= 2 {
		// Each API's requests apart, as the text summary's by-API table.
		t := tagTableOf("api", s.ByAPI)
		t.Title = "by API"
		d.Tags = append(d.Tags, t)
	}
	return d
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// tagHistChart overlays the values of one tag key on the stage's bars,
// when at least two values carry a histogram.
func tagHistChart(values map[string]metrics.TagSummary, base histSeries, pick func(metrics.TagSummary) metrics.Dist) (histChart, bool) {
	c := histChart{Series: []histSeries{base}}
	for _, v := range sortedTagValues(values) {
		if h := pick(values[v]).Histogram; len(h) > 0 {
			c.Series = append(c.Series, histSeries{Name: v, Buckets: h})
		}
	}
	return c, len(c.Series) >= 3
}

func tagTableOf(key string, values map[string]metrics.TagSummary) tagTable {
	t := tagTable{Key: key, Title: "by tag " + key, Table: htmlTable{Head: tagHead}}
	for _, v := range sortedTagValues(values) {
		ts := values[v]
		t.Table.Rows = append(t.Table.Rows, []htmlCell{
			{Text: v, Left: true}, intCellH(ts.Requests), intCellH(ts.OK), intCellH(ts.Failed),
			pCell(ts.TTFT, "p50", ts.TTFT.P50), pCell(ts.TTFT, "p99", ts.TTFT.P99),
			pCell(ts.TPOT, "p50", ts.TPOT.P50), pCell(ts.TPOT, "p99", ts.TPOT.P99),
			pCell(ts.E2E, "p50", ts.E2E.P50), pCell(ts.E2E, "p99", ts.E2E.P99),
		})
	}
	return t
}

// targetHead is the header of the by-target table: a tag table's, with
// the rates an A/B is decided on.
var targetHead = []string{"target", "requests", "failed", "req/s", "out tok/s", "goodput", "TTFT p50", "TTFT p99",
	"TPOT p50", "TPOT p99", "E2E p50", "E2E p99", "errors"}

// targetTableOf is a stage's breakdown by target, as the text summary's
// by-target table.
func targetTableOf(s *metrics.StageSummary) tagTable {
	t := tagTable{Key: "target", Title: "by target", Table: htmlTable{Head: targetHead}}
	for _, name := range slices.Sorted(maps.Keys(s.ByTarget)) {
		ts := s.ByTarget[name]
		t.Table.Rows = append(t.Table.Rows, []htmlCell{
			{Text: name, Left: true}, intCellH(ts.Requests), intCellH(ts.Failed),
			{Text: fmt.Sprintf("%.2f", ts.ReqPerSec(s.DurationS))}, {Text: fmt.Sprintf("%.1f", ts.OutputTokPerSec(s.DurationS))},
			{Text: fmt.Sprintf("%.2f", ts.Goodput(s.DurationS))},
			pCell(ts.TTFT, "p50", ts.TTFT.P50), pCell(ts.TTFT, "p99", ts.TTFT.P99),
			pCell(ts.TPOT, "p50", ts.TPOT.P50), pCell(ts.TPOT, "p99", ts.TPOT.P99),
			pCell(ts.E2E, "p50", ts.E2E.P50), pCell(ts.E2E, "p99", ts.E2E.P99),
			{Text: topErrors(ts.Errors), Left: true},
		})
	}
	return t
}

// targetTags views the breakdown by target as tag values, for the
// overlaid histograms.
func targetTags(by map[string]metrics.TargetSummary) map[string]metrics.TagSummary {
	out := make(map[string]metrics.TagSummary, len(by))
	for name, t := range by {
		out[name] = t.TagSummary
	}
	return out
}
