package compare

import (
	"math"
	"testing"
	"time"
)

// TestExceedanceByEnumeration checks the exceedance law against every
// arrangement of m BASE and n NEW labels among m+n ranked values, each
// equally likely under H0.
func TestExceedanceByEnumeration(t *testing.T) {
	for _, tc := range []struct{ m, n, r int64 }{{5, 4, 1}, {5, 4, 2}, {6, 6, 3}, {3, 7, 3}, {8, 2, 1}} {
		counts := make([]float64, tc.n+1)
		total := 0.0
		size := tc.m + tc.n
		for mask := 0; mask < 1<<size; mask++ { // bit set: NEW, from the largest value down
			if popcount(mask) != int(tc.n) {
				continue
			}
			total++
			var seenBase, b int64
			for i := int64(0); i < size && seenBase < tc.r; i++ {
				if mask&(1<<i) != 0 {
					b++
				} else {
					seenBase++
				}
			}
			counts[b]++
		}
		e := exceedance{m: tc.m, n: tc.n, r: tc.r}
		for b := int64(0); b <= tc.n; b++ {
			want := counts[b] / total
			if got := math.Exp(e.lp(b)); math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v: P(B=%d) = %v, want %v", tc, b, got, want)
			}
			var atLeast float64
			for k := b; k <= tc.n; k++ {
				atLeast += counts[k] / total
			}
			if got := e.atLeast(b); math.Abs(got-atLeast) > 1e-12 {
				t.Errorf("%+v: P(B≥%d) = %v, want %v", tc, b, got, atLeast)
			}
			if got, want := e.atMost(b), 1-atLeast+counts[b]/total; math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v: P(B≤%d) = %v, want %v", tc, b, got, want)
			}
		}
	}
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// TestTailsAtMillions checks that counts in the millions give finite
// probabilities, quickly: a long run must not make compare slow.
func TestTailsAtMillions(t *testing.T) {
	start := time.Now()
	e := exceedance{m: 5_000_000, n: 3_000_000, r: 50_000}
	mean := float64(e.n) * float64(e.r) / float64(e.m+1)
	for _, tc := range []struct {
		b        int64
		lo, hi   float64
		atLeast  bool
		describe string
	}{
		{int64(mean), 0.4, 0.6, true, "at the mean"},
		{int64(mean * 1.1), 0, 1e-20, true, "10% above the mean"},
		{int64(mean * 0.9), 0, 1e-20, false, "10% below the mean"},
	} {
		p := e.atMost(tc.b)
		if tc.atLeast {
			p = e.atLeast(tc.b)
		}
		if !(p >= tc.lo && p <= tc.hi) {
			t.Errorf("%s: p = %v, want in [%v, %v]", tc.describe, p, tc.lo, tc.hi)
		}
	}
	if got := (binomial{n: 4_000_000, p: 0.5}).atMost(2_000_000); math.Abs(got-0.5) > 0.01 {
		t.Errorf("binomial median tail = %v, want about 0.5", got)
	}
	if got := (hypergeometric{total: 4_000_000, good: 200_000, draws: 2_000_000}).atLeast(100_000); math.Abs(got-0.5) > 0.01 {
		t.Errorf("hypergeometric median tail = %v, want about 0.5", got)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("tails at millions took %v", el)
	}
}

func TestKnownValues(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"binomial P(K≥8 | 10, 0.5)", binomial{10, 0.5}.atLeast(8), 56.0 / 1024},
		{"binomial P(K≤2 | 10, 0.5)", binomial{10, 0.5}.atMost(2), 56.0 / 1024},
		{"binomial P(K≤0 | 5, 0.2)", binomial{5, 0.2}.atMost(0), math.Pow(0.8, 5)},
		// Fisher's tea tasting: 4 of 4 right among 8 cups.
		{"hypergeometric P(X≥4 | 8, 4, 4)", hypergeometric{8, 4, 4}.atLeast(4), 1.0 / 70},
		{"hypergeometric P(X≤1 | 8, 4, 4)", hypergeometric{8, 4, 4}.atMost(1), 17.0 / 70},
		{"t CDF(2, 10)", studentCDF(2, 10), 0.9633059826146},
		{"t CDF(-2.228, 10)", studentCDF(-2.228, 10), 0.025},
		{"t CDF(1.96, 1e6)", studentCDF(1.96, 1e6), 0.9750021},
		{"t CDF(0, 3)", studentCDF(0, 3), 0.5},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-4 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
