package metrics

import (
	"errors"
	"fmt"
	"time"
)

// mergeSeries lays the parts' time series onto the earliest origin and
// adds them up. Segments start a few milliseconds apart, so each part's
// seconds shift by its origin's offset rounded to a whole second; each
// second's TTFT percentiles come from the parts' merged histograms, and
// points() recomputes the in-flight counts, the sums of the parts'.
func mergeSeries(parts []Part) (series, error) {
	var s series
	for _, p := range parts {
		if sr := p.State.Series; sr != nil && !sr.Origin.IsZero() && (s.anchor.IsZero() || sr.Origin.Before(s.anchor)) {
			s.anchor = sr.Origin
		}
	}
	for i, p := range parts {
		if err := s.absorb(p.Summary.TimeSeries, p.State.Series); err != nil {
			return series{}, fmt.Errorf("%w: part %d: time series: %w", ErrMerge, i, err)
		}
	}
	return s, nil
}

// absorb adds one part's points, st holding their origin and TTFTs.
func (s *series) absorb(points []Point, st *SeriesState) error {
	if len(points) == 0 {
		return nil
	}
	if st == nil || st.Origin.IsZero() {
		return errors.New("points without an origin")
	}
	if len(st.TTFT) != 0 && len(st.TTFT) != len(points) {
		return fmt.Errorf("%d TTFT trends for %d points", len(st.TTFT), len(points))
	}
	shift := int64(st.Origin.Sub(s.anchor).Round(time.Second) / time.Second)
	for i, p := range points {
		sec := p.T + shift
		if sec < -MaxSeriesSeconds || sec > MaxSeriesSeconds {
			continue // as series.slot, before the conversion could overflow
		}
		c := s.slot(time.Duration(sec) * time.Second)
		c.starts += p.Starts
		c.completions += p.Completions
		c.errors += p.Errors
		c.intended += p.Intended
		c.arrivals += p.Arrivals
		c.dropped += p.Dropped
		c.outTok += p.OutputTokPerSec
		if len(st.TTFT) == 0 {
			continue
		}
		t, err := st.TTFT[i].trend(sparseDurationGeo)
		if err != nil {
			return fmt.Errorf("second %d: %w", p.T, err)
		}
		if t.n > 0 {
			c.ttft.t.absorb(t)
		}
		c.ttft.t.clamped += t.clamped
	}
	return nil
}
