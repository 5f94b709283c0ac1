package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// trendOf records values (ms) into a fresh recorder of geometry g.
func trendOf(g geometry, ms []float64) *trend {
	r := newRecorder(g)
	for _, v := range ms {
		r.record(msD(v))
	}
	return &r.t
}

func intervalList(c Intervals) [len(quantiles)]Interval {
	return [...]Interval{c.P50, c.P90, c.P95, c.P99, c.P999}
}

func TestIntervalRanks(t *testing.T) {
	// Worked by hand from the formula in Intervals' doc comment.
	for _, tc := range []struct {
		n      int64
		q      float64
		lo, hi int64
	}{
		{10000, 0.5, 4902, 5099},  // 5000 ∓ 98
		{10000, 0.9, 8941, 9060},  // 9000 ∓ 58.8
		{10000, 0.95, 9457, 9544}, // 9500 ∓ 42.72
		{10000, 0.99, 9880, 9921}, // 9900 ∓ 19.50
		{10000, 0.999, 9983, 9998},
		{4, 0.5, 1, 4}, // clamped at both ends
		{1, 0.99, 1, 1},
		{100, 0.99, 97, 100},
	} {
		lo, hi := intervalRanks(tc.n, tc.q)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("intervalRanks(%d, %v) = %d, %d, want %d, %d", tc.n, tc.q, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestIntervalsMatchExactOrderStatistics compares each interval with the
// order statistics of the raw data at the same ranks, for data whose
// values are their ranks and for a skewed random sample.
func TestIntervalsMatchExactOrderStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	uniform := make([]float64, 10000)
	for i := range uniform {
		uniform[i] = float64((i*6151)%10000 + 1) // 1..10000 ms, shuffled
	}
	lognormal := make([]float64, 5000)
	for i := range lognormal {
		lognormal[i] = math.Round(math.Exp(5+rng.NormFloat64())*1000) / 1000
	}
	for name, data := range map[string][]float64{"uniform": uniform, "lognormal": lognormal} {
		sorted := slices.Sorted(slices.Values(data))
		for _, g := range []geometry{durationGeo, sparseDurationGeo} {
			d := trendOf(g, data).dist()
			for i, iv := range intervalList(d.CI) {
				lo, hi := intervalRanks(int64(len(data)), quantiles[i]/100)
				want := Interval{sorted[lo-1], sorted[hi-1]}
				if !closeTo(iv[0], want[0]) || !closeTo(iv[1], want[1]) {
					t.Errorf("%s (sparse %v) %s CI = %v, want %v", name, g.sparse, quantileNames[i], iv, want)
				}
			}
		}
	}
	// The hand-worked ranks above, on 1..10000 ms.
	d := trendOf(durationGeo, uniform).dist()
	if got, want := d.CI.P50, (Interval{4902, 5099}); !closeTo(got[0], want[0]) || !closeTo(got[1], want[1]) {
		t.Errorf("p50 CI = %v, want %v", got, want)
	}
	if got, want := d.CI.P999, (Interval{9983, 9998}); !closeTo(got[0], want[0]) || !closeTo(got[1], want[1]) {
		t.Errorf("p99.9 CI = %v, want %v", got, want)
	}
}

// TestIntervalsCoverage draws many samples from an exponential
// distribution and checks that each interval holds the true quantile
// about 95% of the time. The interval is conservative by a rank on each
// side, so coverage runs a little above 95%.
func TestIntervalsCoverage(t *testing.T) {
	const trials, n, mean = 1000, 400, 100.0 // ms
	rng := rand.New(rand.NewPCG(7, 11))
	checked := []int{0, 1, 2} // p50, p90, p95: n reaches 10/(1−q)
	var hits [len(quantiles)]int
	data := make([]float64, n)
	for range trials {
		for i := range data {
			data[i] = rng.ExpFloat64() * mean
		}
		d := trendOf(sparseDurationGeo, data).dist()
		ivs := intervalList(d.CI)
		for _, i := range checked {
			truth := -mean * math.Log(1-quantiles[i]/100)
			if ivs[i][0] <= truth && truth <= ivs[i][1] {
				hits[i]++
			}
		}
	}
	for _, i := range checked {
		if got := float64(hits[i]) / trials; got < 0.92 || got > 0.995 {
			t.Errorf("%s: the interval held the true quantile in %.1f%% of %d trials, want about 95%%",
				quantileNames[i], got*100, trials)
		}
	}
}

func TestUnreliable(t *testing.T) {
	spread := func(n int) []float64 { // n values from 100 to 110 ms: narrow intervals
		out := make([]float64, n)
		for i := range out {
			out[i] = 100 + 10*float64(i)/float64(n)
		}
		return out
	}
	bimodal := make([]float64, 0, 40) // p50 falls between two modes
	for i := range 40 {
		bimodal = append(bimodal, []float64{10, 1000}[i%2])
	}
	for _, tc := range []struct {
		name string
		data []float64
		want []string
	}{
		{"one value", spread(1), []string{"p50", "p90", "p95", "p99", "p99.9"}},
		{"19", spread(19), []string{"p50", "p90", "p95", "p99", "p99.9"}},
		{"20", spread(20), []string{"p90", "p95", "p99", "p99.9"}},
		{"100", spread(100), []string{"p95", "p99", "p99.9"}},
		{"200", spread(200), []string{"p99", "p99.9"}},
		{"1000", spread(1000), []string{"p99.9"}},
		{"10000", spread(10000), nil},
		{"wide interval", bimodal, []string{"p50", "p90", "p95", "p99", "p99.9"}},
	} {
		d := trendOf(durationGeo, tc.data).dist()
		if got, want := fmt.Sprint(d.Unreliable), fmt.Sprint(tc.want); got != want {
			t.Errorf("%s: unreliable = %s, want %s (CI %+v)", tc.name, got, want, d.CI)
		}
	}
}

func TestIntervalsBracketPercentiles(t *testing.T) {
	c := NewCollector()
	for i := range 3000 {
		c.Sample(okSample("c1", 0, time.Duration(1+(i*7919)%3000)*time.Millisecond))
	}
	d := findStage(t, c.Close(), "c1").E2E
	for i, p := range []float64{d.P50, d.P90, d.P95, d.P99, d.P999} {
		iv := intervalList(d.CI)[i]
		if iv[0] > p || p > iv[1] {
			t.Errorf("%s = %v outside its interval %v", quantileNames[i], p, iv)
		}
	}
	if got, want := d.LowSamples, false; got != want {
		t.Errorf("low_samples = %v, want %v (kept: the p99 rule)", got, want)
	}
}

func TestIntervalsCustomTrendNegative(t *testing.T) {
	c := NewCollector()
	for i := range 1000 {
		c.Metric(metricSample("sc", "st", "delta", "trend", float64(i-500), nil)) // -500 .. 499
	}
	d := c.Close().Metrics["delta"].Trend
	lo, hi := intervalRanks(1000, 0.5)
	if want := (Interval{float64(lo - 501), float64(hi - 501)}); !closeTo(d.CI.P50[0], want[0]) || !closeTo(d.CI.P50[1], want[1]) {
		t.Errorf("p50 CI = %v, want %v", d.CI.P50, want)
	}
	if d.Histogram != nil {
		t.Errorf("custom trend has a histogram: %v", d.Histogram)
	}
}
