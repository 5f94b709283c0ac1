package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// sweepSection is a sweep's charts and the words under them.
type sweepSection struct {
	Title  string
	Charts []chartOut
	Notes  []string
}

// latencyCurves are the sweep's latency lines: a colour per metric, solid
// p50, a lighter solid p90 where the metric has one, dashed p99. The p90
// is drawn because the cliff rule reads it: a growing share of requests
// waiting shows there before the p99 or the median.
var latencyCurves = []struct {
	name          string
	color, tint   string
	p50, p90, p99 func(analysis.Point) float64
}{
	{"TTFT", palette[0], palette[5], func(p analysis.Point) float64 { return p.TTFTP50 }, func(p analysis.Point) float64 { return p.TTFTP90 },
		func(p analysis.Point) float64 { return p.TTFTP99 }},
	{"TPOT", palette[1], "", func(p analysis.Point) float64 { return p.TPOTP50 }, nil, func(p analysis.Point) float64 { return p.TPOTP99 }},
	{"E2E", palette[2], "#7fcdbb", func(p analysis.Point) float64 { return p.E2EP50 }, func(p analysis.Point) float64 { return p.E2EP90 },
		func(p analysis.Point) float64 { return p.E2EP99 }},
}

// tagColors colour the per-tag lines, apart from the metrics' colours.
var tagColors = []string{palette[3], palette[4], palette[6]}

// engineSLO converts the result's SLO back for engine/analysis.
func engineSLO(s *result.SLO) plan.SLO {
	if s == nil {
		return plan.SLO{}
	}
	return plan.SLO{TTFT: textfmt.Duration(s.TTFTMS), TPOT: textfmt.Duration(s.TPOTMS), E2E: textfmt.Duration(s.E2EMS),
		Task: textfmt.Duration(s.TaskMS)}
}

// sweepSections draws every sweep engine/analysis finds among the stages,
// with its knee and cliff.
func sweepSections(r *result.Result) []sweepSection {
	found := readings(r)
	var out []sweepSection
	for i, s := range analysis.Sweeps(r.Stages) {
		var a analysis.SweepAnalysis
		for _, sa := range found.Sweeps {
			if sa.Scenario == s.Scenario {
				a = sa
			}
		}
		out = append(out, sweepSectionOf(s, a, r.Stages, i))
	}
	return out
}

// sweepPlot draws the curves of one sweep on charts of the same x axis.
type sweepPlot struct {
	s    analysis.Sweep
	base lineChart
	name string
}

func newSweepPlot(s analysis.Sweep, a analysis.SweepAnalysis, i int) sweepPlot {
	xLabel := "load (" + s.LoadUnit + ")"
	loads := make([]float64, len(s.Points))
	for j, p := range s.Points {
		loads[j] = p.Load
	}
	// Sweeps mostly double their load: a log axis spaces such levels evenly.
	logX := loads[0] > 0 && loads[len(loads)-1]/loads[0] >= 4
	if logX {
		xLabel = "load (" + s.LoadUnit + ", log scale)"
	}
	return sweepPlot{s, lineChart{XLabel: xLabel, XTicks: loads, Marks: findingMarks(a), LogX: logX}, fmt.Sprintf("sweep-%d", i)}
}

// line is one figure of every point of pts (s's by default), a gap where
// it is 0 (no data).
func (sp sweepPlot) line(label string, v func(analysis.Point) float64, pts ...analysis.Point) lineSeries {
	if pts == nil {
		pts = sp.s.Points
	}
	ys := make([]float64, len(pts))
	for j, p := range pts {
		ys[j] = cmpNaN(v(p) > 0, v(p))
	}
	return lineSeries{Name: label, X: sp.base.XTicks, Y: ys, Points: true}
}

func (sp sweepPlot) chart(suffix, title, yLabel string, series ...lineSeries) lineChart {
	c := sp.base
	c.Name, c.Title, c.YLabel, c.Series = sp.name+"-"+suffix, sp.s.Scenario+": "+title, yLabel, series
	return c
}

func sweepSectionOf(s analysis.Sweep, a analysis.SweepAnalysis, stages []metrics.StageSummary, i int) sweepSection {
	sp := newSweepPlot(s, a, i)
	req := sp.chart("throughput", "requests/s against load", "requests/s", throughputLines(sp)...)
	tok := sp.chart("tokens", "output tokens/s against load", "output tokens/s",
		withColor(sp.line("output tok/s", func(p analysis.Point) float64 { return p.TokPerSec }), palette[2]))
	lat := sp.chart("latency", "latency against load", "latency (ms, log scale)", latencyLines(sp, a, stages)...)
	lat.LogY = true
	charts := []chartOut{req.render(), tok.render(), lat.render()}
	if c := serverChart(sp, a.Server); c != nil {
		charts = append(charts, c.render())
	}
	return sweepSection{Title: fmt.Sprintf("%s (load in %s)", s.Scenario, s.LoadUnit), Charts: charts, Notes: sweepNotes(a)}
}

