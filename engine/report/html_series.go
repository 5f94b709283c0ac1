package report

import (
	"math"
	"slices"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// seriesOrigin is the time the series' T = 0 stands for: the first
// stage's start (metrics.Point), or the run's start without stages.
func seriesOrigin(r *result.Result) (t0 float64, ok bool) {
	if len(r.Stages) == 0 {
		return 0, false
	}
	first := r.Stages[0].Start
	for _, s := range r.Stages[1:] {
		if s.Start.Before(first) {
			first = s.Start
		}
	}
	return float64(first.UnixNano()) / 1e9, !first.IsZero()
}

// stageMarks places each stage's start on the series' time axis.
func stageMarks(r *result.Result, labels []string) []vmark {
	origin, ok := seriesOrigin(r)
	if !ok {
		return nil
	}
	marks := make([]vmark, 0, len(r.Stages))
	for i, s := range r.Stages {
		if s.Start.IsZero() {
			continue
		}
		at := float64(s.Start.UnixNano())/1e9 - origin
		marks = append(marks, vmark{X: math.Round(at*10) / 10, Label: labels[i], Class: "stage"})
	}
	return marks
}

// timeSeriesCharts draws the run second by second: arrivals (open models),
// load, output, errors and TTFT, all on the same time axis with the stage
// boundaries marked.
func timeSeriesCharts(r *result.Result, labels []string) []chartOut {
	ts := r.TimeSeries
	if len(ts) == 0 {
		return nil
	}
	marks := stageMarks(r, labels)
	x := make([]float64, len(ts))
	for i, p := range ts {
		x[i] = float64(p.T)
	}
	col := func(name string, v func(metrics.Point) float64) lineSeries {
		ys := make([]float64, len(ts))
		for i, p := range ts {
			ys[i] = v(p)
		}
		return lineSeries{Name: name, X: x, Y: ys}
	}
	// A second without a TTFT is null (nil), or 0 in files written before
	// nulls: either way a gap, never an instant first token.
	ttft := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return cmpNaN(*v > 0, *v)
	}
	chart := func(name, title, yLabel string, log bool, s ...lineSeries) chartOut {
		c := lineChart{Name: name, Title: title, XLabel: "time since the first stage started (s)",
			YLabel: yLabel, LogY: log, Series: s, Marks: marks}
		return c.render()
	}
	var out []chartOut
	if metrics.HasIntended(ts) {
		// Open models only: the schedule against what started, so a client
		// that fell behind (or a pool that ran dry) shows second by second.
		// Intended is drawn dashed over achieved, so both show where they agree.
		out = append(out, chart("ts-arrivals", "arrivals per second: intended and achieved", "iterations/s", false,
			col("achieved", func(p metrics.Point) float64 { return float64(p.Arrivals) }),
			dashed(col("intended", func(p metrics.Point) float64 { return float64(p.Intended) })),
			withColor(col("dropped", func(p metrics.Point) float64 { return float64(p.Dropped) }), "#c0392b")))
	}
	return append(out,
		chart("ts-inflight", "requests in flight", "requests in flight", false,
			col("in flight", func(p metrics.Point) float64 { return float64(p.InFlight) })),
		chart("ts-tokens", "output tokens per second", "output tokens/s", false,
			col("output tok/s", func(p metrics.Point) float64 { return p.OutputTokPerSec })),
		chart("ts-errors", "requests ended per second", "requests/s", false,
			col("completions", func(p metrics.Point) float64 { return float64(p.Completions) }),
			withColor(col("errors", func(p metrics.Point) float64 { return float64(p.Errors) }), "#c0392b")),
		chart("ts-ttft", "TTFT of the requests started each second", "TTFT (ms, log scale)", true,
			col("TTFT p50", func(p metrics.Point) float64 { return ttft(p.TTFTP50) }),
			dashed(col("TTFT p99", func(p metrics.Point) float64 { return ttft(p.TTFTP99) }))),
	)
}

func withColor(s lineSeries, c string) lineSeries { s.Color = c; return s }

func dashed(s lineSeries) lineSeries { s.Dash = true; return s }

// hasHistograms reports whether some stage carries TTFT or E2E buckets.
func hasHistograms(stages []metrics.StageSummary) bool {
	return slices.ContainsFunc(stages, func(s metrics.StageSummary) bool {
		return len(s.TTFT.Histogram) > 0 || len(s.E2E.Histogram) > 0
	})
}
