package servermetrics

import (
	"math"

	dto "github.com/prometheus/client_model/go"
)

// builder turns successive scrapes into the chosen series. Not safe for
// concurrent use: the scraper's goroutine owns it.
type builder struct {
	tracks []*track
}

// track follows one chosen metric across scrapes.
type track struct {
	choice
	series []Series // one, or one per quantile

	havePrev bool
	prevT    float64
	prevV    float64
	prevH    histogram
}

func newBuilder() *builder {
	b := &builder{}
	for _, c := range chosen {
		b.tracks = append(b.tracks, &track{choice: c})
	}
	return b
}

// add records one successful scrape taken t seconds after the run start.
func (b *builder) add(t float64, fams families) {
	for _, tr := range b.tracks {
		if mf := tr.family(fams); mf != nil {
			tr.add(t, mf)
		}
	}
}

// add derives the track's points from the scrape at t.
func (tr *track) add(t float64, mf *dto.MetricFamily) {
	help := mf.GetHelp()
	switch tr.kind {
	case kindGauge:
		if v, ok := sum(mf); ok {
			tr.point(0, t, v, help, "")
		}
	case kindRate:
		if v, ok := sum(mf); ok {
			tr.rate(t, v, help)
		}
	case kindHistogram:
		if h, ok := mergeHistogram(mf); ok {
			tr.quantiles(t, h, help)
		}
	}
}

// rate records the counter's increase per second since the previous
// scrape. A counter that went down was reset by a restart: its value is
// then the increase since the restart, never a negative rate.
func (tr *track) rate(t, v float64, help string) {
	if tr.havePrev && t > tr.prevT {
		inc := v - tr.prevV
		if inc < 0 {
			inc = v
		}
		tr.point(0, t, inc/(t-tr.prevT), help, " (per second)")
	}
	tr.havePrev, tr.prevT, tr.prevV = true, t, v
}

// quantiles records p50 and p99 of what the histogram observed since the
// previous scrape, in ms; an interval without observations has no point.
func (tr *track) quantiles(t float64, h histogram, help string) {
	if tr.havePrev {
		d := h.since(tr.prevH)
		for i, q := range quantiles {
			if v, ok := d.quantile(q.q); ok {
				tr.point(i, t, v*1000, help, " ("+q.suffix[1:]+" over each scrape interval)")
			}
		}
	}
	tr.havePrev, tr.prevH = true, h
}

// point appends (t, v) to the track's i-th series, creating the series on
// first use. Non-finite values cannot be written as JSON and are dropped.
func (tr *track) point(i int, t, v float64, help, helpSuffix string) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	for len(tr.series) <= i {
		tr.series = append(tr.series, Series{})
	}
	s := &tr.series[i]
	if s.Name == "" {
		s.Name, s.Unit = tr.seriesName(i), tr.unit
		if help != "" {
			s.Help = help + helpSuffix
		}
	}
	s.T = append(s.T, math.Round(t*1000)/1000)
	s.V = append(s.V, v)
}

// seriesName names the i-th series derived from the track's metric.
func (tr *track) seriesName(i int) string {
	switch tr.kind {
	case kindRate:
		return tr.name + ":rate"
	case kindHistogram:
		return tr.name + quantiles[i].suffix
	}
	return tr.name
}

// series returns every series with at least one point, in chosen order.
func (b *builder) series() []Series {
	out := []Series{}
	for _, tr := range b.tracks {
		for _, s := range tr.series {
			if s.Name != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