// throughputLines are what the knee rule read: in a closed model the
// delivered rate beside the started one, in an open model the achieved
// iterations/s against the offered rate.
func throughputLines(sp sweepPlot) []lineSeries {
	started := sp.line("req/s (started)", func(p analysis.Point) float64 { return p.ReqPerSec })
	if sp.s.LoadUnit == analysis.UnitReqRate {
		return []lineSeries{started,
			dashed(sp.line("achieved iterations/s (knee rule)", func(p analysis.Point) float64 { return p.Achieved })),
			withColor(dashed(sp.line("offered", func(p analysis.Point) float64 { return p.Load })), palette[6])}
	}
	return []lineSeries{started, dashed(sp.line("delivered (knee rule)", func(p analysis.Point) float64 { return p.Throughput }))}
}

// latencyLines are the metrics' percentiles, then each tag value's curve
// of the percentile that found its cliff.
func latencyLines(sp sweepPlot, a analysis.SweepAnalysis, stages []metrics.StageSummary) []lineSeries {
	var out []lineSeries
	for _, c := range latencyCurves {
		out = append(out, withColor(sp.line(c.name+" p50", c.p50), c.color))
		if c.p90 != nil {
			out = append(out, withColor(sp.line(c.name+" p90", c.p90), c.tint))
		}
		out = append(out, dashed(withColor(sp.line(c.name+" p99", c.p99), c.color)))
	}
	for j, f := range a.TagCliffs {
		pts := analysis.TagSweep(sp.s, stages, f.Tag).Points
		label := f.Tag + " " + strings.Replace(strings.ToUpper(f.Metric), "_P", " p", 1)
		v := func(p analysis.Point) float64 { return p.Latency(f.Metric) }
		out = append(out, dashed(withColor(sp.line(label, v, pts...), tagColors[j%len(tagColors)])))
	}
	return out
}

// serverChart draws the server's waiting and running gauges per level;
// nil without them.
func serverChart(sp sweepPlot, c *analysis.ServerCurve) *lineChart {
	if c == nil {
		return nil
	}
	gauge := func(name string, v func(analysis.ServerLevel) *float64) lineSeries {
		ys := make([]float64, len(c.Levels))
		for j, l := range c.Levels {
			ys[j] = math.NaN()
			if m := v(l); m != nil {
				ys[j] = *m
			}
		}
		return lineSeries{Name: name + " (mean over the stage)", X: sp.base.XTicks, Y: ys, Points: true}
	}
	var series []lineSeries
	if c.Waiting != "" {
		series = append(series, withColor(gauge(c.Waiting, func(l analysis.ServerLevel) *float64 { return l.Waiting }), palette[1]))
	}
	if c.Running != "" {
		series = append(series, dashed(withColor(gauge(c.Running, func(l analysis.ServerLevel) *float64 { return l.Running }), palette[0])))
	}
	ch := sp.chart("server", "the server's queue against load", "requests", series...)
	return &ch
}

// sweepNotes are the findings under the charts, each with what qualifies
// it, then the rules that found them.
func sweepNotes(a analysis.SweepAnalysis) []string {
	var notes, rules []string
	for _, f := range slices.Concat([]analysis.Finding{a.Knee, a.Cliff}, a.TagCliffs) {
		if f.Text == "" {
			continue
		}
		notes = append(notes, f.Text)
		if f.Suspect != "" {
			notes = append(notes, "⚠ suspect "+f.Kind+": "+f.Suspect+" (see the warnings)")
		}
		if f.Tentative != "" {
			notes = append(notes, "⚠ tentative "+f.Kind+": "+f.Tentative+"; a reading, not a fact")
		}
		if f.Server != nil {
			notes = append(notes, serverLine(f.Server)+" ("+f.Kind+")")
		}
		if f.Tag == "" { // a tag's cliff follows the cliff rule already written
			rules = append(rules, f.Kind+" rule: "+f.Rule)
		}
	}
	if len(a.TagCliffs) > 0 {
		rules = append(rules, "tag cliff rule: the cliff rule; "+analysis.TagCliffRule)
	}
	if a.Server != nil {
		rules = append(rules, "server rule: "+analysis.ServerRule)
	}
	return append(notes, rules...)
}

func findingMarks(a analysis.SweepAnalysis) []vmark {
	var marks []vmark
	for _, f := range []analysis.Finding{a.Knee, a.Cliff} {
		if f.Found {
			marks = append(marks, vmark{X: f.Load, Label: f.Kind + " " + f.Stage, Class: f.Kind})
		}
	}
	return marks
}

// cmpNaN is v when ok, else NaN: a gap in the line.
func cmpNaN(ok bool, v float64) float64 {
	if ok {
		return v
	}
	return math.NaN()
}
