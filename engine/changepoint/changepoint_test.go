package changepoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// steps is n values around level, noisy by sd, with level multiplied by
// k[i] from index i on.
func steps(seed uint64, n int, level, sd float64, k map[int]float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		if f, ok := k[i]; ok {
			level *= f
		}
		x[i] = level + sd*rng.NormFloat64()
	}
	return x
}

// indexes lists the Index of each change.
func indexes(cs []Change) []int {
	var is []int
	for _, c := range cs {
		is = append(is, c.Index)
	}
	return is
}

func TestDetect(t *testing.T) {
	for name, tc := range map[string]struct {
		x    []float64
		o    Options
		want []int
	}{
		"empty":                   {nil, Options{}, nil},
		"constant":                {steps(1, 30, 200, 0, nil), Options{}, nil},
		"all zero":                {make([]float64, 30), Options{}, nil},
		"noise only":              {steps(2, 30, 200, 5, nil), Options{}, nil},
		"one step":                {steps(3, 30, 200, 2, map[int]float64{20: 1.2}), Options{}, []int{20}},
		"step at the first split": {steps(4, 30, 200, 2, map[int]float64{3: 1.2}), Options{}, []int{3}},
		"step at the last split":  {steps(5, 30, 200, 2, map[int]float64{27: 1.2}), Options{}, []int{27}},
		"two steps":               {steps(6, 40, 200, 2, map[int]float64{15: 1.3, 28: 0.7}), Options{}, []int{15, 28}},
		"a step and back":         {steps(7, 40, 200, 2, map[int]float64{15: 1.3, 28: 1 / 1.3}), Options{}, []int{15, 28}},
		"one outlier":             {steps(8, 30, 200, 2, map[int]float64{20: 2, 21: 0.5}), Options{}, nil},
		"too short":               {[]float64{1, 1, 1, 9, 9}, Options{}, nil},
		"just long enough":        {[]float64{1, 1.1, 0.9, 9, 9.1, 8.9}, Options{Alpha: 0.1}, []int{3}},
		"one error in 30 runs":    {append(make([]float64, 29), 0.01), Options{}, nil},
		"zeros then errors":       {[]float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 4, 3, 5, 4, 3}, Options{}, []int{10}},
		"step below MinChange":    {steps(9, 30, 200, 1, map[int]float64{20: 1.05}), Options{MinChange: 0.1}, nil},
		"step above MinChange":    {steps(9, 30, 200, 1, map[int]float64{20: 1.05}), Options{MinChange: 0.02}, []int{20}},
		"huge values":             {[]float64{1e308, -1e308, 1e308, -1e308, 1e308, -1e308, 1e308, -1e308, 1e308, -1e308, 1e308, -1e308}, Options{}, nil},
		"huge step":               {[]float64{-1e308, -1e308, -1e308, -1e308, -1e308, -1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308}, Options{Alpha: 0.05}, []int{6}},
		"tiny step":               {steps(15, 30, 1e-300, 1e-302, map[int]float64{20: 1.2}), Options{}, []int{20}},
		"MinSize 1 finds one run": {steps(14, 30, 200, 2, map[int]float64{29: 1.5}), Options{MinSize: 1, Alpha: 0.1}, []int{29}},
	} {
		t.Run(name, func(t *testing.T) {
			cs, err := Detect(tc.x, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := indexes(cs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Detect = %+v, want changes at %v", cs, tc.want)
			}
		})
	}
}

