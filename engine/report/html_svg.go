package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart geometry in SVG user units; the viewBox scales it to the page
// width, so the numbers only fix the aspect ratio and the margins.
const (
	chartW, chartH = 640, 260
	padL, padR     = 64, 16
	padT, padB     = 16, 44
)

// palette colours series in order; chosen to stay apart for the common
// forms of colour blindness (Okabe–Ito).
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442"}

// axis maps data values to pixels along one dimension, linearly or on a
// log10 scale.
type axis struct {
	lo, hi   float64 // data range; on a log axis both > 0
	from, to float64 // pixel range
	log      bool
}

func (a axis) px(v float64) float64 {
	lo, hi := a.lo, a.hi
	if a.log {
		v, lo, hi = math.Log10(math.Max(v, a.lo)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return (a.from + a.to) / 2
	}
	return a.from + (v-lo)/(hi-lo)*(a.to-a.from)
}

// ticks returns about n round values inside the axis range: 1-2-5 steps
// on a linear axis, 1-2-5 per decade on a log one.
func (a axis) ticks(n int) []float64 {
	if a.log {
		return logTicks(a.lo, a.hi)
	}
	step := niceStep((a.hi - a.lo) / float64(n))
	var out []float64
	for v := math.Ceil(a.lo/step-1e-9) * step; v <= a.hi+step*1e-9; v += step {
		out = append(out, cleanZero(v))
	}
	return out
}

func cleanZero(v float64) float64 {
	if math.Abs(v) < 1e-12 {
		return 0
	}
	return v
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// logTicks are the 1, 2, 5 multiples of powers of ten within [lo, hi];
// only the powers of ten when the range spans more than three decades.
func logTicks(lo, hi float64) []float64 {
	mult := []float64{1, 2, 5}
	if hi/lo > 1e3 {
		mult = []float64{1}
	}
	var out []float64
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range mult {
			if v := m * p; v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// linearRange pads [lo, hi] to start at zero for non-negative data and
// to have some height when flat.
func linearRange(lo, hi float64) (float64, float64) {
	if lo > 0 {
		lo = 0
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi + (hi-lo)*0.05
}

// logRange widens [lo, hi] to whole 1-2-5 steps so that a log axis has a
// tick at each end; values ≤ 0 cannot be shown on it and are ignored.
func logRange(lo, hi float64) (float64, float64) {
	if !(lo > 0) {
		lo = hi / 10
	}
	if !(hi > 0) {
		return 0.1, 1
	}
	l, h := math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if h <= l {
		h = l * 10
	}
	return l, h
}

// num prints a coordinate with one decimal: deterministic and compact.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// tickLabel prints an axis value short: 1.5k, 2M, 0.25.
func tickLabel(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZeros(v/1e6) + "M"
	case a >= 1e3:
		return trimZeros(v/1e3) + "k"
	default:
		return trimZeros(v)
	}
}

func trimZeros(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// esc escapes text for SVG built by hand; html/template cannot see into it.
func esc(s string) string { return template.HTMLEscapeString(s) }

// svgWriter accumulates one chart's markup.
type svgWriter struct{ b strings.Builder }

func (w *svgWriter) printf(format string, args ...any) { fmt.Fprintf(&w.b, format, args...) }

// open starts an <svg> that scales to its container's width.
func (w *svgWriter) open(name, title string) {
	w.printf(`<svg class="chart" data-chart="%s" viewBox="0 0 %d %d" role="img" aria-label="%s" preserveAspectRatio="xMidYMid meet">`,
		esc(name), chartW, chartH, esc(title))
	w.printf(`<title>%s</title>`, esc(title))
}

func (w *svgWriter) html() template.HTML {
	w.b.WriteString("</svg>")
	return template.HTML(w.b.String()) // every text inside went through esc
}

// frame draws the plot area, grid lines and tick labels of both axes and
// their titles.
func (w *svgWriter) frame(x, y axis, xLabel, yLabel string, xTicks []float64, xTickText func(float64) string) {
	w.printf(`<rect class="plot" x="%d" y="%d" width="%d" height="%d"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	for _, v := range y.ticks(5) {
		py := num(y.px(v))
		w.printf(`<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/>`, padL, chartW-padR, py, py)
		w.printf(`<text class="tick" x="%d" y="%s" text-anchor="end" dy="0.32em">%s</text>`, padL-6, py, esc(tickLabel(v)))
	}
	for _, v := range xTicks {
		px := num(x.px(v))
		w.printf(`<line class="grid" x1="%s" x2="%s" y1="%d" y2="%d"/>`, px, px, padT, chartH-padB)
		w.printf(`<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`, px, chartH-padB+16, esc(xTickText(v)))
	}
	w.printf(`<text class="axis" x="%d" y="%d" text-anchor="middle">%s</text>`, (padL+chartW-padR)/2, chartH-6, esc(xLabel))
	w.printf(`<text class="axis" transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`,
		(padT+chartH-padB)/2, esc(yLabel))
}

// legendItem is one entry of a chart's HTML legend.
type legendItem struct {
	Name  string
	Color string
	Dash  bool
}
