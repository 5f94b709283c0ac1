package report

import (
	"math"

	"github.com/llmload/llmload/engine/metrics"
)

// histSeries is one distribution of a histChart: a share of its requests
// per latency bucket.
type histSeries struct {
	Name    string
	Buckets []metrics.Bucket
}

// histChart draws latency histograms on a log x axis: the first series as
// bars, the others (tag values) as step lines over them, each as a share
// of its own requests so that unequal groups compare by shape.
type histChart struct {
	Name, Title string
	Metric      string // "TTFT", "E2E"
	Series      []histSeries
}

// bucketRatio is the lower edge of a lone first bucket relative to its
// upper one: the histogram's edges are about 1.5 apart.
const bucketRatio = 1.5

func (c *histChart) render() chartOut {
	x := c.xAxis()
	y := axis{lo: 0, hi: c.maxShare(), from: chartH - padB, to: padT}
	y.lo, y.hi = linearRange(0, y.hi)
	w := &svgWriter{}
	w.open(c.Name, c.Title)
	w.frame(x, y, c.Metric+" (ms, log scale)", "share of requests (%)", logTicks(x.lo, x.hi), tickLabel)
	var legend []legendItem
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		if i == 0 {
			w.bars(x, y, s, color)
		} else {
			w.steps(x, y, s, color)
		}
		legend = append(legend, legendItem{Name: s.Name, Color: color, Dash: i > 0})
	}
	return chartOut{SVG: w.html(), Legend: legend}
}

func (c *histChart) xAxis() axis {
	lo, hi := math.Inf(1), 0.0
	for _, s := range c.Series {
		for i, b := range s.Buckets {
			lo, hi = math.Min(lo, lowerEdge(s.Buckets, i)), math.Max(hi, b.LeMS)
		}
	}
	l, h := logRange(lo, hi)
	return axis{lo: l, hi: h, from: padL, to: chartW - padR, log: true}
}

func (c *histChart) maxShare() float64 {
	top := 0.0
	for _, s := range c.Series {
		for _, v := range shares(s.Buckets) {
			top = math.Max(top, v)
		}
	}
	return top
}

// lowerEdge is where bucket i starts: the previous bucket's edge.
func lowerEdge(bs []metrics.Bucket, i int) float64 {
	if i > 0 {
		return bs[i-1].LeMS
	}
	return bs[0].LeMS / bucketRatio
}

// shares converts counts to percentages of their total.
func shares(bs []metrics.Bucket) []float64 {
	var n int64
	for _, b := range bs {
		n += b.Count
	}
	out := make([]float64, len(bs))
	for i, b := range bs {
		if n > 0 {
			out[i] = 100 * float64(b.Count) / float64(n)
		}
	}
	return out
}

func (w *svgWriter) bars(x, y axis, s histSeries, color string) {
	for i, v := range shares(s.Buckets) {
		x0, x1 := x.px(lowerEdge(s.Buckets, i)), x.px(s.Buckets[i].LeMS)
		top := y.px(v)
		w.printf(`<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s ≤ %s ms: %d (%s%%)</title></rect>`,
			num(x0+0.5), num(top), num(math.Max(x1-x0-1, 0.5)), num(y.px(0)-top), color,
			esc(s.Name), esc(trimZeros(s.Buckets[i].LeMS)), s.Buckets[i].Count, esc(trimZeros(v)))
	}
}

// steps outlines a histogram, so that several overlay without hiding
// each other.
func (w *svgWriter) steps(x, y axis, s histSeries, color string) {
	if len(s.Buckets) == 0 {
		return
	}
	base := num(y.px(0))
	d := "M" + num(x.px(lowerEdge(s.Buckets, 0))) + "," + base
	for i, v := range shares(s.Buckets) {
		py := num(y.px(v))
		d += " L" + num(x.px(lowerEdge(s.Buckets, i))) + "," + py + " L" + num(x.px(s.Buckets[i].LeMS)) + "," + py
	}
	d += " L" + num(x.px(s.Buckets[len(s.Buckets)-1].LeMS)) + "," + base
	w.printf(`<path class="series step" d="%s" stroke="%s" stroke-dasharray="6 3"/>`, d, color)
}
