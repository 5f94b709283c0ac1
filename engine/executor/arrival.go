package executor

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// arrival is one intended iteration start.
type arrival struct {
	at    time.Duration // offset from the scenario's start
	stage int           // index of the stage it is scheduled in
	seq   int64         // 0-based position in the scenario's sequence: segment seq mod n owns it
}

// arrivals generates an arrival-rate scenario's intended start times. It
// draws unit-mean increments of cumulative intensity Λ and inverts Λ, so
// one renewal process serves every rate shape: steps and ramps bend time,
// not the draws. It is pure (no clock, no sleeping) and owned by one
// goroutine.
type arrivals struct {
	p     *rateProfile
	rng   *rand.Rand
	kind  string
	gamma gammaSampler
	level float64 // Λ of the previous arrival
	count int64   // arrivals so far
	seg   int
	stage int
}

// newArrivals returns sc's arrival generator, seeded from the run's seed
// and the scenario's name so each scenario gets its own reproducible stream.
func newArrivals(p *rateProfile, sc plan.Scenario, seed int64) (*arrivals, error) {
	a := &arrivals{p: p, kind: sc.Arrival, rng: rand.New(rand.NewPCG(uint64(seed), nameHash(sc.Name)))}
	switch sc.Arrival {
	case "", plan.ArrivalPoisson:
		a.kind = plan.ArrivalPoisson
	case plan.ArrivalConstant:
	case plan.ArrivalGamma:
		if !(sc.Burstiness > 0) || math.IsInf(sc.Burstiness, 0) {
			return nil, fmt.Errorf("scenario %q: burstiness %v must be a positive number", sc.Name, sc.Burstiness)
		}
		a.gamma = newGammaSampler(sc.Burstiness)
	default:
		return nil, fmt.Errorf("scenario %q: unknown arrival process %q", sc.Name, sc.Arrival)
	}
	return a, nil
}

func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// next returns the next arrival; ok is false once the profile has ended.
// Constant arrivals sit at Λ = 0, 1, 2, ...: the first one starts the
// scenario, as in k6. Random ones form a renewal process from time 0.
func (a *arrivals) next() (arr arrival, ok bool) {
	switch a.kind {
	case plan.ArrivalConstant:
		a.level = float64(a.count)
	case plan.ArrivalGamma:
		a.level += a.gamma.draw(a.rng)
	default:
		a.level += a.rng.ExpFloat64()
	}
	a.count++
	var off time.Duration
	a.seg, off, ok = a.p.invert(a.seg, a.level)
	if !ok || off >= a.p.duration() {
		return arrival{}, false
	}
	for a.stage < len(a.p.stageEnds)-1 && off >= a.p.stageEnds[a.stage] {
		a.stage++
	}
	return arrival{at: off, stage: a.stage, seq: a.count - 1}, true
}

// gammaSampler draws gamma variates of a fixed shape scaled to mean 1, by
// Marsaglia and Tsang's method ("A simple method for generating gamma
// variables", 2000). Shapes below 1 sample shape+1 and boost by U^(1/shape).
type gammaSampler struct {
	shape float64
	d, c  float64
	boost bool
}

func newGammaSampler(shape float64) gammaSampler {
	a := shape
	boost := a < 1
	if boost {
		a++
	}
	d := a - 1.0/3
	return gammaSampler{shape: shape, d: d, c: 1 / math.Sqrt(9*d), boost: boost}
}

// draw returns one variate with mean 1 and variance 1/shape.
func (g gammaSampler) draw(r *rand.Rand) float64 {
	x := g.marsagliaTsang(r)
	if g.boost {
		x *= math.Pow(1-r.Float64(), 1/g.shape)
	}
	return x / g.shape
}

// marsagliaTsang draws Gamma(d+1/3, 1) for d+1/3 >= 1.
func (g gammaSampler) marsagliaTsang(r *rand.Rand) float64 {
	for {
		x := r.NormFloat64()
		v := 1 + g.c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64() // (0, 1]: log(u) is finite
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < x2/2+g.d*(1-v+math.Log(v)) {
			return g.d * v
		}
	}
}
