package metrics

import (
	"errors"
	"fmt"
	"math"
)

// snap rebuilds the stage's cells as a snapshot holds them. Custom cells
// take their kind from kinds.
func (s *StageState) snap(kinds map[string]kind) (stageSnap, error) {
	ss := stageSnap{
		scenario: s.Scenario, stage: s.Stage, index: s.Index, start: s.Start, end: s.End, timed: s.Timed,
		checks: make(map[string]cellSnap, len(s.Checks)),
		custom: make(map[string]cellSnap, len(s.Custom)),
		dirty:  make(map[string][numVerdicts]int64, len(s.Dirty)),
	}
	for name := range s.Cells {
		if _, ok := builtinIDs[name]; !ok {
			return stageSnap{}, fmt.Errorf("unknown built-in metric %q", name)
		}
	}
	var err error
	for id, d := range builtins {
		if ss.cells[id], err = s.Cells[d.name].cell(d.kind, metricID(id).geo()); err != nil {
			return stageSnap{}, fmt.Errorf("%s: %w", d.name, err)
		}
	}
	for name, cs := range s.Checks {
		if ss.checks[name], err = cs.cell(kindRate, durationGeo); err != nil {
			return stageSnap{}, fmt.Errorf("check %q: %w", name, err)
		}
	}
	for name, cs := range s.Custom {
		k, ok := kinds[name]
		if !ok {
			return stageSnap{}, fmt.Errorf("custom metric %q has no kind", name)
		}
		if ss.custom[name], err = cs.cell(k, valueGeo); err != nil {
			return stageSnap{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	for name, v := range s.Dirty {
		ss.dirty[name] = [numVerdicts]int64{vHandled: v.Handled, vDefect: v.Defects, vAccepted: v.Accepted, vCanceled: v.Canceled}
	}
	return ss, nil
}

// cell rebuilds a cell of kind k; a trend gets geometry g.
func (s CellState) cell(k kind, g geometry) (cellSnap, error) {
	if s.N < 0 || s.Hits < 0 || s.Hits > s.N || s.Clamped < 0 {
		return cellSnap{}, fmt.Errorf("impossible counts (n %d, hits %d, clamped %d)", s.N, s.Hits, s.Clamped)
	}
	switch k {
	case kindTrend:
		t, err := s.trend(g)
		if err != nil {
			return cellSnap{}, err
		}
		return cellSnap{kind: k, t: t, n: t.n}, nil
	case kindCounter:
		return cellSnap{kind: k, n: s.N, sum: s.Sum, tail: s.Tail}, nil
	}
	return cellSnap{kind: k, n: s.N, hits: s.Hits}, nil
}

// trend rebuilds a trend of geometry g. Its histograms are the sparse
// kind, which decoding yields, so it merges only with rebuilt trends.
func (s CellState) trend(g geometry) (*trend, error) {
	g.sparse = true
	t := &trend{geo: g, n: s.N, clamped: s.Clamped, min: s.Min, max: s.Max, sum: s.Sum}
	var err error
	if t.pos, err = decodeHist(s.Pos, g); err != nil {
		return nil, err
	}
	if t.neg, err = decodeHist(s.Neg, g); err != nil {
		return nil, fmt.Errorf("negative values: %w", err)
	}
	switch got := histCount(t.pos) + histCount(t.neg); {
	case g.quantized && t.neg != nil:
		return nil, fmt.Errorf("%w: negative latencies", ErrHDR)
	case got != s.N:
		return nil, fmt.Errorf("%w: %d values, but the cell counts %d", ErrHDR, got, s.N)
	}
	return t, nil
}

// decodeHist decodes a histogram of geometry g; nil for "". DecodeHDR
// checks the lowest value and the precision, this also the range, so
// that merged buckets line up.
func decodeHist(s string, g geometry) (hist, error) {
	if s == "" {
		return nil, nil
	}
	h, err := DecodeHDR(s)
	if err != nil {
		return nil, err
	}
	if got := h.HighestTrackableValue(); got != g.highest {
		return nil, fmt.Errorf("%w: highest value %d, want %d", ErrHDR, got, g.highest)
	}
	return h, nil
}

// trend rebuilds the trend of a latency Dist from its HDR histogram and
// exact figures; its sum comes from the mean, so to a microsecond a value.
func (d Dist) trend() (*trend, error) {
	t := &trend{geo: sparseDurationGeo, clamped: d.Clamped}
	if d.Count == 0 {
		return t, nil
	}
	if d.HDR == "" {
		return nil, errors.New("no HDR histogram")
	}
	h, err := decodeHist(d.HDR, sparseDurationGeo)
	if err != nil {
		return nil, err
	}
	if got := histCount(h); got != d.Count {
		return nil, fmt.Errorf("%w: %d values, but the distribution counts %d", ErrHDR, got, d.Count)
	}
	t.pos, t.n = h, d.Count
	t.min, t.max = ticks(d.Min), ticks(d.Max)
	t.sum = ticks(d.Mean) * float64(d.Count)
	return t, nil
}

// ticks converts a latency in milliseconds, a whole number of ticks, back.
func ticks(ms float64) float64 { return math.Round(ms * ticksPerUnit) }
