package metrics

import (
	"cmp"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// trend is a distribution's state: histograms plus exact moments. A
// recorder mutates its own; snapshots hold immutable copies.
type trend struct {
	geo        geometry
	pos, neg   hist // ticks; nil until a value of that sign
	n, clamped int64
	min, max   float64 // exact, in ticks when quantized, else output units
	sum        float64 // exact, so the mean does not depend on buckets
}

// observe updates the exact statistics. The standard deviation comes from
// the histograms when asked for, which keeps this path free of divisions.
func (t *trend) observe(x float64) {
	if t.n == 0 || x < t.min {
		t.min = x
	}
	if t.n == 0 || x > t.max {
		t.max = x
	}
	t.n++
	t.sum += x
}

// percentile returns the value at percentile p (0..100) in output units.
func (t *trend) percentile(p float64) float64 {
	if t.n == 0 {
		return 0
	}
	if t.neg == nil {
		return t.clamp(float64(t.pos.ValueAtPercentile(p)) / ticksPerUnit)
	}
	return t.valueAtRank(Rank(p, histCount(t.neg)+histCount(t.pos)))
}

// valueAtRank returns the r-th smallest value (1-based, 1 ≤ r ≤ n) in
// output units, within HDR precision. Negative values live in neg as
// magnitudes, so a rank among them counts from the far end of neg.
func (t *trend) valueAtRank(r int64) float64 {
	if t.n == 0 {
		return 0
	}
	if r <= 1 {
		return t.geo.out(t.min) // exact, where HDR has a bucket's edge
	}
	negN, posN := histCount(t.neg), histCount(t.pos)
	r = min(r, negN+posN)
	var v float64
	if r <= negN {
		// ValueAtPercentile(q) ranks int64(q/100·n + 0.5), which is exact
		// for q = rank/n·100 despite rounding in the division.
		q := float64(negN-r+1) / float64(negN) * 100
		v = -float64(t.neg.ValueAtPercentile(q)) / ticksPerUnit
	} else {
		q := float64(r-negN) / float64(posN) * 100
		v = float64(t.pos.ValueAtPercentile(q)) / ticksPerUnit
	}
	return t.clamp(v)
}

// clamp keeps a value read from the histogram within the exact extremes:
// HDR reports a bucket's edge, which may lie beyond them, and a p99 larger
// than max would only confuse readers.
func (t *trend) clamp(v float64) float64 {
	return min(max(v, t.geo.out(t.min)), t.geo.out(t.max))
}

// Rank is the 1-based rank of percentile p among n values, as HDR ranks
// it (and so every percentile metrics reports).
func Rank(p float64, n int64) int64 {
	r := min(p, 100)/100*float64(n) + 0.5
	if !(r >= 1) {
		return 1
	}
	return min(int64(r), n)
}

// avg is the exact mean, rounded to a tick when the values are ticks.
func (t *trend) avg() float64 {
	if t.n == 0 {
		return 0
	}
	return t.round(t.sum / float64(t.n))
}

// round converts a tick-valued figure of a quantized trend to output units,
// rounded to a tick; other trends' figures are already in output units.
func (t *trend) round(x float64) float64 {
	if !t.geo.quantized {
		return x
	}
	return math.Round(x) / ticksPerUnit
}

// mergeTrends combines trends of one geometry into a new one; a single
// non-empty trend is returned as is. The inputs are not modified.
func mergeTrends(ts []*trend) *trend {
	var first *trend
	var nonEmpty []*trend
	var clamped int64
	for _, t := range ts {
		if t == nil {
			continue
		}
		first = cmp.Or(first, t)
		clamped += t.clamped
		if t.n > 0 {
			nonEmpty = append(nonEmpty, t)
		}
	}
	switch {
	case first == nil:
		return nil
	case len(nonEmpty) == 0:
		return &trend{geo: first.geo, clamped: clamped}
	case len(nonEmpty) == 1 && nonEmpty[0].clamped == clamped:
		return nonEmpty[0]
	}
	out := &trend{geo: first.geo}
	for _, t := range nonEmpty {
		out.absorb(t)
	}
	out.clamped += clamped
	return out
}

// absorb adds t's values to out.
func (out *trend) absorb(t *trend) {
	out.pos = mergeHist(out.geo, out.pos, t.pos, &out.clamped)
	out.neg = mergeHist(out.geo, out.neg, t.neg, &out.clamped)
	if out.n == 0 {
		out.min, out.max = t.min, t.max
	}
	out.min, out.max = min(out.min, t.min), max(out.max, t.max)
	out.sum += t.sum
	out.n += t.n
}

// stddev is the population standard deviation, from bucket midpoints as
// HDR computes it, so to a tick at best. The two signs' moments combine by Chan et al.'s
// parallel update; neg holds magnitudes, hence its mean's sign.
func (t *trend) stddev() float64 {
	var n, mean, m2 float64
	for _, part := range [...]struct {
		h    hist
		sign float64
	}{{t.pos, 1}, {t.neg, -1}} {
		c := float64(histCount(part.h))
		if c == 0 {
			continue
		}
		m, sd := part.sign*part.h.Mean(), part.h.StdDev()
		d := m - mean
		mean += d * c / (n + c)
		m2 += sd*sd*c + d*d*n*c/(n+c)
		n += c
	}
	if n == 0 {
		return 0
	}
	// In ticks; rounded to one, as finer digits would only be noise.
	return math.Round(math.Sqrt(m2/n)) / ticksPerUnit
}

// mergeHist adds from to into; both have geometry g, hence one type.
func mergeHist(g geometry, into, from hist, lost *int64) hist {
	if from == nil {
		return into
	}
	if into == nil {
		into = g.newHist()
	}
	// Same geometry: nothing is ever dropped.
	switch dst := into.(type) {
	case *hdrhistogram.Histogram:
		*lost += dst.Merge(from.(*hdrhistogram.Histogram))
	case *hdrhistogram.PackedHistogram:
		*lost += dst.Merge(from.(*hdrhistogram.PackedHistogram))
	}
	return into
}
