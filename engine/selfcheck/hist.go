package selfcheck

import (
	"math"
	"runtime/metrics"
)

func histCounts(s metrics.Sample) []uint64 {
	if s.Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return append([]uint64(nil), s.Value.Float64Histogram().Counts...)
}

func histBuckets(s metrics.Sample) []float64 {
	if s.Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return append([]float64(nil), s.Value.Float64Histogram().Buckets...)
}

func delta(now, before []uint64) counts {
	var d counts
	for i := range now {
		n := now[i]
		if i < len(before) && now[i] >= before[i] {
			n = now[i] - before[i]
		}
		if n > 0 {
			d = append(d, bucketCount{uint32(i), n})
		}
	}
	return d
}

// counts is a histogram's counts over one interval, only the buckets that
// counted anything: a second's sample holds tens of the runtime's 162, and
// the monitor keeps a sample a second for the whole run (a day's soak held
// 2.6 KB a second, 220 MB, as whole arrays).
type counts []bucketCount

type bucketCount struct {
	i uint32
	n uint64
}

func add(sum []uint64, d counts) {
	for _, c := range d {
		if int(c.i) < len(sum) {
			sum[c.i] += c.n
		}
	}
}

// quantile returns the upper bound of the bucket holding quantile q — a
// conservative reading, since a pause is at most its bucket's bound. An
// unbounded last bucket reports its lower bound.
func quantile(counts []uint64, buckets []float64, q float64) float64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n == 0 || len(buckets) != len(counts)+1 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			if math.IsInf(buckets[i+1], 1) {
				return max(buckets[i], 0)
			}
			return buckets[i+1]
		}
	}
	return 0
}

// total estimates the sum of the recorded values from bucket midpoints.
func total(counts []uint64, buckets []float64) float64 {
	if len(buckets) != len(counts)+1 {
		return 0
	}
	var sum float64
	for i, c := range counts {
		lo, hi := buckets[i], buckets[i+1]
		switch {
		case math.IsInf(lo, -1):
			lo = 0
		case math.IsInf(hi, 1):
			hi = lo
		}
		sum += float64(c) * (lo + hi) / 2
	}
	return sum
}
