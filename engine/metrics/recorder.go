package metrics

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry. Latencies: microsecond ticks from 1 µs to one hour,
// three significant digits, as DESIGN.md asks. Custom trends: ticks of
// 0.001 units up to 1e12 units, each sign in its own histogram, because a
// script's values may be fractional or negative and HDR records only
// non-negative integers. Both report in ticks/1000: milliseconds, or units.
const (
	sigFigs      = 3
	ticksPerUnit = 1000
	highestUS    = int64(time.Hour / time.Microsecond)
	highestTicks = int64(1e15)
)

// geometry says how a recorder maps values onto histogram ticks.
type geometry struct {
	highest int64 // largest tick kept exactly; beyond it values clamp
	// quantized recorders hold whole ticks (rounded latencies) and keep
	// their exact statistics in ticks too, which spares the hot path a
	// division; their mean and stddev round to a tick: no spurious digits.
	// Others keep the exact statistics in output units.
	quantized bool
	// sparse recorders keep only the buckets they use (a few KB rather
	// than the dense 188 KB), at the cost of a binary search per value and
	// a shift when a new bucket appears. The precision is the same. They
	// serve the many small distributions: per tag value, per second.
	sparse bool
}

var (
	durationGeo       = geometry{highest: highestUS, quantized: true}
	sparseDurationGeo = geometry{highest: highestUS, quantized: true, sparse: true}
	valueGeo          = geometry{highest: highestTicks}
)

// out converts an exact statistic to output units.
func (g geometry) out(x float64) float64 {
	if g.quantized {
		return x / ticksPerUnit
	}
	return x
}

func (g geometry) newHist() hist {
	if g.sparse {
		return hdrhistogram.NewPacked(1, g.highest, sigFigs)
	}
	return hdrhistogram.New(1, g.highest, sigFigs)
}

// hist is what a trend needs of a histogram of ticks; the dense and the
// sparse (packed) HDR histograms both provide it. A trend's histograms are
// all of its geometry's type.
type hist interface {
	RecordValue(v int64) error
	TotalCount() int64
	ValueAtPercentile(p float64) int64
	Mean() float64
	StdDev() float64
}

// recorder records one distribution. Owned by the aggregator goroutine;
// histograms are allocated on first use, so a metric a run never feeds
// (schedule lag in a closed model) costs nothing.
type recorder struct {
	t      trend
	frozen *trend // immutable copy for snapshots; stale once counts differ
}

func newRecorder(g geometry) recorder { return recorder{t: trend{geo: g}} }

// record adds a latency, rounded to the nearest microsecond. Out-of-range
// values are clamped and counted so that no sample silently disappears.
// It runs for every token gap, so it skips add's sign handling.
func (r *recorder) record(d time.Duration) {
	v := int64((d + time.Microsecond/2) / time.Microsecond)
	if d < 0 || v > r.t.geo.highest {
		v = min(max(v, 0), r.t.geo.highest) // d < 0 could round to 0
		r.t.clamped++
	}
	if r.t.pos == nil {
		r.t.pos = r.t.geo.newHist()
	}
	var err error
	if d, ok := r.t.pos.(*hdrhistogram.Histogram); ok {
		err = d.RecordValue(v) // inlined, unlike the interface call
	} else {
		err = r.t.pos.RecordValue(v)
	}
	if err != nil {
		r.t.clamped++ // see add
		return
	}
	r.t.observe(float64(v))
}

// recordSet records d unless it is zero, which engine.Result uses for
// "not measured".
func (r *recorder) recordSet(d time.Duration) {
	if d != 0 {
		r.record(d)
	}
}

// recordValue adds a custom trend's value, which may be negative. The
// histogram holds it to 0.001 units; min, max and mean stay exact. Beyond
// ±1e12 units it is clamped and counted like a latency beyond an hour,
// which also keeps the sum finite. The caller rejects NaN and infinities.
func (r *recorder) recordValue(x float64) {
	bound := float64(r.t.geo.highest) / ticksPerUnit
	clamped := x < -bound || x > bound
	x = min(max(x, -bound), bound)
	r.add(int64(math.Round(x*ticksPerUnit)), x, clamped)
}

// add records a value that is already in ticks; x is its exact value.
func (r *recorder) add(ticks int64, x float64, clamped bool) {
	if clamped {
		r.t.clamped++
	}
	h := &r.t.pos
	if ticks < 0 {
		h, ticks = &r.t.neg, -ticks
	}
	if *h == nil {
		*h = r.t.geo.newHist()
	}
	if err := (*h).RecordValue(ticks); err != nil {
		// Unreachable with the bounds above; counted rather than lost if
		// the histogram's geometry ever disagrees with them.
		r.t.clamped++
		return
	}
	r.t.observe(x)
}

// freeze returns an immutable copy of the trend. The copy is cached until
// the next value, so repeated snapshots of a finished stage cost nothing.
// share skips copying the histograms: only when nothing records again.
func (r *recorder) freeze(share bool) *trend {
	if share {
		t := r.t
		return &t
	}
	// Every record raises n or clamped, so equal counts mean no change,
	// and the hot path need not invalidate anything.
	if f := r.frozen; f == nil || f.n != r.t.n || f.clamped != r.t.clamped {
		t := r.t
		t.pos, t.neg = clone(t.pos), clone(t.neg)
		r.frozen = &t
	}
	return r.frozen
}

func clone(h hist) hist {
	switch h := h.(type) {
	case *hdrhistogram.Histogram:
		return h.Clone()
	case *hdrhistogram.PackedHistogram:
		return h.Clone()
	}
	return nil
}

func histCount(h hist) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// forEachBucket calls fn for each populated bucket of h in ascending order,
// with the lowest value of the bucket and its count. A dense histogram is
// first packed, which costs its populated buckets rather than the 23,000
// slots a walk of the dense one would visit.
func forEachBucket(h hist, fn func(value, count int64) bool) {
	switch h := h.(type) {
	case *hdrhistogram.PackedHistogram:
		h.ForEachBucket(fn)
	case *hdrhistogram.Histogram:
		p := hdrhistogram.NewPacked(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		p.MergeFrom(h)
		p.ForEachBucket(fn)
	}
}
