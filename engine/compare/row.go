package compare

import (
	"cmp"
	"fmt"
	"math"
)

// levels are the significance levels a row is decided at.
type levels struct {
	alpha, within float64
}

// compareOne builds the row of one metric in one stage.
func compareOne(stage string, m metric, b, n sample, bound float64, lv levels) Row {
	row := Row{Stage: stage, Metric: m.name, Base: finite(b.value), New: finite(n.value)}
	switch {
	case !b.ok && !n.ok:
		row.NoData, row.Note = true, b.absent+" in either"
	case !b.ok:
		row.NoData, row.Note = true, b.absent+" in base"
	case !n.ok:
		row.NoData, row.Note = true, n.absent+" in new"
	}
	if row.NoData {
		row.Decision = VerdictNoData
		return row
	}
	diff := row.New - row.Base
	row.Worse = (diff > 0) == m.higherBad && diff != 0
	if row.Base != 0 {
		row.ChangePct = finite(diff / math.Abs(row.Base) * 100)
	}
	beyond := math.Abs(row.ChangePct) > bound*100 || (row.Base == 0 && diff != 0)
	switch ev, ok := evaluate(m, b, n, bound); {
	case b.identity != "" && b.identity == n.identity:
		row.Decision, row.Note = VerdictSame, "identical data"
	case row.Base == 0 && row.New == 0 && (b.test == testErrorRate || b.test == testRate):
		row.Decision, row.Note = VerdictSame, "none in either"
	case ok:
		row.Test = b.test.String()
		row.PValue, row.PWithin = pointer(ev.pWorse), pointer(ev.pWithin)
		row.decide(ev, beyond, lv)
	case b.test == testNone:
		row.decideUntested(beyond)
	default:
		row.decideByIntervals(m, b, n, bound, beyond)
	}
	if row.Base == 0 && diff != 0 {
		row.Note = join(row.Note, "base was 0")
	}
	row.Regression = row.Decision == VerdictRegression
	row.Inconclusive = row.Decision == VerdictInconclusive
	return row
}

// decide turns a test's p-values into a verdict. A regression must be
// both significantly worse and worse beyond the bound by its point
// change; a row is only "same", "worse" (within the bound) or "better"
// once the data exclude a worsening beyond the bound; everything else is
// inconclusive, never silently passed.
func (row *Row) decide(ev evidence, beyond bool, lv levels) {
	worse, better := ev.pWorse < lv.alpha, ev.pBetter < lv.alpha
	row.Significant = worse || better
	switch {
	case row.Worse && worse && beyond:
		row.Decision = VerdictRegression
	case row.Worse && beyond:
		row.Decision = VerdictInconclusive
		row.Note = fmt.Sprintf("worse beyond the bound, but not significantly (p = %s)", pv(ev.pWorse))
	case ev.pWithin >= lv.within:
		row.Decision = VerdictInconclusive
		row.Note = fmt.Sprintf("too few samples to exclude a worsening beyond the bound (p = %s)", pv(ev.pWithin))
	case worse && row.Worse:
		row.Decision, row.Note = VerdictWorse, "within the bound"
	case better && !row.Worse:
		row.Decision = VerdictBetter
	default:
		row.Decision = VerdictSame
	}
}

// decideUntested decides a maximum, which one value makes and no test
// can judge: worse beyond the bound is inconclusive, never a regression.
func (row *Row) decideUntested(beyond bool) {
	switch {
	case row.Base == row.New:
		row.Decision = VerdictSame
	case row.Worse && beyond:
		row.Decision, row.Note = VerdictInconclusive, "a maximum has no test"
	case row.Worse:
		row.Decision, row.Note = VerdictWorse, "a maximum has no test"
	default:
		row.Decision, row.Note = VerdictBetter, "a maximum has no test"
	}
}

// decideByIntervals is the fallback for files written before histograms:
// 95% intervals that do not overlap are significant; too few samples, or
// an interval reaching beyond the bound, leave the row inconclusive.
func (row *Row) decideByIntervals(m metric, b, n sample, bound float64, beyond bool) {
	row.Test = testIntervals.String()
	sig, why := significant(b, n)
	row.Significant = sig
	excluded := b.hasIV && n.hasIV && n.iv[1] < b.iv[0]*(1+bound)
	if !m.higherBad {
		excluded = b.hasIV && n.hasIV && n.iv[0] > b.iv[1]*(1-bound)
	}
	switch {
	case row.Worse && sig && beyond:
		row.Decision = VerdictRegression
	case row.Worse && beyond:
		row.Decision, row.Note = VerdictInconclusive, "worse beyond the bound, but "+why
	case !excluded:
		row.Decision, row.Note = VerdictInconclusive, cmp.Or(why, "cannot exclude a worsening beyond the bound")
	case sig && row.Worse:
		row.Decision, row.Note = VerdictWorse, "within the bound"
	case sig:
		row.Decision = VerdictBetter
	default:
		row.Decision = VerdictSame
	}
}

// significant decides whether two samples differ beyond their intervals,
// and says why not.
func significant(b, n sample) (bool, string) {
	if b.hasIV && n.hasIV {
		if b.iv[0] <= n.iv[1] && n.iv[0] <= b.iv[1] {
			return false, "95% intervals overlap"
		}
		return true, ""
	}
	if b.weak || n.weak {
		return false, "too few samples, and no histogram (an older file)"
	}
	return true, ""
}

// pv renders a p-value with two significant digits.
func pv(p float64) string {
	if p < 1e-4 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.2g", p)
}

func pointer(p float64) *float64 {
	p = finite(p)
	return &p
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// finite maps NaN and ±Inf, which JSON cannot hold, to 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
