package report

import (
	"cmp"
	"html/template"
	"math"
	"slices"
	"strings"
)

// lineSeries is one line of a lineChart. NaN values are gaps (a point
// with nothing measured, or ≤ 0 on a log axis).
type lineSeries struct {
	Name   string
	X, Y   []float64
	Dash   bool
	Points bool   // mark each value, for charts with few points
	Color  string // "" takes the palette's next colour
}

// vmark is a labelled vertical line: a stage boundary, a knee.
type vmark struct {
	X     float64
	Label string
	Class string // "stage", "knee", "cliff"
}

// lineChart is an x-y chart of lines on a linear x axis.
type lineChart struct {
	Name, Title    string
	XLabel, YLabel string
	LogY           bool
	LogX           bool // all x > 0: a sweep doubling its load
	Series         []lineSeries
	Marks          []vmark
	// XText prints an x tick; nil prints the number.
	XText func(float64) string
	// XTicks overrides the automatic x ticks (the load levels of a sweep).
	XTicks []float64
}

// chartOut is a rendered chart with its legend, ready for the template.
type chartOut struct {
	SVG    template.HTML
	Legend []legendItem
	Notes  []string
}

func (c *lineChart) render() chartOut {
	x, y := c.axes()
	w := &svgWriter{}
	w.open(c.Name, c.Title)
	ticks := c.XTicks
	if ticks == nil {
		ticks = x.ticks(8)
	}
	text := c.XText
	if text == nil {
		text = tickLabel
	}
	w.frame(x, y, c.XLabel, c.YLabel, ticks, text)
	for i, m := range mergeMarks(c.Marks) {
		w.mark(x, m, i)
	}
	var legend []legendItem
	for i, s := range c.Series {
		color := cmp.Or(s.Color, palette[i%len(palette)])
		w.line(x, y, s, color)
		legend = append(legend, legendItem{Name: s.Name, Color: color, Dash: s.Dash})
	}
	return chartOut{SVG: w.html(), Legend: legend}
}

// axes spans every series and mark; a log y axis ignores values ≤ 0.
func (c *lineChart) axes() (axis, axis) {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i, v := range s.Y {
			// Gaps still span x, so that charts of one time axis align.
			xlo, xhi = math.Min(xlo, s.X[i]), math.Max(xhi, s.X[i])
			if usable(v, c.LogY) {
				ylo, yhi = math.Min(ylo, v), math.Max(yhi, v)
			}
		}
	}
	for _, m := range c.Marks {
		xlo, xhi = math.Min(xlo, m.X), math.Max(xhi, m.X)
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi = 0, 1
	}
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	x := axis{lo: xlo, hi: xhi, from: padL, to: chartW - padR, log: c.LogX && xlo > 0}
	y := axis{from: chartH - padB, to: padT, log: c.LogY}
	if c.LogY {
		y.lo, y.hi = logRange(ylo, yhi)
	} else {
		if math.IsInf(ylo, 0) {
			ylo, yhi = 0, 1
		}
		y.lo, y.hi = linearRange(ylo, yhi)
	}
	return x, y
}

func usable(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// line draws one series as polylines broken at its gaps.
func (w *svgWriter) line(x, y axis, s lineSeries, color string) {
	dash := ""
	if s.Dash {
		dash = ` stroke-dasharray="6 4"`
	}
	var pts []string
	flush := func() {
		if len(pts) > 1 {
			w.printf(`<path class="series" d="M%s" stroke="%s"%s/>`, joinPts(pts), color, dash)
		}
		pts = pts[:0]
	}
	for i, v := range s.Y {
		if !usable(v, y.log) {
			flush()
			continue
		}
		px, py := num(x.px(s.X[i])), num(y.px(v))
		pts = append(pts, px+","+py)
		if s.Points {
			w.printf(`<circle class="dot" cx="%s" cy="%s" r="3" fill="%s"><title>%s: %s</title></circle>`,
				px, py, color, esc(s.Name), esc(trimZeros(v)))
		}
	}
	flush()
}

func joinPts(pts []string) string {
	out := pts[0]
	for _, p := range pts[1:] {
		out += " L" + p
	}
	return out
}

// mark draws a labelled vertical line across the plot. Labels alternate
// between two rows so that neighbours do not collide, and sit left of
// their line in the right half so that they stay inside the chart.
func (w *svgWriter) mark(x axis, m vmark, i int) {
	at := x.px(m.X)
	px := num(at)
	w.printf(`<line class="mark %s" x1="%s" x2="%s" y1="%d" y2="%d"/>`, m.Class, px, px, padT, chartH-padB)
	if m.Label == "" {
		return
	}
	anchor, dx := "start", "3"
	if at > (padL+chartW-padR)/2 {
		anchor, dx = "end", "-3"
	}
	w.printf(`<text class="marklabel %s" x="%s" y="%d" dx="%s" text-anchor="%s">%s</text>`,
		m.Class, px, padT+11+12*(i%2), dx, anchor, esc(m.Label))
}

// mergeMarks joins the labels of marks of one class at one x (stages of
// concurrent scenarios starting together), keeping the first's order.
func mergeMarks(marks []vmark) []vmark {
	var out []vmark
	for _, m := range marks {
		j := slices.IndexFunc(out, func(o vmark) bool { return o.X == m.X && o.Class == m.Class })
		switch {
		case j < 0:
			out = append(out, m)
		case m.Label != "":
			out[j].Label = strings.TrimPrefix(out[j].Label+", "+m.Label, ", ")
		}
	}
	return out
}
