package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
	"github.com/llmload/llmload/engine/threshold"
)

// capacitySection is one capacity search: its answer, the probe table and
// the probes drawn against load.
type capacitySection struct {
	Title    string
	Answer   string
	Criteria string
	Stopped  string
	Probes   htmlTable
	Charts   []chartOut
}

// verdictColors mark each probe by its verdict, in the palette's
// colour-blind-safe green and vermillion; grey for what was not decided.
var verdictColors = []struct{ verdict, color string }{
	{result.ProbePass, palette[2]}, {result.ProbeFail, palette[1]}, {result.ProbeUndecided, "#9aa3b2"}, {result.ProbeStopped, "#5a6270"},
}

func capacitySections(r *result.Result) []capacitySection {
	var out []capacitySection
	for i := range r.Capacity {
		c := &r.Capacity[i]
		out = append(out, capacitySection{Title: c.Scenario + " (load in " + c.Unit + ")", Answer: c.Answer(),
			Criteria: fmt.Sprintf("Each probe had to meet: %s (bisected to a precision of %s%%).", c.Criteria(r.Run.SLO),
				textfmt.Load(100*c.Search.Precision)), Stopped: c.Stopped,
			Probes: probeTable(c), Charts: probeCharts(c, i)})
	}
	return out
}

func probeTable(c *result.Capacity) htmlTable {
	t := htmlTable{Head: []string{"probe", "phase", "load (" + c.Unit + ")", "verdict", "requests", "good %",
		"TTFT p50", "TTFT p99", "TPOT p99", "req/s", "why"}}
	for _, p := range c.Probes {
		bad := p.Verdict == result.ProbeFail || p.Verdict == result.ProbeStopped
		why := p.Why
		if p.Stop != "" {
			why = p.Stop + cond(why != "", " ("+why+")", "")
		}
		t.Rows = append(t.Rows, []htmlCell{{Text: probeLabel(p), Left: true}, {Text: p.Phase, Left: true}, {Text: textfmt.Load(p.Load)},
			{Text: p.Verdict, Left: true, Bad: bad}, intCellH(p.Requests), {Text: goodText(p.GoodShare)},
			{Text: probeMS(p.TTFTP50MS)}, {Text: probeMS(p.TTFTP99MS)}, {Text: probeMS(p.TPOTP99MS)},
			{Text: fmtRate(p.ReqPerSec)}, {Text: why, Left: true}})
	}
	return t
}

// probeCharts draw every probe's TTFT p99, and its good share when good
// requests were counted, against its load, one dot per probe coloured by
// verdict, with the limit the probes were held to and the capacity found.
func probeCharts(c *result.Capacity, i int) []chartOut {
	if len(c.Probes) == 0 {
		return nil
	}
	base := probeChartBase(c, i)
	ttft := base
	ttft.Name, ttft.Title, ttft.YLabel, ttft.LogY = base.Name+"-ttft", c.Scenario+": TTFT p99 of each probe", "TTFT p99 (ms, log scale)", true
	ttft.Series = probeDots(c, func(p result.CapacityProbe) float64 { return cmpNaN(p.TTFTP99MS > 0, p.TTFTP99MS) })
	if limit, ok := ttftLimit(c.Search.Conditions); ok {
		ttft.Series = append(ttft.Series, limitLine(c, "limit ttft.p99 "+threshold.FormatValue(engine.MetricTrend, metrics.AggP, limit), limit))
	}
	charts := []chartOut{ttft.render()}
	if !slices.ContainsFunc(c.Probes, func(p result.CapacityProbe) bool { return p.GoodShare != nil }) {
		return charts
	}
	good := base
	good.Name, good.Title, good.YLabel = base.Name+"-good", c.Scenario+": good share of each probe", "requests that met the SLO (%)"
	good.Series = probeDots(c, func(p result.CapacityProbe) float64 {
		if p.GoodShare == nil {
			return math.NaN()
		}
		return 100 * *p.GoodShare
	})
	if g := c.Search.GoodShare; g > 0 {
		good.Series = append(good.Series, limitLine(c, "limit good_share "+textfmt.Load(100*g)+"%", 100*g))
	}
	return append(charts, good.render())
}

// probeChartBase is the x axis of a search's charts: its probes' loads,
// on a log scale when the bracket spans a factor of four or more, and the
// capacity found marked.
func probeChartBase(c *result.Capacity, i int) lineChart {
	var loads []float64
	for _, p := range c.Probes {
		if !slices.Contains(loads, p.Load) {
			loads = append(loads, p.Load)
		}
	}
	slices.Sort(loads)
	x := lineChart{Name: fmt.Sprintf("capacity-%d", i), XLabel: "load (" + c.Unit + ")", XTicks: loads}
	if loads[0] > 0 && loads[len(loads)-1]/loads[0] >= 4 {
		x.LogX, x.XLabel = true, "load ("+c.Unit+", log scale)"
	}
	switch {
	case c.AtLeast:
		x.Marks = []vmark{{X: c.Lo, Label: "capacity ≥ " + textfmt.Load(c.Lo), Class: "capacity"}}
	case c.Lo > 0 && c.Hi > 0:
		x.Marks = []vmark{{X: c.Capacity, Label: "capacity " + textfmt.Load(c.Capacity), Class: "capacity"}}
	}
	return x
}

// probeDots are one series per verdict with a dot per probe and no line:
// a NaN after each value breaks the path, since the probes' order of
// running (bisection) is no curve.
func probeDots(c *result.Capacity, y func(result.CapacityProbe) float64) []lineSeries {
	var out []lineSeries
	for _, vc := range verdictColors {
		s := lineSeries{Name: vc.verdict, Points: true, Color: vc.color}
		for _, p := range c.Probes {
			if p.Verdict == vc.verdict {
				s.X, s.Y = append(s.X, p.Load, p.Load), append(s.Y, y(p), math.NaN())
			}
		}
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// limitLine is a dashed horizontal line across the probes' loads.
func limitLine(c *result.Capacity, name string, v float64) lineSeries {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range c.Probes {
		lo, hi = math.Min(lo, p.Load), math.Max(hi, p.Load)
	}
	return lineSeries{Name: name, X: []float64{lo, hi}, Y: []float64{v, v}, Dash: true, Color: "#6a3d9a"}
}

// ttftLimit finds a "ttft.p99 < X" condition's bound in ms.
func ttftLimit(conds []string) (float64, bool) {
	for _, text := range conds {
		t, err := threshold.ParseProbeCondition(text)
		if err != nil || t.Metric != "ttft" {
			continue
		}
		if c := t.Conditions[0]; c.Agg == metrics.AggP && c.P == 99 && (c.Op == "<" || c.Op == "<=") {
			return c.Value, true
		}
	}
	return 0, false
}