func TestDetectDescribesChanges(t *testing.T) {
	rep := func(v float64, n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = v
		}
		return x
	}
	for name, tc := range map[string]struct {
		x    []float64
		want Change // but P
	}{
		"up 20%":   {append(rep(10, 10), rep(12, 10)...), Change{Index: 10, Before: 10, After: 12, RelChange: 0.2}},
		"from 0":   {append(rep(0, 10), rep(0.5, 10)...), Change{Index: 10, Before: 0, After: 0.5, RelChange: math.Inf(1)}},
		"negative": {append(rep(-10, 10), rep(-5, 10)...), Change{Index: 10, Before: -10, After: -5, RelChange: 0.5}},
		"huge":     {append(rep(-1e308, 10), rep(1e308, 10)...), Change{Index: 10, Before: -1e308, After: 1e308, RelChange: 2}},
	} {
		t.Run(name, func(t *testing.T) {
			cs, err := Detect(tc.x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 {
				t.Fatalf("Detect = %+v, want one change", cs)
			}
			got := cs[0]
			// Only the observed arrangement and its mirror image score so
			// well, 2 of C(20, 10): p is about the least 9999 draws give.
			if got.P > 3.0/(1+DefaultPermutations) {
				t.Errorf("P = %v, want at most %v", got.P, 3.0/(1+DefaultPermutations))
			}
			got.P = 0
			if got != tc.want {
				t.Errorf("Detect = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDetectSameSeedSameAnswer(t *testing.T) {
	// Weak enough that the p-value is not the smallest possible, so the
	// draws show in it.
	x := steps(10, 30, 200, 4, map[int]float64{15: 1.04})
	for _, seed := range []uint64{0, 1, 42} {
		o := Options{Seed: seed, Alpha: 0.2, Permutations: 999}
		a, err := Detect(x, o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Detect(x, o)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("seed %d: %+v, then %+v", seed, a, b)
		}
	}
}

func TestDetectErrors(t *testing.T) {
	x := steps(11, 10, 1, 0.1, nil)
	for name, tc := range map[string]struct {
		x    []float64
		o    Options
		want error
	}{
		"NaN":                    {[]float64{1, 2, math.NaN(), 4}, Options{}, ErrNotFinite},
		"+Inf":                   {[]float64{1, math.Inf(1)}, Options{}, ErrNotFinite},
		"-Inf":                   {[]float64{math.Inf(-1)}, Options{}, ErrNotFinite},
		"Alpha 1":                {x, Options{Alpha: 1}, ErrOptions},
		"negative Alpha":         {x, Options{Alpha: -0.01}, ErrOptions},
		"NaN Alpha":              {x, Options{Alpha: math.NaN()}, ErrOptions},
		"negative MinSize":       {x, Options{MinSize: -1}, ErrOptions},
		"negative Permutations":  {x, Options{Permutations: -5}, ErrOptions},
		"too few permutations":   {x, Options{Permutations: 98}, ErrOptions},
		"negative MinChange":     {x, Options{MinChange: -0.1}, ErrOptions},
		"NaN MinChange":          {x, Options{MinChange: math.NaN()}, ErrOptions},
		"infinite MinChange":     {x, Options{MinChange: math.Inf(1)}, ErrOptions},
		"bad options, no values": {nil, Options{Alpha: 2}, ErrOptions},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Detect(tc.x, tc.o); !errors.Is(err, tc.want) {
				t.Errorf("Detect: %v, want %v", err, tc.want)
			}
		})
	}
	// The fewest permutations that can reach Alpha are enough.
	if _, err := Detect(x, Options{Permutations: 99}); err != nil {
		t.Errorf("99 permutations at Alpha 0.01: %v", err)
	}
}

func TestEnergyMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 0))
	for trial := range 200 {
		n := 2 + rng.IntN(40)
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(10*rng.NormFloat64()) / 4 // ties on purpose
			if trial%2 == 1 {
				x[i] += 1e6 // a high level must not cost precision
			}
		}
		minSize := 1 + rng.IntN(max(1, n/2))
		e := newEnergy(x, minSize)
		tau, q := e.best(e.ranks)
		q = math.Ldexp(q, e.scale)
		wantTau, wantQ := bruteBest(x, minSize)
		if tau != wantTau && math.Abs(q-wantQ) > 1e-9*(1+math.Abs(wantQ)) || math.Abs(q-wantQ) > 1e-9*(1+math.Abs(wantQ)) {
			t.Fatalf("%v (MinSize %d): best = %d, %v; want %d, %v", x, minSize, tau, q, wantTau, wantQ)
		}
	}
}

// bruteBest is energy.best straight from the definition of Q̂.
func bruteBest(z []float64, minSize int) (tau int, q float64) {
	n := len(z)
	q = math.Inf(-1)
	for t := minSize; t <= n-minSize; t++ {
		x, y := z[:t], z[t:]
		m, k := float64(len(x)), float64(len(y))
		var cross, wx, wy float64
		for _, a := range x {
			for _, b := range y {
				cross += math.Abs(a - b)
			}
		}
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				wx += math.Abs(x[i] - x[j])
			}
		}
		for i := range y {
			for j := i + 1; j < len(y); j++ {
				wy += math.Abs(y[i] - y[j])
			}
		}
		s := m * k / (m + k) * (2/(m*k)*cross - wx*perPair(m) - wy*perPair(k))
		if s > q {
			tau, q = t, s
		}
	}
	return tau, q
}

func TestPrune(t *testing.T) {
	x := []float64{100, 100, 102, 102, 104, 104, 200, 200}
	found := []split{{2, 0.001}, {4, 0.002}, {6, 0.003}}
	for name, tc := range map[string]struct {
		minChange float64
		want      []Change
	}{
		"keep all": {0, []Change{
			{Index: 2, Before: 100, After: 102, RelChange: 0.02, P: 0.001},
			{Index: 4, Before: 102, After: 104, RelChange: 2.0 / 102, P: 0.002},
			{Index: 6, Before: 104, After: 200, RelChange: 96.0 / 104, P: 0.003},
		}},
		// 4 goes first (1.96%); 2 is then 100 → 103 (3%) over the merged
		// segments and stays.
		"two small steps make one": {0.025, []Change{
			{Index: 2, Before: 100, After: 103, RelChange: 0.03, P: 0.001},
			{Index: 6, Before: 103, After: 200, RelChange: 97.0 / 103, P: 0.003},
		}},
		"only the big one": {0.05, []Change{
			{Index: 6, Before: 102, After: 200, RelChange: 98.0 / 102, P: 0.003},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			got := prune(x, append([]split(nil), found...), tc.minChange)
			if len(got) != len(tc.want) {
				t.Fatalf("prune = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Index != w.Index || g.P != w.P || math.Abs(g.Before-w.Before) > 1e-9 ||
					math.Abs(g.After-w.After) > 1e-9 || math.Abs(g.RelChange-w.RelChange) > 1e-12 {
					t.Errorf("change %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestRelChange(t *testing.T) {
	for _, tc := range []struct{ before, after, want float64 }{
		{100, 105, 0.05},
		{100, 95, -0.05},
		{-100, -90, 0.1},
		{0, 0, 0},
		{0, 0.5, math.Inf(1)},
		{0, -0.5, math.Inf(-1)},
		{-1e308, 1e308, 2},
	} {
		if got := relChange(tc.before, tc.after); math.Abs(got-tc.want) > 1e-12 && got != tc.want {
			t.Errorf("relChange(%v, %v) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{30, 200} {
		// A change in the last sixth, as a history's newest runs.
		x := steps(13, n, 200, 5, map[int]float64{n - n/6: 1.05})
		b.Run(map[int]string{30: "n=30", 200: "n=200"}[n], func(b *testing.B) {
			for b.Loop() {
				if _, err := Detect(x, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
