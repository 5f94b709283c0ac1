package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/result"
)

// Colours of the Pareto chart: the front as the sweep charts' first
// series, stages below it grey, the best point as the capacity answer.
const (
	frontColor = "#0072b2"
	belowColor = "#9aa3b2"
	bestColor  = "#067647"
)

// paretoSection is one sweep's Pareto chart and the words under it.
type paretoSection struct {
	Title string
	Chart chartOut
	Notes []string
}

// paretoSections draws the Pareto front of every sweep where at least two
// stages placed a point, as the text summary does.
func paretoSections(r *result.Result) []paretoSection {
	var out []paretoSection
	for i, f := range readings(r).Pareto {
		if len(f.Points) >= 2 {
			out = append(out, paretoSectionOf(f, i))
		}
	}
	return out
}

func paretoSectionOf(f analysis.ParetoFront, i int) paretoSection {
	notes := []string{"Best meeting the SLO: " + f.BestText + "."}
	if s := skippedStages(f); len(s) > 0 {
		notes = append(notes, "Left out: "+strings.Join(s, ", ")+".")
	}
	if f.Suspect != "" {
		notes = append(notes, "Suspect: "+f.Suspect+" (see the warnings).")
	}
	var thin []string
	for _, p := range f.Points {
		if p.Tentative {
			thin = append(thin, p.Stage)
		}
	}
	if len(thin) > 0 {
		notes = append(notes, "Tentative: the TPOT p50 rests on too few samples at "+strings.Join(thin, ", ")+".")
	}
	notes = append(notes, "Definitions: "+f.Definition+".")
	return paretoSection{Title: f.Scenario, Chart: paretoChart(f, i), Notes: notes}
}

// paretoY is the figure the chart's y axis shows: per GPU when the GPU
// count is known, as InferenceMAX plots it, else in all.
func paretoY(f analysis.ParetoFront, p analysis.ParetoPoint) float64 {
	if f.GPUs > 0 {
		return p.TokPerSecPerGPU
	}
	return p.TokPerSec
}

// paretoChart draws the stages as points of per-user speed (x) against
// throughput (y), the front joined by a line from the fastest per user to
// the highest throughput, the best point ringed, each point labelled with
// its stage.
func paretoChart(f analysis.ParetoFront, i int) chartOut {
	yLabel := "output tok/s in all"
	if f.GPUs > 0 {
		yLabel = fmt.Sprintf("output tok/s per GPU (%d GPUs)", f.GPUs)
	}
	x, y := paretoAxes(f)
	w := &svgWriter{}
	title := f.Scenario + ": output tok/s per user against " + yLabel
	w.open(fmt.Sprintf("pareto-%d", i), title)
	w.printf(`<desc>%s</desc>`, esc(paretoDesc(f)))
	w.frame(x, y, "output tok/s per user (1000 / TPOT p50)", yLabel, x.ticks(6), tickLabel)
	w.frontLine(x, y, f)
	for _, p := range f.Points {
		w.paretoPoint(x, y, f, p)
	}
	legend := []legendItem{{Name: "Pareto front", Color: frontColor}, {Name: "below the front", Color: belowColor}}
	if f.Best != "" {
		legend = append(legend, legendItem{Name: "best meeting the SLO: " + f.Best, Color: bestColor})
	}
	return chartOut{SVG: w.html(), Legend: legend}
}

// paretoAxes span every point from zero, so that distances read as ratios.
func paretoAxes(f analysis.ParetoFront) (axis, axis) {
	xhi, yhi := 0.0, 0.0
	for _, p := range f.Points {
		xhi, yhi = math.Max(xhi, p.PerUserTokPerSec), math.Max(yhi, paretoY(f, p))
	}
	xlo, xhi := linearRange(0, xhi)
	ylo, yhi := linearRange(0, yhi)
	return axis{lo: xlo, hi: xhi, from: padL, to: chartW - padR}, axis{lo: ylo, hi: yhi, from: chartH - padB, to: padT}
}

// frontLine joins the front's points in order of per-user speed.
func (w *svgWriter) frontLine(x, y axis, f analysis.ParetoFront) {
	var front []analysis.ParetoPoint
	for _, p := range f.Points {
		if p.OnFront {
			front = append(front, p)
		}
	}
	slices.SortStableFunc(front, func(a, b analysis.ParetoPoint) int {
		return cmp.Or(cmp.Compare(a.PerUserTokPerSec, b.PerUserTokPerSec), cmp.Compare(paretoY(f, b), paretoY(f, a)))
	})
	var pts []string
	for _, p := range front {
		pts = append(pts, num(x.px(p.PerUserTokPerSec))+","+num(y.px(paretoY(f, p))))
	}
	if len(pts) > 1 {
		w.printf(`<path class="series" d="M%s" stroke="%s"/>`, joinPts(pts), frontColor)
	}
}

// paretoPoint draws one stage: filled on the front, hollow below it,
// ringed when best, with its name beside it and its figures on hover.
func (w *svgWriter) paretoPoint(x, y axis, f analysis.ParetoFront, p analysis.ParetoPoint) {
	px, py := x.px(p.PerUserTokPerSec), y.px(paretoY(f, p))
	fill, stroke := frontColor, frontColor
	if !p.OnFront {
		fill, stroke = "#fff", belowColor
	}
	if p.Stage == f.Best {
		w.printf(`<circle class="best" cx="%s" cy="%s" r="8" fill="none" stroke="%s" stroke-width="2"/>`, num(px), num(py), bestColor)
	}
	w.printf(`<circle class="dot" cx="%s" cy="%s" r="4" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`,
		num(px), num(py), fill, stroke, esc(pointTitle(f, p)))
	// Labels go left of points in the right half, to stay inside the
	// chart, and clear of the best point's ring.
	anchor, dx := "start", 7.0
	if p.Stage == f.Best {
		dx = 11
	}
	if px > (padL+chartW-padR)/2 {
		anchor, dx = "end", -dx
	}
	w.printf(`<text class="ptlabel" x="%s" y="%s" text-anchor="%s">%s</text>`, num(px+dx), num(py-6), anchor, esc(p.Stage))
}

// pointTitle is a point's hover text: "c8 (8 VUs): 41.2 tok/s/user ×
// 298 tok/s, on the front, 99.5% within the SLO".
func pointTitle(f analysis.ParetoFront, p analysis.ParetoPoint) string {
	s := fmt.Sprintf("%s (%s): %s tok/s/user × %s tok/s", p.Stage, loadWords(p.Load, p.LoadUnit),
		tokRate(p.PerUserTokPerSec), tokRate(p.TokPerSec))
	if f.GPUs > 0 {
		s += fmt.Sprintf(" (%s tok/s/GPU)", tokRate(p.TokPerSecPerGPU))
	}
	if p.OnFront {
		s += ", on the front"
	} else {
		s += ", below the front (" + p.DominatedBy + " beats it on both)"
	}
	if f.SLOSet {
		s += ", " + pctCell(p.GoodShare) + " within the SLO"
	}
	return s
}

// paretoDesc describes the chart for a reader who cannot see it.
func paretoDesc(f analysis.ParetoFront) string {
	var front, below []string
	for _, p := range f.Points {
		if p.OnFront {
			front = append(front, p.Stage)
		} else {
			below = append(below, p.Stage)
		}
	}
	s := fmt.Sprintf("%d stages; on the Pareto front: %s", len(f.Points), strings.Join(front, ", "))
	if len(below) > 0 {
		s += "; below it: " + strings.Join(below, ", ")
	}
	return s + ". Best meeting the SLO: " + f.BestText + "."
}
