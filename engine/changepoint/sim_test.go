package changepoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The simulations behind the figures of `llmload history check`: how
// often a history without a change raises an alarm, and how soon a step
// or a creep is found. Every history is seeded; `go test -v -run Sim
// ./engine/changepoint` prints the figures.
//
// A run's value is a percentile of n request latencies, lognormal with
// median 200 ms and σ 0.5 in log space, times the server's run-to-run
// noise (1% standard deviation). The percentile is drawn from its exact
// sampling distribution (quantileDraw), which TestQuantileDraw holds
// against percentiles of n latencies drawn one by one.

// simOptions are the settings of `history check`, but for 1999
// permutations, not 9999: they change the decisions only by the Monte
// Carlo noise of p near Alpha (the test stops at 20 exceedances either
// way), and only a significant split draws them all, so they make the
// simulations three times as fast. With 9999 every figure printed came
// out the same.
var simOptions = Options{Alpha: 0.01, MinChange: 0.02, Permutations: 1999}

const (
	shiftAt   = 20   // the first run after an injected change
	stepSize  = 0.05 // the step, relative
	creepRate = 0.02 // the creep per run: run 20 is 2% up, run 21 4%, ...
	withinN   = 10   // a creep must be flagged within this many runs
)

// metric is what a run reports: percentile q of n latencies.
type metric struct {
	q float64
	n int
}

func (m metric) String() string { return fmt.Sprintf("P%g of %d", 100*m.q, m.n) }

// quantileDraw draws percentile q of n lognormal latencies (median
// 200 ms, σ 0.5) by the nearest-rank rule: the k-th smallest of n,
// k = ⌈qn⌉, is 200·exp(0.5·Φ⁻¹(U)) for the k-th smallest U of n uniforms,
// which is Beta(k, n+1−k).
func quantileDraw(rng *rand.Rand, q float64, n int) float64 {
	k := math.Ceil(q * float64(n))
	a, b := gammaDraw(rng, k), gammaDraw(rng, float64(n)+1-k)
	u := a / (a + b)
	return 200 * math.Exp(0.5*math.Sqrt2*math.Erfinv(2*u-1))
}

// gammaDraw draws Gamma(shape, 1) for shape ≥ 1 (Marsaglia and Tsang,
// ACM TOMS 26(3), 2000).
func gammaDraw(rng *rand.Rand, shape float64) float64 {
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(rng.Float64()) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// history draws runs values of m from one unchanged system.
func history(seed uint64, m metric, runs int) []float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(m.n)))
	x := make([]float64, runs)
	for i := range x {
		x[i] = quantileDraw(rng, m.q, m.n) * (1 + 0.01*rng.NormFloat64())
	}
	return x
}

// shifted is x with the change f(i) (a relative change) from shiftAt on.
func shifted(x []float64, f func(run int) float64) []float64 {
	y := slices.Clone(x)
	for i := shiftAt; i < len(y); i++ {
		y[i] *= 1 + f(i)
	}
	return y
}

// worseFrom reports whether cs has a change up (worse, for a latency) at
// an index in [lo, hi].
func worseFrom(cs []Change, lo, hi int) bool {
	for _, c := range cs {
		if c.Index >= lo && c.Index <= hi && c.RelChange > 0 {
			return true
		}
	}
	return false
}

