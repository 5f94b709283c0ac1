package metrics

import "math"

// Interval is a confidence interval [lo, hi] in the unit of its Dist.
type Interval [2]float64

// Intervals holds a distribution-free 95% confidence interval for each
// percentile a Dist reports. For n values and quantile q the bounds are the
// values at ranks
//
//	lo = floor(n·q − 1.96·√(n·q·(1−q)))
//	hi = ceil(n·q + 1.96·√(n·q·(1−q))) + 1
//
// clamped to [1, n]: the order statistics between which the true quantile
// lies with about 95% probability whatever the distribution (the binomial
// count of values below it, normally approximated, with a rank of margin
// for the discreteness). The values are read from the histogram, so they
// carry its three significant digits.
type Intervals struct {
	P50  Interval `json:"p50"`
	P90  Interval `json:"p90"`
	P95  Interval `json:"p95"`
	P99  Interval `json:"p99"`
	P999 Interval `json:"p99.9"`
}

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.96

// IntervalRanks returns the 1-based ranks bounding the 95% confidence
// interval of quantile q (0..1) among n values, unclamped: lo < 1 or
// hi > n says the interval reaches beyond the values, so too few of
// them bound it.
func IntervalRanks(n int64, q float64) (lo, hi int64) {
	nq := float64(n) * q
	h := Z95 * math.Sqrt(nq*(1-q))
	return int64(math.Floor(nq - h)), int64(math.Ceil(nq+h)) + 1
}

// intervalRanks is IntervalRanks clamped to the values' ranks.
func intervalRanks(n int64, q float64) (lo, hi int64) {
	lo, hi = IntervalRanks(n, q)
	return min(max(lo, 1), n), min(max(hi, 1), n)
}

// intervals computes the confidence intervals of a non-empty trend and
// names the percentiles that are unreliable; value[i] is the percentile
// quantiles[i] as reported.
func (t *trend) intervals(value [len(quantiles)]float64) (Intervals, []string) {
	var iv [len(quantiles)]Interval
	var weak []string
	for i, p := range quantiles {
		lo, hi := intervalRanks(t.n, p/100)
		iv[i] = Interval{t.valueAtRank(lo), t.valueAtRank(hi)}
		if t.n < minReliable[i] || iv[i][1]-iv[i][0] > wideInterval*math.Abs(value[i]) {
			weak = append(weak, quantileNames[i])
		}
	}
	return Intervals{P50: iv[0], P90: iv[1], P95: iv[2], P99: iv[3], P999: iv[4]}, weak
}
