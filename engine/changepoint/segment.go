package changepoint

import (
	"math/rand/v2"
	"slices"
)

// split is a change point found by segmentation: x[at] starts the new
// segment, and p is its permutation p-value.
type split struct {
	at int
	p  float64
}

// detector runs the binary segmentation of one series.
type detector struct {
	x     []float64
	o     Options
	found []split
}

// search looks for the best change point in x[lo:hi] and, when it is
// significant, records it and searches both sides.
func (d *detector) search(lo, hi int) {
	if hi-lo < 2*d.o.MinSize {
		return
	}
	e := newEnergy(d.x[lo:hi], d.o.MinSize)
	if e.total == 0 {
		return // all values equal: nothing to split
	}
	tau, q := e.best(e.ranks)
	p, ok := d.significant(e, q, lo, hi)
	if !ok {
		return
	}
	d.found = append(d.found, split{at: lo + tau, p: p})
	d.search(lo, lo+tau)
	d.search(lo+tau, hi)
}

// exceedStop is h of Besag and Clifford's sequential p-value: a test
// stops once h draws have scored at least the observed split. 20 decides
// near Alpha = 0.01 about as precisely as 1999 fixed draws do.
const exceedStop = 20

// significant runs the permutation test of the best split of e, which
// scored q; each draw is the best split of the segment shuffled. It stops
// at the exceedStop-th draw ℓ that scores at least q, with p = h/ℓ, or
// after all draws with p = (1 + exceed)/(1 + draws): Besag and Clifford,
// "Sequential Monte Carlo p-values", Biometrika 78(2), 1991. The p-value
// is valid either way, and a segment without a change costs about 20/p
// draws rather than all of them.
//
// Each segment draws from its own stream, a function of Seed and its
// bounds, so its answer does not depend on the order segments are
// searched in.
func (d *detector) significant(e *energy, q float64, lo, hi int) (p float64, ok bool) {
	rng := rand.New(rand.NewPCG(d.o.Seed, uint64(lo)<<32|uint64(hi)))
	ranks := slices.Clone(e.ranks)
	// Arrangements as good as the observed one may score a rounding
	// error below it; they count as ties, so at least q.
	bar := q - 1e-9*e.total/float64(len(ranks))
	exceed := 0
	for drawn := 1; drawn <= d.o.Permutations; drawn++ {
		shuffle(rng, ranks)
		if _, s := e.best(ranks); s >= bar {
			exceed++
			if exceed == exceedStop {
				p = float64(exceedStop) / float64(drawn)
				return p, p <= d.o.Alpha
			}
		}
	}
	p = float64(1+exceed) / float64(1+d.o.Permutations)
	return p, p <= d.o.Alpha
}

// shuffle permutes ranks uniformly (Fisher–Yates); rand.Shuffle's swap
// callback costs a tenth of a draw here.
func shuffle(rng *rand.Rand, ranks []int) {
	for i := len(ranks) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		ranks[i], ranks[j] = ranks[j], ranks[i]
	}
}