// detect is Detect with simOptions, failing the test on error.
func detect(t testing.TB, x []float64) []Change {
	cs, err := Detect(x, simOptions)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// firstFlag runs the detector on x up to run end for each end from
// shiftAt to last, and returns how many changed runs (end−shiftAt+1) it
// had seen when it first reported what hit accepts; 0 when it never did.
func firstFlag(t testing.TB, x []float64, last int, hit func([]Change) bool) int {
	for end := shiftAt; end <= last; end++ {
		if hit(detect(t, x[:end+1])) {
			return end - shiftAt + 1
		}
	}
	return 0
}

// simResult holds one metric's figures over many histories.
type simResult struct {
	histories  int
	falseAlarm int   // A/A histories of 30 runs with any change
	stepAt25   int   // step histories up to run 25 with a worse change at run 20 ±1
	stepDelay  []int // per history, runs seen when the step was first found (0: not by run 30)
	creepDelay []int // per history, runs seen when the creep was first flagged (0: not within withinN)
}

// simulate measures m over histories seeded 0, 1, ...
func simulate(t testing.TB, m metric, histories int) simResult {
	r := simResult{histories: histories}
	for h := range histories {
		base := history(uint64(h), m, shiftAt+withinN+1)
		if len(detect(t, base[:30])) > 0 {
			r.falseAlarm++
		}
		step := shifted(base, func(int) float64 { return stepSize })
		atStep := func(cs []Change) bool { return worseFrom(cs, shiftAt-1, shiftAt+1) }
		if atStep(detect(t, step[:26])) {
			r.stepAt25++
		}
		r.stepDelay = append(r.stepDelay, firstFlag(t, step, shiftAt+withinN, atStep))
		creep := shifted(base, func(i int) float64 { return creepRate * float64(i-shiftAt+1) })
		r.creepDelay = append(r.creepDelay, firstFlag(t, creep, shiftAt+withinN-1, func(cs []Change) bool {
			return worseFrom(cs, shiftAt-2, len(creep))
		}))
	}
	return r
}

// rate is the share of delays that are not 0.
func rate(delays []int) float64 {
	found := 0
	for _, d := range delays {
		if d > 0 {
			found++
		}
	}
	return float64(found) / float64(len(delays))
}

// medianRun is the run at which the median history was first flagged,
// counting never as last; "never" when more than half never were.
func medianRun(delays []int) string {
	ds := slices.Clone(delays)
	for i, d := range ds {
		if d == 0 {
			ds[i] = math.MaxInt
		}
	}
	slices.Sort(ds)
	if d := ds[(len(ds)-1)/2]; d != math.MaxInt {
		return fmt.Sprintf("run %d (the %s changed run)", shiftAt+d-1, ordinal(d))
	}
	return "never"
}

// ordinal is 1st, 2nd, 3rd, 4th, ... for n below 20.
func ordinal(n int) string {
	if suffix := [...]string{"", "st", "nd", "rd"}; n < len(suffix) {
		return fmt.Sprint(n, suffix[n])
	}
	return fmt.Sprint(n, "th")
}

func (r simResult) String() string {
	share := func(n int) float64 { return 100 * float64(n) / float64(r.histories) }
	return fmt.Sprintf("false alarms in %.1f%%; "+
		"5%% step: found at run 20±1 by run 25 in %.1f%%, by run 30 in %.1f%%, first at %s in the median; "+
		"2%%/run creep: flagged by run %d in %.1f%%, first at %s in the median",
		share(r.falseAlarm), share(r.stepAt25), 100*rate(r.stepDelay), medianRun(r.stepDelay),
		shiftAt+withinN-1, 100*rate(r.creepDelay), medianRun(r.creepDelay))
}

func TestSimHistories(t *testing.T) {
	histories := 200
	if raceEnabled || testing.Short() {
		histories = 50
	}
	for _, tc := range []struct {
		m        metric
		wantStep float64 // the least share of steps found at run 20±1 by run 25
	}{
		// 5000 latencies put a P99 2.7% apart run to run (2.9% with the
		// server's 1%), so a 5% step is 1.7 standard deviations and six
		// runs of it are too few for 90%: 45% of the steps are found by
		// run 25, 71% by run 30. Searching costs little of that: in a
		// one-off check on the same histories, a permutation test of the
		// largest two-sample t over the splits found 55% by run 25, and a
		// t-test told where the step is 82%. The bound guards what the
		// detector does reach.
		{metric{0.99, 5000}, 0.35},
		{metric{0.50, 5000}, 0.9},
		{metric{0.99, 20000}, 0.9},
	} {
		t.Run(tc.m.String(), func(t *testing.T) {
			r := simulate(t, tc.m, histories)
			t.Logf("%s, %d histories: %v", tc.m, histories, r)
			if got := float64(r.falseAlarm) / float64(histories); got > 0.03 {
				t.Errorf("false alarms in %.1f%% of unchanged histories, want at most 3%%", 100*got)
			}
			if got := float64(r.stepAt25) / float64(histories); got < tc.wantStep {
				t.Errorf("5%% step found at run 20±1 by run 25 in %.1f%%, want at least %.0f%%", 100*got, 100*tc.wantStep)
			}
			if got := rate(r.creepDelay); got < 0.9 {
				t.Errorf("creep flagged within %d runs in %.1f%%, want at least 90%%", withinN, 100*got)
			}
		})
	}
}

func TestQuantileDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 0))
	const runs = 400
	ms := make([]float64, 5000)
	for _, q := range []float64{0.99, 0.50} {
		m := metric{q, len(ms)}
		var fast, slow []float64
		for range runs {
			fast = append(fast, quantileDraw(rng, m.q, m.n))
			for i := range ms {
				ms[i] = 200 * math.Exp(0.5*rng.NormFloat64())
			}
			slices.Sort(ms)
			slow = append(slow, ms[int(math.Ceil(m.q*float64(m.n)))-1])
		}
		fm, fs := meanSD(fast)
		sm, ss := meanSD(slow)
		t.Logf("%v over %d runs: mean %.2f drawn whole, %.2f latency by latency; sd %.2f, %.2f", m, runs, fm, sm, fs, ss)
		// About 3.5 standard errors of the differences.
		if math.Abs(fm-sm) > 5*ss/math.Sqrt(runs) || math.Abs(fs/ss-1) > 0.18 {
			t.Errorf("%v: quantileDraw's mean and sd %.2f, %.2f, want those of percentiles of latencies, %.2f, %.2f", m, fm, fs, sm, ss)
		}
	}
}

// meanSD is the mean and the sample standard deviation of x.
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}
