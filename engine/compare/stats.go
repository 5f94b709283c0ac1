package compare

import "math"

// The distributions behind the tests, in log space (math.Lgamma) so that
// counts in the millions neither overflow nor lose the tail. Every tail
// sums a unimodal pmf from its cut outwards and stops once the terms no
// longer matter, so a tail costs its mass's width, not the support's.

// lnChoose is ln C(a, b) for 0 ≤ b ≤ a.
func lnChoose(a, b float64) float64 {
	x, _ := math.Lgamma(a + 1)
	y, _ := math.Lgamma(b + 1)
	z, _ := math.Lgamma(a - b + 1)
	return x - y - z
}

// tailSum adds exp(lp(k)) for k = from, from+step, ... up to and
// including to, stopping early once a term after the mode falls below
// 1e-17 of the sum: beyond it the pmf only shrinks.
func tailSum(from, to, step int64, lp func(k int64) float64) float64 {
	var sum, prev float64
	for k := from; (step > 0 && k <= to) || (step < 0 && k >= to); k += step {
		term := math.Exp(lp(k))
		sum += term
		if term < prev && term < 1e-17*sum {
			break
		}
		prev = term
	}
	return min(sum, 1)
}

// exceedance is the null distribution of B, the number of NEW's n values
// strictly above BASE's r-th largest of m values, when all m+n values are
// exchangeable (the same distribution, independent draws). It is exact
// and distribution-free: P(B=b) = C(b+r−1, b)·C(n−b+m−r, n−b)/C(m+n, n),
// a beta-binomial(n, r, m−r+1).
type exceedance struct{ m, n, r int64 }

func (e exceedance) lp(b int64) float64 {
	m, n, r := float64(e.m), float64(e.n), float64(e.r)
	x := float64(b)
	return lnChoose(x+r-1, x) + lnChoose(n-x+m-r, n-x) - lnChoose(m+n, n)
}

// atLeast is P(B ≥ b).
func (e exceedance) atLeast(b int64) float64 {
	if b <= 0 {
		return 1
	}
	return tailSum(b, e.n, 1, e.lp)
}

// atMost is P(B ≤ b).
func (e exceedance) atMost(b int64) float64 {
	if b >= e.n {
		return 1
	}
	return tailSum(b, 0, -1, e.lp)
}

// binomial is Binomial(n, p).
type binomial struct {
	n int64
	p float64
}

func (d binomial) lp(k int64) float64 {
	n, x := float64(d.n), float64(k)
	return lnChoose(n, x) + x*math.Log(d.p) + (n-x)*math.Log1p(-d.p)
}

// atLeast is P(K ≥ k).
func (d binomial) atLeast(k int64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > d.n || d.p <= 0:
		return 0
	case d.p >= 1:
		return 1
	}
	return tailSum(k, d.n, 1, d.lp)
}

// atMost is P(K ≤ k).
func (d binomial) atMost(k int64) float64 {
	switch {
	case k >= d.n || d.p <= 0:
		return 1
	case k < 0 || d.p >= 1:
		return 0
	}
	return tailSum(k, 0, -1, d.lp)
}

// hypergeometric is the number of successes among draws taken without
// replacement from total items of which good are successes: the null
// distribution of Fisher's exact test.
type hypergeometric struct{ total, good, draws int64 }

func (h hypergeometric) lp(k int64) float64 {
	N, K, n, x := float64(h.total), float64(h.good), float64(h.draws), float64(k)
	return lnChoose(K, x) + lnChoose(N-K, n-x) - lnChoose(N, n)
}

func (h hypergeometric) support() (lo, hi int64) {
	return max(0, h.draws-(h.total-h.good)), min(h.good, h.draws)
}

// atLeast is P(X ≥ k).
func (h hypergeometric) atLeast(k int64) float64 {
	lo, hi := h.support()
	if k <= lo {
		return 1
	}
	if k > hi {
		return 0
	}
	return tailSum(k, hi, 1, h.lp)
}

// atMost is P(X ≤ k).
func (h hypergeometric) atMost(k int64) float64 {
	lo, hi := h.support()
	if k >= hi {
		return 1
	}
	if k < lo {
		return 0
	}
	return tailSum(k, lo, -1, h.lp)
}

// studentCDF is P(T ≤ t) for Student's t with df degrees of freedom.
func studentCDF(t, df float64) float64 {
	switch {
	case math.IsInf(t, 1):
		return 1
	case math.IsInf(t, -1):
		return 0
	}
	tail := 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// the continued fraction of Numerical Recipes (modified Lentz).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1.0; m <= 300; m++ {
		for _, num := range [2]float64{m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)), -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < eps {
			break
		}
	}
	return h
}
