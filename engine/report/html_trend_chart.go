package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmload/llmload/engine/textfmt"
)

// Colours of a trend chart's shifts: the report's red of a cliff for the
// worse, its green of a capacity answer for the better.
const (
	worseColor  = "#b42318"
	betterColor = "#067647"
)

// trendChartOut draws c as chart i of the page: each run a dot with its
// 95% interval as a whisker, in run order, and each change point a dashed
// line before the first run after the shift.
func trendChartOut(c TrendChart, i int) chartOut {
	p := newTrendPlot(c)
	w := &svgWriter{}
	w.open(fmt.Sprintf("trend-%d", i), trendTitle(c))
	w.frame(p.x, p.y, "run, oldest first", trendYLabel(c, p.scale), runTicks(len(c.Runs)), func(v float64) string {
		return clipRunes(c.Runs[int(v)].ID, 10)
	})
	for k, ch := range shownChanges(c) {
		w.mark(p.x, vmark{X: float64(ch.Index) - 0.5, Label: changeLabel(c, ch), Class: changeClass(ch)}, k)
	}
	w.trendRuns(p, c)
	if len(c.Runs) == 0 {
		w.printf(`<text class="axis" x="%d" y="%d" text-anchor="middle">no runs</text>`, (padL+chartW-padR)/2, (padT+chartH-padB)/2)
	}
	return chartOut{SVG: w.html(), Legend: trendLegend(c), Notes: trendNotes(c)}
}

// trendRuns draws a line through the values, then each run's whisker and
// dot over it; a run without a finite value is a gap.
func (w *svgWriter) trendRuns(p trendPlot, c TrendChart) {
	color := palette[0]
	s := lineSeries{Name: c.Metric}
	for i, r := range c.Runs {
		s.X, s.Y = append(s.X, float64(i)), append(s.Y, p.yv(r.Value))
	}
	w.line(p.x, p.y, s, color)
	for i, r := range c.Runs {
		if finite(r.Lo) && finite(r.Hi) {
			w.whisker(p.x.px(float64(i)), p.y.px(p.yv(r.Lo)), p.y.px(p.yv(r.Hi)), color)
		}
	}
	for i, r := range c.Runs {
		if v := p.yv(r.Value); !math.IsNaN(v) {
			w.printf(`<circle class="dot" cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`,
				num(p.x.px(float64(i))), num(p.y.px(v)), color, esc(runTitle(c, r)))
		}
	}
}

// whisker is a vertical line from py1 to py2 with a short cap at each end.
func (w *svgWriter) whisker(px, py1, py2 float64, color string) {
	x, l, r, y1, y2 := num(px), num(px-4), num(px+4), num(py1), num(py2)
	w.printf(`<path class="whisker" d="M%s,%s V%s M%s,%s H%s M%s,%s H%s" fill="none" stroke="%s"/>`,
		x, y1, y2, l, y1, r, l, y2, r, color)
}

// runTitle is a dot's hover text: "run 42 (a1b2c3d), 2026-11-30 14:02:
// 435 ms, 95% interval 420 – 450".
func runTitle(c TrendChart, r TrendRun) string {
	s := "run " + r.ID
	if r.Label != "" {
		s += " (" + r.Label + ")"
	}
	if !r.Time.IsZero() {
		s += ", " + trendTime(r.Time)
	}
	s += ": " + trendValue(r.Value)
	if c.Unit != "" {
		s += " " + c.Unit
	}
	if iv := intervalText(r.Lo, r.Hi); iv != "-" {
		s += ", 95% interval " + iv
	}
	return s
}

func changeClass(ch TrendChange) string {
	if ch.Worse {
		return "change worse"
	}
	return "change better"
}

func trendTitle(c TrendChart) string {
	s := c.Metric
	if c.Stage != "" {
		s += " of " + c.Stage
	}
	n := int64(len(shownChanges(c)))
	return fmt.Sprintf("%s across %s, %s", s, textfmt.Count(int64(len(c.Runs)), "run", "runs"), textfmt.Count(n, "shift", "shifts"))
}

// trendYLabel is "ttft.p99 (ms)", or "ttft.p99 (ms ×1e18)" on a scaled axis.
func trendYLabel(c TrendChart, scale float64) string {
	unit := c.Unit
	if scale != 1 {
		unit = strings.TrimSpace(fmt.Sprintf("%s ×1e%.0f", unit, math.Log10(scale)))
	}
	if unit == "" {
		return clipRunes(c.Metric, 28)
	}
	return clipRunes(c.Metric, 28) + " (" + unit + ")"
}

// trendLegend names the dots and, when the chart has them, each kind of shift.
func trendLegend(c TrendChart) []legendItem {
	out := []legendItem{{Name: "each run, with its 95% interval", Color: palette[0]}}
	var worse, better bool
	for _, ch := range shownChanges(c) {
		worse, better = worse || ch.Worse, better || !ch.Worse
	}
	if worse {
		out = append(out, legendItem{Name: "shift for the worse", Color: worseColor, Dash: true})
	}
	if better {
		out = append(out, legendItem{Name: "shift for the better", Color: betterColor, Dash: true})
	}
	return out
}

// trendNotes say which way is better and what the chart leaves out.
func trendNotes(c TrendChart) []string {
	if len(c.Runs) == 0 {
		return appendNote([]string{"No runs: nothing to chart."}, c.Note)
	}
	out := []string{"Lower is better."}
	if !c.HigherBad {
		out[0] = "Higher is better."
	}
	if n := unplotted(c.Runs); n > 0 {
		out = append(out, textfmt.Count(int64(n), "run has", "runs have")+" no finite value: listed below, not drawn.")
	}
	if n := len(c.Changes) - len(shownChanges(c)); n > 0 {
		out = append(out, textfmt.Count(int64(n), "change point names", "change points name")+" no run: not shown.")
	}
	return appendNote(out, c.Note)
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

func unplotted(runs []TrendRun) int {
	n := 0
	for _, r := range runs {
		if !finite(r.Value) {
			n++
		}
	}
	return n
}
