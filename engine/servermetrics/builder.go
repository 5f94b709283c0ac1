package servermetrics

import (
	"math"

	dto "github.com/prometheus/client_model/go"
)

// builder turns successive scrapes into the chosen series and remembers
// what the endpoint exposed, so that an endpoint of names llmload does not
// know is described rather than silent. Not safe for concurrent use: the
// scraper's goroutine owns it.
type builder struct {
	tracks []*track
	gpus   *gpuTracks
	pos    *posTracks

	families int             // in the latest scrape
	known    map[string]bool // chosen metrics seen in any scrape
	names    []string        // the latest scrape's family names
}

// track follows one chosen metric across scrapes.
type track struct {
	choice
	series []Series // one, or one per quantile
	round  int      // of the scrape being added

	havePrev     bool
	prevT        float64
	prevV, prevD float64 // a counter's value, and its divisor's for a ratio
	prevH        histogram
}

func newBuilder() *builder {
	b := &builder{known: map[string]bool{}, gpus: newGPUTracks(), pos: newPosTracks()}
	for _, c := range chosen {
		b.tracks = append(b.tracks, &track{choice: c})
	}
	return b
}

// add records one successful scrape taken t seconds after the run start,
// in the given round of the scrape schedule (see poller.roundAt).
func (b *builder) add(t float64, round int, fams families) {
	b.families, b.names = len(fams), b.names[:0]
	for name := range fams {
		b.names = append(b.names, name)
	}
	for _, tr := range b.tracks {
		if mf := lookup(fams, tr.name); mf != nil {
			b.known[tr.name] = true
			tr.round = round
			tr.add(t, mf, fams)
		}
	}
	b.gpus.add(t, round, fams, b.known)
	b.pos.add(t, round, fams, b.known)
}

// add derives the track's points from the scrape at t.
func (tr *track) add(t float64, mf *dto.MetricFamily, fams families) {
	help := mf.GetHelp()
	switch tr.kind {
	case kindSum:
		if v, n := sum(mf); n > 0 {
			tr.point(0, t, v, help)
		}
	case kindMean:
		if v, ok := mean(mf); ok {
			tr.point(0, t, v, help)
		}
	case kindRate:
		if v, n := sum(mf); n > 0 {
			tr.rate(t, v, help)
		}
	case kindIncrease:
		if v, n := sum(mf); n > 0 {
			tr.increase(t, v, help)
		}
	case kindSumRate:
		if v, ok := histogramSum(mf); ok {
			tr.rate(t, v, help)
		}
	case kindRatio, kindShare:
		tr.addRatio(t, mf, lookup(fams, tr.per))
	case kindHistogram:
		if h, ok := mergeHistogram(mf); ok {
			tr.quantiles(t, h, help)
		}
	}
}

// addRatio reads a ratio's two counters; a scrape without the divisor
// gives no point and keeps the previous values.
func (tr *track) addRatio(t float64, mf, per *dto.MetricFamily) {
	if per == nil {
		return
	}
	v, n := sum(mf)
	d, m := sum(per)
	if n > 0 && m > 0 {
		tr.ratio(t, v, d, mf.GetHelp())
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
		tr.point(0, t, inc/(t-tr.prevT), help)
	}
	tr.havePrev, tr.prevT, tr.prevV = true, t, v
}

// increase records the counter's increase since the previous scrape; a
// counter that went down was reset, and its value is the increase since.
func (tr *track) increase(t, v float64, help string) {
	if tr.havePrev {
		inc := v - tr.prevV
		if inc < 0 {
			inc = v
		}
		tr.point(0, t, inc, help)
	}
	tr.havePrev, tr.prevT, tr.prevV = true, t, v
}

// ratio records the increase of v over that of its divisor d since the
// previous scrape (for a share, over both increases together), scaled; an
// interval in which the divisor did not grow (no queries, no tokens) has
// no point. Either counter going down means a restart: the values since
// it are the increases.
func (tr *track) ratio(t, v, d float64, help string) {
	if tr.havePrev {
		dv, dd := v-tr.prevV, d-tr.prevD
		if dv < 0 || dd < 0 {
			dv, dd = v, d
		}
		if tr.kind == kindShare {
			dd += dv
		}
		if dd > 0 {
			tr.point(0, t, tr.scale*dv/dd, help)
		}
	}
	tr.havePrev, tr.prevV, tr.prevD = true, v, d
}

// quantiles records p50 and p99 of what the histogram observed since the
// previous scrape, in ms; an interval without observations has no point.
func (tr *track) quantiles(t float64, h histogram, help string) {
	if tr.havePrev {
		d := h.since(tr.prevH)
		for i, q := range quantiles {
			if v, ok := d.quantile(q.q); ok {
				tr.point(i, t, v*1000, help)
			}
		}
	}
	tr.havePrev, tr.prevH = true, h
}

// point appends (t, v) to the track's i-th series, creating the series on
// first use. Non-finite values cannot be written as JSON and are dropped.
func (tr *track) point(i int, t, v float64, help string) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	for len(tr.series) <= i {
		tr.series = append(tr.series, Series{})
	}
	s := &tr.series[i]
	if s.Name == "" {
		s.Name, s.Role, s.Unit = tr.seriesName(i), tr.seriesRole(i), tr.unit
		if help != "" {
			s.Help = help + tr.helpSuffix(i)
		}
	}
	s.T = append(s.T, math.Round(t*1000)/1000)
	s.V = append(s.V, v)
	s.rounds = append(s.rounds, tr.round)
}

// series returns every series with at least one point, in chosen order.
// Of one server's series with one role only the first is kept: the other
// is the same metric under an older name, which some versions expose too.
func (b *builder) series() []Series {
	out := []Series{}
	type key struct {
		server string
		role   Role
	}
	taken := map[key]bool{}
	for _, tr := range b.tracks {
		for _, s := range tr.series {
			k := key{tr.server, s.Role}
			if s.Name == "" || (s.Role != "" && taken[k]) {
				continue
			}
			taken[k] = true
			out = append(out, s)
		}
	}
	out = append(out, b.pos.series...)
	return append(out, b.gpus.series...)
}
