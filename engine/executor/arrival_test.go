package executor

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// openScenario is an arrival-rate scenario over stages, rates per second.
func openScenario(arrival string, stages ...plan.Stage) plan.Scenario {
	return plan.Scenario{
		Name: "open", Executor: plan.ExecutorRampingArrivalRate, Exec: "chat", Stages: stages,
		TimeUnit: time.Second, Arrival: arrival, Burstiness: 1, PreAllocatedVUs: 1, MaxVUsCap: 1,
	}
}

// offsets draws up to n arrivals of sc.
func offsets(t *testing.T, sc plan.Scenario, seed int64, n int) []arrival {
	t.Helper()
	p, err := newRateProfile(sc)
	if err != nil {
		t.Fatalf("newRateProfile: %v", err)
	}
	a, err := newArrivals(p, sc, seed)
	if err != nil {
		t.Fatalf("newArrivals: %v", err)
	}
	var out []arrival
	for len(out) < n {
		arr, ok := a.next()
		if !ok {
			break
		}
		out = append(out, arr)
	}
	return out
}

// gaps returns inter-arrival times in seconds, the first measured from 0.
func gaps(arrs []arrival) []float64 {
	var out []float64
	prev := time.Duration(0)
	for _, a := range arrs {
		out = append(out, (a.at - prev).Seconds())
		prev = a.at
	}
	return out
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

func TestConstantArrivalsAreEvenlySpaced(t *testing.T) {
	tests := map[string]struct {
		rate     float64
		unit     time.Duration
		duration time.Duration
		spacing  time.Duration
		count    int
	}{
		"4 per second":  {rate: 4, unit: time.Second, duration: 10 * time.Second, spacing: 250 * time.Millisecond, count: 40},
		"120 per a min": {rate: 120, unit: time.Minute, duration: 3 * time.Second, spacing: 500 * time.Millisecond, count: 6},
		"3 per second":  {rate: 3, unit: time.Second, duration: 2 * time.Second, spacing: 333_333_333, count: 6},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sc := openScenario(plan.ArrivalConstant, plan.Stage{Name: "a", Rate: tc.rate, Duration: tc.duration})
			sc.TimeUnit = tc.unit
			arrs := offsets(t, sc, 1, 1000)
			if got, want := len(arrs), tc.count; got != want {
				t.Fatalf("arrivals = %d, want %d", got, want)
			}
			for k, a := range arrs {
				// Exact up to rounding each offset to the nanosecond.
				want := time.Duration(k) * tc.spacing
				if d := a.at - want; d < -time.Duration(k) || d > time.Duration(k) {
					t.Errorf("arrival %d at %v, want %v", k, a.at, want)
				}
			}
		})
	}
}

func TestPoissonInterArrivalMeanAndVariance(t *testing.T) {
	const rate, n = 1000.0, 100_000
	sc := openScenario(plan.ArrivalPoisson, plan.Stage{Name: "a", Rate: rate, Duration: 200 * time.Second})
	arrs := offsets(t, sc, 42, n)
	if len(arrs) != n {
		t.Fatalf("only %d arrivals", len(arrs))
	}
	mean, variance := meanVar(gaps(arrs))
	// Exponential: mean 1/r, variance 1/r², fourth central moment 9/r⁴.
	if se := 1 / rate / math.Sqrt(n); math.Abs(mean-1/rate) > 4*se {
		t.Errorf("mean gap = %v, want %v ± %v", mean, 1/rate, 4*se)
	}
	if se := math.Sqrt(8.0/n) / (rate * rate); math.Abs(variance-1/(rate*rate)) > 4*se {
		t.Errorf("gap variance = %v, want %v ± %v", variance, 1/(rate*rate), 4*se)
	}
}

func TestGammaInterArrivalMeanAndDispersion(t *testing.T) {
	const rate, n = 500.0, 100_000
	for _, shape := range []float64{0.5, 1, 4} {
		sc := openScenario(plan.ArrivalGamma, plan.Stage{Name: "a", Rate: rate, Duration: 400 * time.Second})
		sc.Burstiness = shape
		arrs := offsets(t, sc, 7, n)
		if len(arrs) != n {
			t.Fatalf("shape %v: only %d arrivals", shape, len(arrs))
		}
		mean, variance := meanVar(gaps(arrs))
		cv := math.Sqrt(variance) / mean
		wantCV := 1 / math.Sqrt(shape)
		if se := wantCV / rate / math.Sqrt(n); math.Abs(mean-1/rate) > 4*se {
			t.Errorf("shape %v: mean gap = %v, want %v ± %v", shape, mean, 1/rate, 4*se)
		}
		// Delta method: the sample variance has relative SE sqrt((2+6/k)/n),
		// the CV half of that, combined with the mean's.
		relSE := math.Hypot(math.Sqrt((2+6/shape)/n)/2, wantCV/math.Sqrt(n))
		if math.Abs(cv-wantCV) > 4*relSE*wantCV {
			t.Errorf("shape %v: CV = %v, want %v ± %v", shape, cv, wantCV, 4*relSE*wantCV)
		}
	}
}

