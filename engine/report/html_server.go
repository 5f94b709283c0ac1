package report

import (
	"fmt"
	"math"
	"strings"
)

// serverSection draws r's server metrics, shifted from the run's start to
// the time series' origin so that both line up; nil when none were
// scraped.
func serverSection(r *Result, labels []string) ([]chartOut, string) {
	sm := r.ServerMetrics
	if sm == nil {
		return nil, ""
	}
	shift := 0.0
	if origin, ok := seriesOrigin(r); ok && !r.Run.Start.IsZero() {
		shift = origin - float64(r.Run.Start.UnixNano())/1e9
	}
	series := make([]serverSeries, 0, len(sm.Series))
	for _, s := range sm.Series {
		series = append(series, serverSeries{Name: s.Name, Help: s.Help, Unit: s.Unit, T: s.T, V: s.V})
	}
	note := fmt.Sprintf("Scraped from %s every %gs: %s, %d failed.", sm.URL, sm.EveryS, count(int64(sm.Scrapes), "scrape", "scrapes"), sm.Failures)
	if len(sm.Errors) > 0 {
		note += " Errors: " + strings.Join(sm.Errors, "; ")
	}
	return serverCharts(series, stageMarks(r, labels), shift), note
}

// serverSeries is one server metric over time, in seconds since the run
// start, as engine/servermetrics records it.
type serverSeries struct {
	Name, Help, Unit string
	T, V             []float64
}

// serverCharts draws each server series as a small chart, all on one time
// axis (the widest series' span) so that they line up under each other.
func serverCharts(series []serverSeries, marks []vmark, shift float64) []chartOut {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, t := range s.T {
			lo, hi = math.Min(lo, t-shift), math.Max(hi, t-shift)
		}
	}
	var out []chartOut
	for i, s := range series {
		if len(s.T) == 0 || len(s.T) != len(s.V) {
			continue
		}
		x := make([]float64, len(s.T))
		for j, t := range s.T {
			x[j] = t - shift
		}
		// Invisible marks at both ends give every chart the same x range.
		ends := append([]vmark{{X: lo, Class: "edge"}, {X: hi, Class: "edge"}}, marks...)
		c := lineChart{Name: fmt.Sprintf("server-%d", i), Title: s.Name, XLabel: "time since the first stage started (s)",
			YLabel: serverUnit(s.Unit), Marks: ends, Series: []lineSeries{{Name: s.Name, X: x, Y: s.V}}}
		co := c.render()
		if s.Help != "" {
			co.Notes = []string{s.Help}
		}
		out = append(out, co)
	}
	return out
}

// serverUnit names a series' unit for its y axis.
func serverUnit(unit string) string {
	switch unit {
	case "requests":
		return "requests"
	case "fraction":
		return "fraction (0..1)"
	case "ms":
		return "ms"
	case "1/s":
		return "per second"
	case "":
		return "value"
	}
	return unit
}
