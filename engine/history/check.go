package history

import (
	"fmt"
	"math"

	"github.com/llmload/llmload/engine/changepoint"
)

// CheckOptions tunes Check.
type CheckOptions struct {
	// Alpha is the chance, on a history with no shift, that Check names
	// one anyway, for all the series together: each series is tested at
	// Alpha divided by the number of series (Bonferroni).
	Alpha float64
	// MinChange is the smallest relative shift of the mean that counts.
	MinChange float64
	// MinRuns is the fewest runs on each side of a shift.
	MinRuns int
	Seed    uint64
}

// DefaultCheckAlpha, DefaultMinChange and DefaultMinRuns are
// llmload history check's defaults; see docs/history.md for the
// false-alarm and detection figures they give.
const (
	DefaultCheckAlpha = 0.01
	DefaultMinChange  = 0.02
	DefaultMinRuns    = 3
)

// Shift is a change point in one series.
type Shift struct {
	Series *Series
	// First is the index in Series.Points of the first run after it.
	First         int
	Before, After float64 // the means of the runs before and after
	RelChange     float64
	P             float64
	Worse         bool
}

// FirstRun is the first run after the shift.
func (s Shift) FirstRun() Run { return s.Series.Points[s.First].Run }

// Check finds the sustained shifts in each series (E-Divisive means with a
// permutation test, package changepoint). Series shorter than two
// MinRuns are skipped and counted in short.
func Check(series []Series, o CheckOptions) (shifts []Shift, short int, err error) {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return nil, 0, fmt.Errorf("alpha %g: want a value between 0 and 1", o.Alpha)
	}
	var tested []int
	for i, s := range series {
		if len(s.Points) >= 2*o.MinRuns {
			tested = append(tested, i)
		} else {
			short++
		}
	}
	if len(tested) == 0 {
		return nil, short, nil
	}
	each := o.Alpha / float64(len(tested))
	for _, i := range tested {
		s := &series[i]
		x := make([]float64, len(s.Points))
		for j, p := range s.Points {
			x[j] = p.Figure.Value
		}
		changes, err := changepoint.Detect(x, changepoint.Options{Alpha: each, MinSize: o.MinRuns, MinChange: o.MinChange, Seed: o.Seed})
		if err != nil {
			return nil, 0, fmt.Errorf("%s %s: %w", s.Metric, s.Stage, err)
		}
		for _, c := range changes {
			worse := c.RelChange > 0 == s.HigherBad && c.RelChange != 0 && !math.IsNaN(c.RelChange)
			shifts = append(shifts, Shift{Series: s, First: c.Index, Before: c.Before, After: c.After,
				RelChange: c.RelChange, P: c.P, Worse: worse})
		}
	}
	return shifts, short, nil
}

// Confirming is the fewest runs after a shift, at least minRuns, that a
// permutation test over n runs can find significant at alpha: its p-value
// is at best about 2/C(n,k), the chance that the k newest runs come out on
// top by shuffling alone. n+1 when no k can.
func Confirming(n, minRuns int, alpha float64) int {
	for k := minRuns; k <= n-minRuns; k++ {
		// C(n,k) grows as k goes to n/2; compare in logs.
		lc, _ := math.Lgamma(float64(n + 1))
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(n - k + 1))
		if math.Log(2)-(lc-a-b) <= math.Log(alpha) {
			return k
		}
	}
	return n + 1
}
