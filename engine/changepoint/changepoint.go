// Package changepoint finds sustained shifts in a series of per-run
// metrics, such as the P99 TTFT of one stage over the last 30 runs, and
// names the first run after each shift.
//
// The method is E-Divisive with means: Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 109(505), 2014, as used for performance
// regressions in MongoDB's CI (Daly et al., "The Use of Change Point
// Detection to Identify Software Performance Regressions in a Continuous
// Integration System", ICPE 2020) and in Apache Otava (formerly Hunter).
// Each split of a segment is scored by the energy divergence (exponent 1)
// of its two sides; the best split is kept when a permutation test, which
// accounts for having picked the best of many splits, finds it
// significant, and both sides are then searched the same way.
//
// We recurse into both sides of each accepted split (plain binary
// segmentation), where Matteson and James pick the best split over all
// current segments each round and test it against permutations within
// every segment. The two find the same points when changes are few and
// clear, as in a run history. Ours tests each segment against shuffles of
// its own values only, and each accepted split spends Alpha again on
// each of its two sides; a history without a change has one test, so
// its false-alarm rate stays about Alpha.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Defaults for the zero fields of Options.
const (
	// DefaultAlpha is about the share of unchanged histories that raise
	// an alarm: one check in a hundred.
	DefaultAlpha = 0.01
	// DefaultMinSize keeps one or two noisy runs from counting as a shift.
	DefaultMinSize = 3
	// DefaultPermutations lets p reach 1/10000, a hundredth of
	// DefaultAlpha, so a caller that divides Alpha among 20 metrics can
	// still pass a clear change. Only a significant split costs all of
	// them: a test stops early once p is plainly large (see significant).
	DefaultPermutations = 9999
)

// Errors Detect returns, wrapped with the detail.
var (
	// ErrNotFinite is a NaN or infinite value in the series.
	ErrNotFinite = errors.New("changepoint: value is NaN or infinite")
	// ErrOptions is an Options field out of its range.
	ErrOptions = errors.New("changepoint: bad options")
)

// Options tunes Detect.
type Options struct {
	Alpha        float64 // significance of one change point, from the permutation test; 0 means DefaultAlpha (0.01)
	MinSize      int     // fewest points on each side of a change; 0 means DefaultMinSize (3): one noisy run is never a shift
	Permutations int     // permutation-test draws, at most; 0 means DefaultPermutations
	MinChange    float64 // smallest relative change of the segment means (|after-before|/|before|) that counts; 0 = any
	Seed         uint64  // seeds the permutations: same input, same answer
}

// Change is one change point: x[Index] is the first value after the shift.
type Change struct {
	Index     int
	Before    float64 // mean of the segment before (between the previous change point, or the start, and Index)
	After     float64 // mean of the segment after (up to the next change point or the end)
	RelChange float64 // (After-Before)/|Before|; ±Inf when Before is 0 and After is not, 0 when both are 0
	P         float64 // permutation p-value of this change point
}

// Detect returns the change points of x, sorted by Index. A series
// shorter than twice MinSize has none. Change points whose |RelChange|
// is below MinChange are dropped, weakest first, and the neighbours'
// means recomputed over the merged segment (see prune); P stays the
// p-value of the split when it was found.
func Detect(x []float64, o Options) ([]Change, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: x[%d] = %v", ErrNotFinite, i, v)
		}
	}
	d := detector{x: x, o: o}
	d.search(0, len(x))
	slices.SortFunc(d.found, func(a, b split) int { return a.at - b.at })
	return prune(x, d.found, o.MinChange), nil
}

// withDefaults fills the zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return o, fmt.Errorf("%w: Alpha %v is not in (0, 1)", ErrOptions, o.Alpha)
	case o.MinSize < 0:
		return o, fmt.Errorf("%w: MinSize %d is negative", ErrOptions, o.MinSize)
	case o.Permutations < 0:
		return o, fmt.Errorf("%w: Permutations %d is negative", ErrOptions, o.Permutations)
	case 1/float64(1+o.Permutations) > o.Alpha:
		// Otherwise no p-value could ever reach Alpha.
		return o, fmt.Errorf("%w: %d permutations cannot give p ≤ Alpha %v", ErrOptions, o.Permutations, o.Alpha)
	case !(o.MinChange >= 0) || math.IsInf(o.MinChange, 0):
		return o, fmt.Errorf("%w: MinChange %v is not a finite non-negative number", ErrOptions, o.MinChange)
	}
	return o, nil
}
