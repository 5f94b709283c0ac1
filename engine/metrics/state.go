package metrics

import (
	"cmp"
	"slices"
	"time"
)

// State is what an exact merge of collectors' results needs beyond their
// Summaries (see Merge): every metric's cell with its histograms, the
// custom metrics' kinds, the tracked views and the time series' origin and
// per-second TTFT histograms. It is plain data for JSON, compact:
// histograms in hdrhistogram-go's V2 compressed encoding in base64, as
// Dist.HDR, and empty parts left out.
type State struct {
	// Stages are one for each of Summary.Stages, which they match by
	// scenario, stage and index.
	Stages []StageState `json:"stages"`
	// Kinds are the custom metrics' kinds (engine.MetricTrend,
	// MetricCounter or MetricRate), declared or first seen.
	Kinds map[string]string `json:"kinds,omitempty"`
	// Views are the views registered with Collector.Track, sorted by
	// metric and filter.
	Views  []ViewState  `json:"views,omitempty"`
	Series *SeriesState `json:"series,omitempty"`
}

// StageState is one stage of a State: its identity, its window as the
// final snapshot had it (a counter's rate divides by it), and its cells.
type StageState struct {
	Scenario string    `json:"scenario"`
	Stage    string    `json:"stage"`
	Index    int       `json:"index"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	// Timed is false for a stage named only by events without a time
	// (script errors, metric samples): its window is empty.
	Timed bool `json:"timed,omitempty"`
	// Cells are the built-in metrics with data, by name (Builtin).
	Cells map[string]CellState `json:"cells,omitempty"`
	// Checks are the llm.check cells by check name; Custom the custom
	// metrics that got a value in the stage.
	Checks map[string]CellState `json:"checks,omitempty"`
	Custom map[string]CellState `json:"custom,omitempty"`
	// Dirty counts the dirty requests' verdicts by dirty-data kind.
	Dirty map[string]VerdictCounts `json:"dirty,omitempty"`
}

// CellState is one metric's accumulated values. Its metric's kind, which
// the context gives, says which fields apply:
//
//	trend:   N values, their exact Min, Max and Sum, Clamped of them at a
//	         bound, and the histograms Pos and Neg (the magnitudes of
//	         negative values, custom trends only). Latencies count
//	         microsecond ticks, Min, Max and Sum included; custom trends
//	         count 0.001 units in the histograms, and Min, Max and Sum are
//	         in the script's units.
//	counter: N values adding up to Sum, of which Tail came from requests
//	         started in a graceful-stop tail.
//	rate:    Hits non-zero values among N.
type CellState struct {
	N       int64   `json:"n,omitempty"`
	Hits    int64   `json:"hits,omitempty"`
	Sum     float64 `json:"sum,omitempty"`
	Tail    float64 `json:"tail,omitempty"`
	Min     float64 `json:"min,omitempty"`
	Max     float64 `json:"max,omitempty"`
	Clamped int64   `json:"clamped,omitempty"`
	Pos     string  `json:"pos,omitempty"`
	Neg     string  `json:"neg,omitempty"`
}

// VerdictCounts counts one dirty-data kind's requests by engine.Verdict.
type VerdictCounts struct {
	Handled  int64 `json:"handled,omitempty"`
	Defects  int64 `json:"defects,omitempty"`
	Accepted int64 `json:"accepted,omitempty"`
	Canceled int64 `json:"canceled,omitempty"`
}

// ViewState is one tracked view: the metric and filter given to
// Collector.Track, and the cell of the values that matched.
type ViewState struct {
	Metric string    `json:"metric"`
	Filter Filter    `json:"filter"`
	Cell   CellState `json:"cell"`
}

// SeriesState is the time series' part of a State.
type SeriesState struct {
	// Origin is the instant Point.T counts seconds from.
	Origin time.Time `json:"origin"`
	// TTFT holds each second's TTFT trend, one for one with
	// Summary.TimeSeries ({} for a second without one); absent when no
	// second has one.
	TTFT []CellState `json:"ttft,omitempty"`
}

// State returns what Merge needs of this collector's result beyond the
// Summary. It may be called once Close has returned, as often as wanted
// and from any goroutine; before that it returns nil. It is derived from
// the final snapshot and time series on each call, so recording a sample
// pays nothing for it.
func (c *Collector) State() *State {
	select {
	case <-c.done:
	default:
		return nil
	}
	st := &State{
		Stages: make([]StageState, 0, len(c.final.stages)),
		Kinds:  kindNames(c.final.kinds),
		Views:  viewStates(c.views, c.final.views),
		Series: c.series.state(),
	}
	for i := range c.final.stages {
		st.Stages = append(st.Stages, c.final.stages[i].state())
	}
	return st
}

func kindNames(ks map[string]kind) map[string]string {
	if len(ks) == 0 {
		return nil
	}
	out := make(map[string]string, len(ks))
	for name, k := range ks {
		out[name] = k.String()
	}
	return out
}

// viewStates pairs each view's definition with its final cell.
func viewStates(defs map[string]*view, cells map[string]cellSnap) []ViewState {
	out := make([]ViewState, 0, len(defs))
	for key, v := range defs {
		f := make(Filter, len(v.filter))
		for _, p := range v.filter {
			f[p.key] = p.value
		}
		out = append(out, ViewState{Metric: v.metric, Filter: f, Cell: cells[key].state()})
	}
	slices.SortFunc(out, func(x, y ViewState) int {
		return cmp.Or(cmp.Compare(x.Metric, y.Metric), cmp.Compare(viewKey(x.Metric, x.Filter), viewKey(y.Metric, y.Filter)))
	})
	return out
}

// state copies a stage of the final snapshot; built-in cells without data
// are left out, as a merge reads them as empty.
func (st *stageSnap) state() StageState {
	s := StageState{
		Scenario: st.scenario, Stage: st.stage, Index: st.index,
		Start: st.start, End: st.end, Timed: st.timed,
		Checks: cellStates(st.checks), Custom: cellStates(st.custom),
	}
	for id := range st.cells {
		if c := st.cells[id].state(); c != (CellState{}) {
			if s.Cells == nil {
				s.Cells = map[string]CellState{}
			}
			s.Cells[builtins[id].name] = c
		}
	}
	for name, v := range st.dirty {
		if s.Dirty == nil {
			s.Dirty = map[string]VerdictCounts{}
		}
		s.Dirty[name] = VerdictCounts{Handled: v[vHandled], Defects: v[vDefect], Accepted: v[vAccepted], Canceled: v[vCanceled]}
	}
	return s
}

func cellStates(cs map[string]cellSnap) map[string]CellState {
	if len(cs) == 0 {
		return nil
	}
	out := make(map[string]CellState, len(cs))
	for name, c := range cs {
		out[name] = c.state()
	}
	return out
}

// state copies a cell; a trend's histograms are encoded.
func (c cellSnap) state() CellState {
	if t := c.t; t != nil {
		return CellState{
			N: t.n, Sum: t.sum, Min: t.min, Max: t.max, Clamped: t.clamped,
			Pos: encodeNonEmpty(t.pos), Neg: encodeNonEmpty(t.neg),
		}
	}
	if c.kind == kindRate {
		return CellState{N: c.n, Hits: c.hits} // a rate's sum is of no query
	}
	return CellState{N: c.n, Sum: c.sum, Tail: c.tail}
}

// encodeNonEmpty encodes a histogram that holds values; "" for none, so
// that a histogram allocated by a value that then failed to record leaves
// nothing a decoder would reject.
func encodeNonEmpty(h hist) string {
	if histCount(h) == 0 {
		return ""
	}
	return encodeHDR(h)
}

// state copies the series' origin and per-second TTFT trends; nil for a
// series that never got a mark or a sample.
func (s *series) state() *SeriesState {
	if s == nil || s.anchor.IsZero() {
		return nil
	}
	st := &SeriesState{Origin: s.anchor}
	for i := range s.secs {
		if s.secs[i].ttft.t.n > 0 {
			st.TTFT = make([]CellState, len(s.secs))
			break
		}
	}
	for i := range st.TTFT {
		t := s.secs[i].ttft.t
		st.TTFT[i] = cellSnap{t: &t}.state()
	}
	return st
}