// TestRampedArrivalsFollowIntegratedRate checks counts in each part of a
// rate profile against ∫rate, computed here by hand.
func TestRampedArrivalsFollowIntegratedRate(t *testing.T) {
	// 0 → 1000/s over 100 s: Λ(t) = 5t². Then a step down to 200/s for 50 s.
	stages := []plan.Stage{
		{Name: "up", Rate: 1000, Duration: 100 * time.Second, Ramp: 100 * time.Second},
		{Name: "low", Rate: 200, Duration: 50 * time.Second},
	}
	lambda := func(t float64) float64 {
		if t <= 100 {
			return 5 * t * t
		}
		return 50_000 + 200*(t-100)
	}
	for _, kind := range []string{plan.ArrivalPoisson, plan.ArrivalConstant, plan.ArrivalGamma} {
		sc := openScenario(kind, stages...)
		sc.Burstiness = 2
		arrs := offsets(t, sc, 3, 1_000_000)
		counts := make([]int, 15) // 10 s parts
		for _, a := range arrs {
			counts[int(a.at/(10*time.Second))]++
			if want := map[bool]int{true: 0, false: 1}[a.at < 100*time.Second]; a.stage != want {
				t.Fatalf("%s: arrival at %v in stage %d, want %d", kind, a.at, a.stage, want)
			}
		}
		for i, got := range counts {
			want := lambda(float64(i+1)*10) - lambda(float64(i)*10)
			// Poisson counts have variance = mean; gamma (shape 2) less.
			tol := 4*math.Sqrt(want) + 1
			if kind == plan.ArrivalConstant {
				tol = 1.5 // integer levels: off by less than one
			}
			if math.Abs(float64(got)-want) > tol {
				t.Errorf("%s: arrivals in [%d s, %d s) = %d, want %.0f ± %.0f", kind, i*10, i*10+10, got, want, tol)
			}
		}
	}
}

func TestArrivalsSkipZeroRateAndStepUp(t *testing.T) {
	sc := openScenario(plan.ArrivalConstant,
		plan.Stage{Name: "idle", Rate: 0, Duration: time.Second},
		plan.Stage{Name: "busy", Rate: 10, Duration: time.Second},
	)
	arrs := offsets(t, sc, 1, 100)
	if got, want := len(arrs), 10; got != want {
		t.Fatalf("arrivals = %d, want %d", got, want)
	}
	if got, want := arrs[0].at, time.Second; got != want {
		t.Errorf("first arrival at %v, want %v", got, want)
	}
	for _, a := range arrs {
		if a.stage != 1 {
			t.Errorf("arrival at %v in stage %d, want 1", a.at, a.stage)
		}
	}
}

func TestProfileExpectedAndRate(t *testing.T) {
	sc := openScenario(plan.ArrivalPoisson,
		plan.Stage{Name: "a", Rate: 100, Duration: 10 * time.Second, Ramp: 4 * time.Second},
		plan.Stage{Name: "b", Rate: 20, Duration: 2 * time.Second, Ramp: 4 * time.Second}, // ends half-way
	)
	sc.StartRate = 20
	p, err := newRateProfile(sc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at       time.Duration
		rate     float64
		expected float64
	}{
		{0, 20, 0},
		{2 * time.Second, 60, 80},
		{4 * time.Second, 100, 240},
		{10 * time.Second, 100, 840},
		{11 * time.Second, 80, 930},
		{12 * time.Second, 0, 1000}, // past the end
	}
	for _, tc := range tests {
		if got := p.rateAt(tc.at); math.Abs(got-tc.rate) > 1e-9 {
			t.Errorf("rate at %v = %v, want %v", tc.at, got, tc.rate)
		}
		if got := p.expected(tc.at); math.Abs(got-tc.expected) > 1e-6 {
			t.Errorf("Λ(%v) = %v, want %v", tc.at, got, tc.expected)
		}
	}
}

func TestArrivalsAreReproducible(t *testing.T) {
	sc := openScenario(plan.ArrivalGamma, plan.Stage{Name: "a", Rate: 100, Duration: time.Minute})
	sc.Burstiness = 0.5
	a := offsets(t, sc, 11, 500)
	b := offsets(t, sc, 11, 500)
	c := offsets(t, sc, 12, 500)
	renamed := sc
	renamed.Name = "other"
	d := offsets(t, renamed, 11, 500)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("arrival %d differs with the same seed: %v vs %v", i, a[i], b[i])
		}
	}
	if slices.Equal(a, c) {
		t.Error("another seed gave the same arrivals")
	}
	if slices.Equal(a, d) {
		t.Error("another scenario name gave the same arrivals")
	}
}

func TestBadArrivalSettingsAreErrors(t *testing.T) {
	tests := map[string]func(*plan.Scenario){
		"negative rate":  func(sc *plan.Scenario) { sc.Stages[0].Rate = -1 },
		"NaN rate":       func(sc *plan.Scenario) { sc.Stages[0].Rate = math.NaN() },
		"infinite start": func(sc *plan.Scenario) { sc.StartRate = math.Inf(1) },
		"zero burstiness": func(sc *plan.Scenario) {
			sc.Arrival, sc.Burstiness = plan.ArrivalGamma, 0
		},
		"unknown arrival": func(sc *plan.Scenario) { sc.Arrival = "weibull" },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			sc := openScenario(plan.ArrivalPoisson, plan.Stage{Name: "a", Rate: 1, Duration: time.Second})
			mutate(&sc)
			p, err := newRateProfile(sc)
			if err == nil {
				_, err = newArrivals(p, sc, 1)
			}
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}
