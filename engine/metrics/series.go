package metrics

import (
	"math"
	"slices"
	"time"
)

// MaxSeriesSeconds bounds the time series: a request that started or
// ended more than this many seconds from the run's origin is left out of
// it, so that a bogus timestamp cannot make it allocate without end. A
// week covers any soak test.
const MaxSeriesSeconds = 7 * 24 * 3600

// Point is one second of the run in Summary.TimeSeries. Warmup and dirty
// requests are left out. Which second a request counts in depends on the
// figure: its start (Starts, the TTFT percentiles: the latency met by the
// requests issued under that second's load), its end (Completions,
// Errors), or the stretch between its first token and its end, over which
// its output tokens are spread evenly. A request ends at Start plus the
// longest of its E2E, TTFT and TTFB, which for a failure is when it
// failed as far as the client measured.
type Point struct {
	// T is the second's offset from the run's origin: the start of the
	// first stage (or of the first request, if it reached the collector
	// before any stage mark). Negative only for requests that started
	// before the origin.
	T           int64 `json:"t"`
	Starts      int64 `json:"starts"`      // requests started, failed ones included
	Completions int64 `json:"completions"` // requests ended, failed ones included
	Errors      int64 `json:"errors"`      // requests that ended failed
	// InFlight counts requests started by the end of the second and not
	// ended by then.
	InFlight        int64   `json:"in_flight"`
	OutputTokPerSec float64 `json:"output_tok_per_sec"` // successful requests only
	// TTFTP50 and TTFTP99 are the TTFT percentiles, in ms, of the
	// successful requests that started in the second; nil (JSON null)
	// when none did, since 0 would read as an instant first token. Files
	// written before that carry 0 for such seconds. A p99 of fewer than
	// 100 requests is their maximum, nearly.
	TTFTP50 *float64 `json:"ttft_p50"`
	TTFTP99 *float64 `json:"ttft_p99"`
	// Open models only (arrival-rate and trace executors; 0, and absent
	// from JSON, in closed models and in files written before them):
	// Intended counts the iterations the arrival process scheduled in the
	// second, by their intended start, those that ran and those dropped;
	// Arrivals the iterations that started in the second, by their actual
	// start; Dropped those of Intended that found no free VU. Intended
	// against Arrivals shows when the client fell behind its schedule,
	// and by how much, second by second.
	Intended int64 `json:"intended,omitempty"`
	Arrivals int64 `json:"arrivals,omitempty"`
	Dropped  int64 `json:"dropped,omitempty"`
}

// series accumulates the time series, one slot per second from its
// anchor. Owned by the aggregator. A slot's TTFT histogram is sparse, so
// an hour costs 3,600 small slots.
type series struct {
	anchor time.Time
	first  int64 // offset of secs[0] from anchor, in seconds
	secs   []second
}

type second struct {
	starts, completions, errors int64
	intended, arrivals, dropped int64 // open models: see Point
	outTok                      float64
	ttft                        recorder
}

// anchorAt sets the origin, unless one is set already.
func (s *series) anchorAt(t time.Time) {
	if s.anchor.IsZero() && !t.IsZero() {
		s.anchor = t
	}
}

// mark anchors the series at a stage mark, unless anchored already, and
// makes the series reach the mark's second: the series then starts at the
// first stage and covers every stage window, even seconds in which no
// request started or ended.
func (s *series) mark(t time.Time) {
	if t.IsZero() {
		return
	}
	s.anchorAt(t)
	s.slot(t.Sub(s.anchor))
}

// sample adds a clean request.
func (s *series) sample(e *event) {
	if e.at.IsZero() {
		return // no start: nowhere to put it
	}
	s.anchorAt(e.at)
	start := e.at.Sub(s.anchor)
	end := start + max(e.e2e, e.ttft, e.ttfb) // as event.done
	if c := s.slot(start); c != nil {
		c.starts++
		if !e.failed && e.ttft != 0 {
			c.ttft.record(e.ttft)
		}
	}
	if c := s.slot(end); c != nil {
		c.completions++
		if e.failed {
			c.errors++
		}
	}
	if !e.failed && e.outTok > 0 {
		s.spread(float64(e.outTok), start+e.ttft, start+e.e2e, end, e.ttft > 0)
	}
}

