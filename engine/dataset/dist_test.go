package dataset

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDistErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		make func() (Dist, error)
	}{
		{"fixed negative", func() (Dist, error) { return Fixed(-1) }},
		{"fixed NaN", func() (Dist, error) { return Fixed(nan) }},
		{"normal negative mean", func() (Dist, error) { return Normal(-5, 1) }},
		{"normal negative sd", func() (Dist, error) { return Normal(5, -1) }},
		{"normal Inf sd", func() (Dist, error) { return Normal(5, inf) }},
		{"lognormal zero mean", func() (Dist, error) { return Lognormal(0, 1) }},
		{"lognormal negative sd", func() (Dist, error) { return Lognormal(10, -1) }},
		{"lognormal NaN", func() (Dist, error) { return Lognormal(nan, 1) }},
		{"uniform lo > hi", func() (Dist, error) { return Uniform(10, 5) }},
		{"uniform negative", func() (Dist, error) { return Uniform(-1, 5) }},
		{"uniform Inf", func() (Dist, error) { return Uniform(1, inf) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d, err := tt.make(); err == nil {
				t.Errorf("got %v, want an error", d)
			}
		})
	}
}

func TestDistMoments(t *testing.T) {
	const n = 200000
	mk := func(d Dist, err error) Dist {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		d        Dist
		mean, sd float64
		str      string
	}{
		{mk(Fixed(100)), 100, 0, "fixed(100)"},
		{mk(Normal(500, 50)), 500, 50, "normal(mean=500, sd=50)"},
		{mk(Lognormal(300, 150)), 300, 150, "lognormal(mean=300, sd=150)"},
		{mk(Lognormal(1000, 0)), 1000, 0, "lognormal(mean=1000, sd=0)"},
		{mk(Uniform(100, 200)), 150, 100 / math.Sqrt(12), "uniform(100, 200)"},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if got := tt.d.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			r := rand.New(rand.NewPCG(1, 2))
			var sum, sq float64
			for range n {
				v := tt.d.Draw(r)
				sum += v
				sq += v * v
			}
			mean := sum / n
			sd := math.Sqrt(math.Max(sq/n-mean*mean, 0))
			// The standard error of the mean is sd/√n ≈ sd/450; 5% of the
			// mean or 10 standard errors is far outside chance.
			if tol := math.Max(0.05*tt.mean, 10*tt.sd/math.Sqrt(n)); math.Abs(mean-tt.mean) > tol {
				t.Errorf("mean = %g, want %g ± %g", mean, tt.mean, tol)
			}
			if tol := math.Max(0.05*tt.sd, 1e-6*tt.mean); math.Abs(sd-tt.sd) > tol {
				t.Errorf("sd = %g, want %g ± %g", sd, tt.sd, tol)
			}
		})
	}
}

func TestLength(t *testing.T) {
	tests := []struct {
		v    float64
		want int
	}{{-3, 1}, {0, 1}, {0.4, 1}, {1.5, 2}, {99.4, 99}, {math.NaN(), 1}, {1e12, MaxSyntheticTokens}}
	for _, tt := range tests {
		if got := length(tt.v); got != tt.want {
			t.Errorf("length(%g) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
