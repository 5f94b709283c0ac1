package compare

import (
	"math"

	"github.com/llmload/llmload/engine/metrics"
)

// evidence is what a test says about NEW against BASE, as one-sided
// p-values: small pWorse, NEW is worse; small pBetter, NEW is better;
// small pWithin, NEW is not worse by the bound or more.
type evidence struct {
	pWorse, pBetter, pWithin float64
}

// evaluate runs the test both samples allow; ok is false when there is
// none (a maximum, or a file without histograms).
func evaluate(m metric, b, n sample, bound float64) (evidence, bool) {
	if b.test != n.test {
		return evidence{}, false
	}
	switch b.test {
	case testPercentile:
		return percentileEvidence(b, n, bound), true
	case testMean:
		return meanEvidence(b, n, bound), true
	case testRate:
		return rateEvidence(b, n, bound), true
	case testErrorRate:
		return errorEvidence(b, n, bound), true
	}
	return evidence{}, false
}

// percentileEvidence is the exceedance test of percentile q. Let t be
// BASE's q-percentile, its r-th largest value; under H0 (both samples
// from one distribution) the count of NEW values above t has a known,
// distribution-free law (see exceedance). Values are known only to their
// HDR bucket, so ties go against the claim being tested: for "worse" a
// NEW value counts only when its bucket lies wholly above t's; for
// "better" and "within" whenever its bucket may reach above t's lower
// edge (scaled by 1+bound). "Within" tests the boundary of the
// regression, NEW = BASE × (1+bound): if NEW is really that much slower,
// NEW/(1+bound) and BASE are exchangeable, and as few values above
// t×(1+bound) as observed would be unlikely.
func percentileEvidence(b, n sample, bound float64) evidence {
	k := rank(b.q, b.count)
	t := bucketAtRank(b.hist, k)
	e := exceedance{m: b.count, n: n.count, r: b.count - k + 1}
	above := countNew(n.hist, func(x metrics.HDRBucket) bool { return x.Lo > t.Hi })
	reach := countNew(n.hist, func(x metrics.HDRBucket) bool { return x.Hi >= t.Lo })
	shifted := float64(t.Lo) * (1 + bound)
	reachShifted := countNew(n.hist, func(x metrics.HDRBucket) bool { return float64(x.Hi) >= shifted })
	return evidence{pWorse: e.atLeast(above), pBetter: e.atMost(reach), pWithin: e.atMost(reachShifted)}
}

// rank is the 1-based rank of percentile q among n values, as HDR (and
// so the result file's percentiles) rank them.
func rank(q float64, n int64) int64 {
	r := int64(q/100*float64(n) + 0.5)
	return min(max(r, 1), n)
}

// bucketAtRank is the bucket holding the k-th smallest value.
func bucketAtRank(hist []metrics.HDRBucket, k int64) metrics.HDRBucket {
	var seen int64
	for _, x := range hist {
		seen += x.Count
		if seen >= k {
			return x
		}
	}
	return hist[len(hist)-1]
}

func countNew(hist []metrics.HDRBucket, keep func(metrics.HDRBucket) bool) int64 {
	var c int64
	for _, x := range hist {
		if keep(x) {
			c += x.Count
		}
	}
	return c
}

// meanEvidence is Welch's t test of the means (latencies: up is worse),
// the within test against the boundary mean BASE × (1+bound).
func meanEvidence(b, n sample, bound float64) evidence {
	if b.count < 2 || n.count < 2 {
		return evidence{pWorse: 1, pBetter: 1, pWithin: 1}
	}
	up := welchUpper(b, n, 1)
	return evidence{pWorse: up, pBetter: 1 - up, pWithin: 1 - welchUpper(b, n, 1+bound)}
}

// welchUpper is the one-sided p-value of "NEW's mean exceeds k × BASE's".
func welchUpper(b, n sample, k float64) float64 {
	vb, vn := k*k*b.sd*b.sd/float64(b.count), n.sd*n.sd/float64(n.count)
	diff := n.value - k*b.value
	se := math.Sqrt(vb + vn)
	if se == 0 {
		switch {
		case diff > 0:
			return 0
		case diff < 0:
			return 1
		}
		return 0.5
	}
	df := (vb + vn) * (vb + vn) / (vb*vb/float64(b.count-1) + vn*vn/float64(n.count-1))
	return 1 - studentCDF(diff/se, df)
}

// rateEvidence compares two Poisson counts over their windows: given the
// total, NEW's count is binomial with NEW's share of the time. Down is
// worse. Counts of tokens are divided by the tokens a request brings
// (pooled over both files), since tokens arrive in requests and a
// Poisson test of raw token counts would see noise as significance.
func rateEvidence(b, n sample, bound float64) evidence {
	per := 1.0
	if b.perEvent > 1 || n.perEvent > 1 {
		per = (b.events + n.events) / (b.events/b.perEvent + n.events/n.perEvent)
	}
	x, y := int64(math.Round(b.events/per)), int64(math.Round(n.events/per))
	even := binomial{n: x + y, p: n.exposure / (b.exposure + n.exposure)}
	low := 1 - min(bound, 1) // NEW's rate at the boundary, as a share of BASE's
	edge := binomial{n: x + y, p: n.exposure * low / (b.exposure + n.exposure*low)}
	return evidence{pWorse: even.atMost(y), pBetter: even.atLeast(y), pWithin: edge.atLeast(y)}
}

// errorEvidence is Fisher's exact test of the two error rates (one-sided,
// up is worse). The within test treats failures as rare events, Poisson
// in the requests sent, and asks whether as few NEW failures would be
// unlikely were NEW's rate BASE's × (1+bound).
func errorEvidence(b, n sample, bound float64) evidence {
	f1, f2 := int64(b.events), int64(n.events)
	h := hypergeometric{total: int64(b.exposure + n.exposure), good: f1 + f2, draws: int64(n.exposure)}
	high := n.exposure * (1 + bound)
	edge := binomial{n: f1 + f2, p: high / (b.exposure + high)}
	return evidence{pWorse: h.atLeast(f2), pBetter: h.atMost(f2), pWithin: edge.atMost(f2)}
}
