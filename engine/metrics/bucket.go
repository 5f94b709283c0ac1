package metrics

import "slices"

// Bucket is one bar of a Dist's histogram: Count values greater than the
// previous bucket's LeMS and at most LeMS milliseconds (to HDR precision:
// a value within 0.1% of an edge may land on either side).
type Bucket struct {
	LeMS  float64 `json:"le_ms"`
	Count int64   `json:"count"`
}

// bucketMantissas space the histogram's edges about evenly on a log scale,
// six per factor of ten (two per octave), at numbers a reader takes in at
// a glance: 1, 1.5, 2, 3, 5, 7, 10, 15 ...
var bucketMantissas = [...]int64{10, 15, 20, 30, 50, 70}

// bucketEdges are the upper edges in ticks (µs), from 1 µs past one hour;
// bucketEdgesMS the same in milliseconds.
var bucketEdges, bucketEdgesMS = func() (ticks, ms []float64) {
	for scale := int64(1); scale <= highestUS; scale *= 10 {
		for _, m := range bucketMantissas {
			// m·scale/10 ticks, divided exactly once so that the edges
			// print as the short decimals they are (0.0015, not 0.0015000001).
			ticks = append(ticks, float64(m*scale)/10)
			ms = append(ms, float64(m*scale)/(10*ticksPerUnit))
		}
	}
	return ticks, ms
}()

// buckets counts a non-empty duration trend's values per bucket edge,
// from the bucket holding min to the one holding max. Each HDR bucket
// counts at its lowest value, but the first and last at the exact min and
// max, so that the bars span exactly the values seen.
func (t *trend) buckets() []Bucket {
	if !t.geo.quantized || t.neg != nil {
		return nil // custom trends: no natural log scale
	}
	counts := make([]int64, len(bucketEdges))
	first, last := len(bucketEdges), -1
	var seen int64
	forEachBucket(t.pos, func(value, count int64) bool {
		x := max(float64(value), t.min)
		if seen += count; seen >= t.n {
			x = t.max
		}
		i := min(bucketIndex(x), len(bucketEdges)-1)
		counts[i] += count
		first, last = min(first, i), max(last, i)
		return true
	})
	out := make([]Bucket, 0, max(last-first+1, 0))
	for i := first; i <= last; i++ {
		out = append(out, Bucket{LeMS: bucketEdgesMS[i], Count: counts[i]})
	}
	return out
}

// bucketIndex returns the first edge at or above x ticks.
func bucketIndex(x float64) int {
	i, _ := slices.BinarySearch(bucketEdges, x)
	return i
}