// iteration adds an open-model iteration: intended in the second of its
// schedule, arrived in the second it started. A closed-model iteration
// (no intended start) is not an arrival of any schedule.
func (s *series) iteration(e *event) {
	sched := e.scheduled()
	if sched.IsZero() || e.at.IsZero() {
		return
	}
	s.anchorAt(sched)
	if c := s.slot(sched.Sub(s.anchor)); c != nil {
		c.intended++
	}
	if c := s.slot(e.at.Sub(s.anchor)); c != nil {
		c.arrivals++
	}
}

// drop adds an open-model iteration that was due at e.at and found no
// free VU: intended, and dropped, in the second it was due.
func (s *series) drop(e *event) {
	if e.at.IsZero() {
		return
	}
	s.anchorAt(e.at)
	if c := s.slot(e.at.Sub(s.anchor)); c != nil {
		c.intended++
		c.dropped++
	}
}

// spread shares tokens among the seconds between a request's first token
// (from) and its end (to), in proportion to the time spent in each. A
// request without that stretch (not streamed, or one event) puts them all
// at its end.
func (s *series) spread(tokens float64, from, to, end time.Duration, streamed bool) {
	if !streamed || to <= from {
		if c := s.slot(end); c != nil {
			c.outTok += tokens
		}
		return
	}
	if floorSecond(from) == floorSecond(to) {
		if c := s.slot(from); c != nil {
			c.outTok += tokens
		}
		return
	}
	span := float64(to - from)
	last := min(floorSecond(to), MaxSeriesSeconds)
	for sec := max(floorSecond(from), -MaxSeriesSeconds); sec <= last; sec++ {
		lo := max(from, time.Duration(sec)*time.Second)
		hi := min(to, time.Duration(sec+1)*time.Second)
		if c := s.slot(time.Duration(sec) * time.Second); c != nil && hi > lo {
			c.outTok += tokens * float64(hi-lo) / span
		}
	}
}

// floorSecond is the whole second holding offset d, rounding down also
// for negative offsets.
func floorSecond(d time.Duration) int64 {
	sec := int64(d / time.Second)
	if d < 0 && d%time.Second != 0 {
		sec--
	}
	return sec
}

// slot returns the second holding offset d, growing the series to reach
// it; nil beyond MaxSeriesSeconds. The pointer is valid until the next
// call.
func (s *series) slot(d time.Duration) *second {
	sec := floorSecond(d)
	if sec < -MaxSeriesSeconds || sec > MaxSeriesSeconds {
		return nil
	}
	if len(s.secs) == 0 {
		s.first = sec
	}
	if sec < s.first {
		grown := make([]second, s.first-sec, int64(len(s.secs))+s.first-sec)
		s.secs, s.first = append(grown, s.secs...), sec
		for i := range grown {
			s.secs[i].ttft = newRecorder(sparseDurationGeo)
		}
	}
	for int64(len(s.secs)) <= sec-s.first {
		s.secs = append(s.secs, second{ttft: newRecorder(sparseDurationGeo)})
	}
	return &s.secs[sec-s.first]
}

// points renders the series; in-flight counts accumulate starts minus
// completions from the first second.
func (s *series) points() []Point {
	out := make([]Point, len(s.secs))
	var inFlight int64
	for i := range s.secs {
		c := &s.secs[i]
		inFlight += c.starts - c.completions
		out[i] = Point{
			T:      s.first + int64(i),
			Starts: c.starts, Completions: c.completions, Errors: c.errors,
			Intended: c.intended, Arrivals: c.arrivals, Dropped: c.dropped,
			InFlight:        inFlight,
			OutputTokPerSec: math.Round(c.outTok*1000) / 1000,
		}
		if c.ttft.t.n > 0 {
			p50, p99 := c.ttft.t.percentile(50), c.ttft.t.percentile(99)
			out[i].TTFTP50, out[i].TTFTP99 = &p50, &p99
		}
	}
	return out
}

// HasIntended reports a series with intended (scheduled) starts, which only
// open-model scenarios have.
func HasIntended(ts []Point) bool {
	return slices.ContainsFunc(ts, func(p Point) bool { return p.Intended > 0 })
}
