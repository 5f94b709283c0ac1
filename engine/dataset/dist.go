package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Dist is a distribution of lengths (tokens). Implementations are
// immutable and safe for concurrent use; randomness comes from the caller's
// rng, so a seeded rng gives reproducible draws.
type Dist interface {
	// Draw returns one value; it may be below 1, callers clamp.
	Draw(r *rand.Rand) float64
	// String describes the distribution, e.g. "lognormal(mean=500, sd=200)".
	String() string
}

type fixed struct{ v float64 }

// Fixed returns the distribution that always draws v.
func Fixed(v float64) (Dist, error) {
	if err := check("fixed", "value", v); err != nil {
		return nil, err
	}
	return fixed{v}, nil
}

// Draw implements Dist.
func (d fixed) Draw(*rand.Rand) float64 { return d.v }

// String implements Dist.
func (d fixed) String() string { return "fixed(" + num(d.v) + ")" }

type normal struct{ mean, sd float64 }

// Normal returns the normal distribution of a mean and standard deviation.
func Normal(mean, sd float64) (Dist, error) {
	if err := checkMeanSD("normal", mean, sd); err != nil {
		return nil, err
	}
	return normal{mean, sd}, nil
}

// Draw implements Dist.
func (d normal) Draw(r *rand.Rand) float64 { return d.mean + d.sd*r.NormFloat64() }

// String implements Dist.
func (d normal) String() string {
	return "normal(mean=" + num(d.mean) + ", sd=" + num(d.sd) + ")"
}

// lognormal keeps the value's mean and sd for String, and the underlying
// normal's mu and sigma for Draw.
type lognormal struct{ mean, sd, mu, sigma float64 }

// Lognormal returns the lognormal distribution whose values (not their
// logarithms) have the given mean and standard deviation, the way request
// lengths are usually described. The mean must be above 0.
func Lognormal(mean, sd float64) (Dist, error) {
	if err := checkMeanSD("lognormal", mean, sd); err != nil {
		return nil, err
	}
	if mean == 0 {
		return nil, errors.New("lognormal: mean must be above 0")
	}
	s2 := math.Log1p(sd * sd / (mean * mean))
	return lognormal{mean, sd, math.Log(mean) - s2/2, math.Sqrt(s2)}, nil
}

// Draw implements Dist.
func (d lognormal) Draw(r *rand.Rand) float64 { return math.Exp(d.mu + d.sigma*r.NormFloat64()) }

// String implements Dist.
func (d lognormal) String() string {
	return "lognormal(mean=" + num(d.mean) + ", sd=" + num(d.sd) + ")"
}

type uniform struct{ lo, hi float64 }

// Uniform returns the uniform distribution on [lo, hi].
func Uniform(lo, hi float64) (Dist, error) {
	if err := check("uniform", "lo", lo); err != nil {
		return nil, err
	}
	if err := check("uniform", "hi", hi); err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, fmt.Errorf("uniform: lo %s > hi %s", num(lo), num(hi))
	}
	return uniform{lo, hi}, nil
}

// Draw implements Dist.
func (d uniform) Draw(r *rand.Rand) float64 { return d.lo + (d.hi-d.lo)*r.Float64() }

// String implements Dist.
func (d uniform) String() string {
	return "uniform(" + num(d.lo) + ", " + num(d.hi) + ")"
}

// check rejects what no length can be: NaN, infinities, negatives.
func check(dist, name string, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s: %s is %v, want a finite number", dist, name, v)
	case v < 0:
		return fmt.Errorf("%s: %s %s is negative", dist, name, num(v))
	}
	return nil
}

func checkMeanSD(dist string, mean, sd float64) error {
	if err := check(dist, "mean", mean); err != nil {
		return err
	}
	return check(dist, "sd", sd)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Choice is a weighted choice among values: a Dist of the values, and
// Pick for the index of one, so a caller may choose among things that
// are not numbers (an image's {width, height}).
type Choice struct {
	values []float64
	cum    []float64 // cumulative weights; the last is the total
	label  string
}

// NewChoice returns the choice among values with weights (nil: equal
// weights). Values must be finite and not negative, weights above 0 and
// as many as the values; names, when set, label the values in String.
func NewChoice(values, weights []float64, names []string) (*Choice, error) {
	if len(values) == 0 {
		return nil, errors.New("choice: give at least one value")
	}
	if weights != nil && len(weights) != len(values) {
		return nil, fmt.Errorf("choice: %d weights for %d values", len(weights), len(values))
	}
	c := &Choice{values: values, cum: make([]float64, len(values))}
	total := 0.0
	for i, v := range values {
		if err := check("choice", fmt.Sprintf("value %d", i+1), v); err != nil {
			return nil, err
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("choice: weight %d is %s, want a number above 0", i+1, num(w))
		}
		total += w
		c.cum[i] = total
	}
	labels := make([]string, len(values))
	for i, v := range values {
		labels[i] = num(v)
		if names != nil {
			labels[i] = names[i]
		}
		if weights != nil {
			labels[i] += ":" + num(weights[i])
		}
	}
	c.label = "choice(" + strings.Join(labels, ", ") + ")"
	return c, nil
}

// Len is the number of values.
func (c *Choice) Len() int { return len(c.values) }

// Pick returns the index of a value, drawn with its weight.
func (c *Choice) Pick(r *rand.Rand) int {
	x := r.Float64() * c.cum[len(c.cum)-1]
	i := sort.SearchFloat64s(c.cum, x)
	if i < len(c.cum) && c.cum[i] == x {
		i++ // x is the top of range i: the next range holds it
	}
	return min(i, len(c.cum)-1)
}

// Draw implements Dist.
func (c *Choice) Draw(r *rand.Rand) float64 { return c.values[c.Pick(r)] }

// String implements Dist.
func (c *Choice) String() string { return c.label }
