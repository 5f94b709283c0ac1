package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/analysis"
)

// sweepSection is a sweep's charts and the words under them.
type sweepSection struct {
	Title  string
	Charts []chartOut
	Notes  []string
}

// latencyCurves are the sweep's latency lines: a colour per metric,
// solid p50 and dashed p99.
var latencyCurves = []struct {
	name     string
	color    string
	p50, p99 func(analysis.Point) float64
}{
	{"TTFT", palette[0], func(p analysis.Point) float64 { return p.TTFTP50 }, func(p analysis.Point) float64 { return p.TTFTP99 }},
	{"TPOT", palette[1], func(p analysis.Point) float64 { return p.TPOTP50 }, func(p analysis.Point) float64 { return p.TPOTP99 }},
	{"E2E", palette[2], func(p analysis.Point) float64 { return p.E2EP50 }, func(p analysis.Point) float64 { return p.E2EP99 }},
}

// engineSLO converts the result's SLO back for engine/analysis.
func engineSLO(s *SLO) engine.SLO {
	if s == nil {
		return engine.SLO{}
	}
	return engine.SLO{TTFT: msDuration(s.TTFTMS), TPOT: msDuration(s.TPOTMS), E2E: msDuration(s.E2EMS)}
}

// sweepSections draws every sweep engine/analysis finds among the stages,
// with its knee and cliff.
func sweepSections(r *Result) []sweepSection {
	found := readings(r)
	var out []sweepSection
	for i, s := range analysis.Sweeps(r.Stages) {
		var a analysis.SweepAnalysis
		for _, sa := range found.Sweeps {
			if sa.Scenario == s.Scenario {
				a = sa
			}
		}
		out = append(out, sweepSectionOf(s, a, i))
	}
	return out
}

func sweepSectionOf(s analysis.Sweep, a analysis.SweepAnalysis, i int) sweepSection {
	marks := findingMarks(a)
	name := fmt.Sprintf("sweep-%d", i)
	xLabel := "load (" + s.LoadUnit + ")"
	loads := make([]float64, len(s.Points))
	for j, p := range s.Points {
		loads[j] = p.Load
	}
	line := func(label string, v func(analysis.Point) float64) lineSeries {
		ys := make([]float64, len(s.Points))
		for j, p := range s.Points {
			ys[j] = cmpNaN(v(p) > 0, v(p)) // 0: no data
		}
		return lineSeries{Name: label, X: loads, Y: ys, Points: true}
	}
	// Sweeps mostly double their load: a log axis spaces such levels evenly.
	logX := loads[0] > 0 && loads[len(loads)-1]/loads[0] >= 4
	if logX {
		xLabel = "load (" + s.LoadUnit + ", log scale)"
	}
	base := lineChart{XLabel: xLabel, XTicks: loads, Marks: marks, LogX: logX}
	req, tok, lat := base, base, base
	req.Name, req.Title, req.YLabel = name+"-throughput", s.Scenario+": requests/s against load", "requests/s"
	req.Series = []lineSeries{line("req/s (started)", func(p analysis.Point) float64 { return p.ReqPerSec }),
		dashed(line("delivered (knee rule)", func(p analysis.Point) float64 { return p.Throughput }))}
	tok.Name, tok.Title, tok.YLabel = name+"-tokens", s.Scenario+": output tokens/s against load", "output tokens/s"
	tok.Series = []lineSeries{withColor(line("output tok/s", func(p analysis.Point) float64 { return p.TokPerSec }), palette[2])}
	lat.Name, lat.Title, lat.YLabel, lat.LogY = name+"-latency", s.Scenario+": latency against load", "latency (ms, log scale)", true
	for _, c := range latencyCurves {
		lat.Series = append(lat.Series, withColor(line(c.name+" p50", c.p50), c.color),
			dashed(withColor(line(c.name+" p99", c.p99), c.color)))
	}
	sec := sweepSection{Title: fmt.Sprintf("%s (load in %s)", s.Scenario, s.LoadUnit),
		Charts: []chartOut{req.render(), tok.render(), lat.render()}}
	for _, f := range slices.Concat([]analysis.Finding{a.Knee, a.Cliff}, a.TagCliffs) {
		if f.Text != "" {
			sec.Notes = append(sec.Notes, f.Text)
			if f.Suspect != "" {
				sec.Notes = append(sec.Notes, "⚠ suspect "+f.Kind+": "+f.Suspect+" (see the warnings)")
			}
			if f.Tentative != "" {
				sec.Notes = append(sec.Notes, "⚠ tentative "+f.Kind+": "+f.Tentative+"; a reading, not a fact")
			}
			if f.Tag == "" { // a tag's cliff follows the cliff rule already written
				sec.Notes = append(sec.Notes, f.Kind+" rule: "+f.Rule)
			}
		}
	}
	return sec
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
