package changepoint

import (
	"cmp"
	"math"
	"slices"
)

// energy scores the splits of one segment by Q̂, the scaled energy
// divergence (exponent 1) between the values before and after the split:
//
//	Q̂(τ) = mk/(m+k) · ( 2/(mk)·Σ|x_i−y_j| − Σ_{i<i'}|x_i−x_i'|/C(m,2) − Σ_{j<j'}|y_j−y_j'|/C(k,2) )
//
// for the m values x before τ and the k values y from τ on. With W the
// pair sum of the whole segment, which no arrangement changes, the cross
// sum is W less the pair sums within each side, so
//
//	Q̂(τ) = 2W/n − (2/n + k/(n·(m−1)/2))·pre(τ) − (2/n + m/(n·(k−1)/2))·suf(τ)
//
// and only the pair sums within the first τ values, pre(τ), and within
// the rest, suf(τ), depend on the arrangement. One pass over the values
// in a Fenwick tree by rank gives each value's distance to the values
// before it, which grows pre; its distance to all values depends on its
// rank alone, and what is left of it after the values before is what
// suf loses. A permutation so costs O(n log n), not the O(n²) of a
// distance matrix.
type energy struct {
	sorted  []float64    // the segment's values times 2^-scale less their median, ascending
	scale   int          // the binary exponent of the largest |value|
	ranks   []int        // the segment's order: ranks[i] is the rank of its i-th value
	minSize int          // the fewest values on a side
	total   float64      // W, the pair sum Σ_{i<j} |z_i−z_j| of the segment
	dist    []float64    // dist[r]: the sum of the distances from the value of rank r to all values
	cPre    []float64    // cPre[τ]: the weight of pre(τ) in Q̂(τ)
	cSuf    []float64    // cSuf[τ]: the weight of suf(τ) in Q̂(τ)
	tree    []fenwickBin // counts and sums of the values seen, by rank
}

// fenwickBin is one node of the Fenwick tree over ranks.
type fenwickBin struct{ n, sum float64 }

// newEnergy prepares the scoring of seg's splits with at least minSize
// values a side.
func newEnergy(seg []float64, minSize int) *energy {
	n := len(seg)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	// Ties take ranks in index order; equal values are 0 apart whichever
	// way round they rank, so the sums do not depend on it.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(seg[a], seg[b]) })
	e := &energy{
		sorted:  make([]float64, n),
		ranks:   make([]int, n),
		minSize: minSize,
		dist:    make([]float64, n),
		cPre:    make([]float64, n+1),
		cSuf:    make([]float64, n+1),
		tree:    make([]fenwickBin, n+1),
	}
	// Scaling by a power of two below 1 keeps values near MaxFloat64 from
	// overflowing the sums to Inf, whose NaN scores would pass every test;
	// it changes no comparison. Centring then makes the rounding of the
	// sums relative to the spread, not to the level, of the values.
	var peak float64
	for _, v := range seg {
		peak = max(peak, math.Abs(v))
	}
	_, e.scale = math.Frexp(peak)
	mid := math.Ldexp(seg[order[n/2]], -e.scale)
	for r, i := range order {
		e.sorted[r] = math.Ldexp(seg[i], -e.scale) - mid
		e.ranks[i] = r
	}
	// The r-th smallest value is above r values and below n−1−r.
	var below float64
	for r, v := range e.sorted {
		e.total += v * float64(2*r-n+1)
		e.dist[r] = v*float64(r) - below
		below += v
	}
	above := 0.0
	for r := n - 1; r >= 0; r-- {
		e.dist[r] += above - e.sorted[r]*float64(n-1-r)
		above += e.sorted[r]
	}
	for t := minSize; t <= n-minSize; t++ {
		m, k := float64(t), float64(n-t)
		e.cPre[t] = 2/float64(n) + m*k/float64(n)*perPair(m)
		e.cSuf[t] = 2/float64(n) + m*k/float64(n)*perPair(k)
	}
	return e
}

// perPair is 1/C(n, 2), and 0 when there is no pair.
func perPair(n float64) float64 {
	if n < 2 {
		return 0
	}
	return 2 / (n * (n - 1))
}

// best returns the split τ of the arrangement ranks with the largest Q̂,
// the first of equals, and that Q̂ times 2^-scale.
func (e *energy) best(ranks []int) (tau int, q float64) {
	clear(e.tree)
	n := len(ranks)
	lo, hi := e.minSize, n-e.minSize
	var pre, seenSum float64
	suf := e.total
	least := 0.0
	for t, r := range ranks[:hi] {
		if t >= lo {
			if c := e.cPre[t]*pre + e.cSuf[t]*suf; t == lo || c < least {
				tau, least = t, c
			}
		}
		v := e.sorted[r]
		// v's distance to the values before it: v·(how many below) −
		// (their sum) + (the sum above) − v·(how many above).
		below, belowSum := e.prefix(r)
		d := v*below - belowSum + (seenSum - belowSum) - v*(float64(t)-below)
		pre += d
		suf -= e.dist[r] - d
		seenSum += v
		e.add(r, v)
	}
	if c := e.cPre[hi]*pre + e.cSuf[hi]*suf; hi == lo || c < least {
		tau, least = hi, c
	}
	return tau, 2*e.total/float64(n) - least
}

// prefix returns how many values with a rank below r have been added,
// and their sum.
func (e *energy) prefix(r int) (n, sum float64) {
	for i := r; i > 0; i -= i & -i {
		n += e.tree[i].n
		sum += e.tree[i].sum
	}
	return n, sum
}

// add records the value v of rank r.
func (e *energy) add(r int, v float64) {
	for i := r + 1; i < len(e.tree); i += i & -i {
		e.tree[i].n++
		e.tree[i].sum += v
	}
}
