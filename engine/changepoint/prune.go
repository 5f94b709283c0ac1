package changepoint

import (
	"math"
	"math/bits"
	"slices"
)

// prune turns the sorted splits of x into Changes, dropping those whose
// |RelChange| is below minChange. It drops the weakest first and merges
// its two segments, so its neighbours' Before and After become means of
// the merged segment and are judged again: two small steps the same way
// can together make one change that counts.
func prune(x []float64, found []split, minChange float64) []Change {
	for {
		cs := changes(x, found)
		weakest := -1
		for i, c := range cs {
			if math.Abs(c.RelChange) < minChange && (weakest < 0 || math.Abs(c.RelChange) < math.Abs(cs[weakest].RelChange)) {
				weakest = i
			}
		}
		if weakest < 0 {
			return cs
		}
		found = slices.Delete(found, weakest, weakest+1)
	}
}

// changes describes the splits of x, with the means of the segments
// between them.
func changes(x []float64, found []split) []Change {
	var cs []Change
	for i, s := range found {
		lo, hi := 0, len(x)
		if i > 0 {
			lo = found[i-1].at
		}
		if i+1 < len(found) {
			hi = found[i+1].at
		}
		before, after := mean(x[lo:s.at]), mean(x[s.at:hi])
		cs = append(cs, Change{Index: s.at, Before: before, After: after, RelChange: relChange(before, after), P: s.p})
	}
	return cs
}

// relChange is (after−before)/|before|, ±Inf when only before is 0 and 0
// when both are.
func relChange(before, after float64) float64 {
	switch {
	case before != 0:
		if d := after - before; !math.IsInf(d, 0) {
			return d / math.Abs(before)
		}
		// after and before near ±MaxFloat64, far apart.
		return after/math.Abs(before) - math.Copysign(1, before)
	case after == 0:
		return 0
	default:
		return math.Copysign(math.Inf(1), after)
	}
}

// mean is the mean of v, which is not empty. When the sum overflows, the
// values are first scaled by a power of two, which is exact.
func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	if !math.IsInf(sum, 0) {
		return sum / float64(len(v))
	}
	k := bits.Len(uint(len(v)))
	sum = 0
	for _, x := range v {
		sum += math.Ldexp(x, -k)
	}
	return math.Ldexp(sum/float64(len(v)), k)
}
