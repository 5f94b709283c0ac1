package report

import "math"

// maxPlotted and minPlotted bound the values a trend chart draws, so that
// the pixel arithmetic neither overflows nor meets subnormal numbers: 1e308
// is drawn at 1e300 and 1e-310 at 0, and the table shows them as they are.
const maxPlotted, minPlotted = 1e300, 1e-300

// markRoom is the share of the value range added at the top of a chart
// with change points, for the two rows of their labels.
const markRoom = 0.18

// trendPlot places a chart's marks: run i at x = i, a value v at
// y = v/scale on the y axis.
type trendPlot struct {
	x, y  axis
	scale float64 // a power of ten, 1 unless the values are very large or very close
}

// yv is v on the y axis, NaN when v is not drawn.
func (p trendPlot) yv(v float64) float64 { return plotted(v) / p.scale }

func newTrendPlot(c TrendChart) trendPlot {
	lo, hi := trendRange(valueRange(c.Runs))
	scale := tickScale(lo, hi)
	y := axis{lo: lo / scale, hi: hi / scale, from: chartH - padB, to: padT}
	if len(shownChanges(c)) > 0 {
		y.hi += (y.hi - y.lo) * markRoom // the marks' labels above the values
	}
	x := axis{lo: -0.5, hi: max(float64(len(c.Runs))-0.5, 0.5), from: padL, to: chartW - padR}
	return trendPlot{x: x, y: y, scale: scale}
}

// valueRange spans every drawable value and interval; lo > hi when none.
func valueRange(runs []TrendRun) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		vals := []float64{plotted(r.Value)}
		if finite(r.Lo) && finite(r.Hi) {
			vals = append(vals, plotted(r.Lo), plotted(r.Hi))
		}
		for _, v := range vals {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	return lo, hi
}

// trendRange pads [lo, hi] by a tenth of its span each side. Unlike
// linearRange it does not reach down to zero: a trend asks about shifts of
// a few percent, which a zero-based axis would flatten. Values that agree
// to three digits get a span of a tenth of their size, so that the ticks
// stay apart; no values at all, or only zeros, get [0, 1].
func trendRange(lo, hi float64) (float64, float64) {
	size := max(math.Abs(lo), math.Abs(hi))
	if lo > hi || size == 0 {
		return 0, 1
	}
	if hi-lo < 1e-3*size {
		lo, hi = lo-0.05*size, hi+0.05*size
	}
	pad := (hi - lo) / 10
	l := lo - pad
	if lo >= 0 && l < 0 {
		l = 0
	}
	return l, hi + pad
}

// tickScale is 1, or the power of ten to divide the values by when the
// frame's tick labels (three decimals, k and M) could not tell the ticks
// of [lo, hi] apart or would run out of the chart: the values then read
// 100 to 1000, and trendRange's span of at least 1e-3 of them keeps the
// ticks 0.02 or more apart.
func tickScale(lo, hi float64) float64 {
	size := max(math.Abs(lo), math.Abs(hi))
	if step := niceStep((hi - lo) / 5); step >= 1e-3 && size < 1e9 { // as the frame's y.ticks(5)
		return 1
	}
	return math.Pow(10, math.Floor(math.Log10(size))-2)
}

// plotted is v as drawn: NaN (not drawn) when not finite, else clamped to
// ±maxPlotted and flushed to zero below minPlotted.
func plotted(v float64) float64 {
	switch {
	case !finite(v):
		return math.NaN()
	case math.Abs(v) < minPlotted:
		return 0
	}
	return max(-maxPlotted, min(maxPlotted, v))
}

// runTicks are the positions of about eight runs to label, every run when
// there are few.
func runTicks(n int) []float64 {
	step := max(1, int(niceStep(float64(n)/8)))
	var out []float64
	for i := 0; i < n; i += step {
		out = append(out, float64(i))
	}
	return out
}
