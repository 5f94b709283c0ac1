package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Verdicts of a row, as the reporters print them.
const (
	VerdictRegression   = "REGRESSION"
	VerdictWorse        = "worse"
	VerdictBetter       = "better"
	VerdictSame         = "same"
	VerdictInconclusive = "inconclusive"
	VerdictNoData       = "no data"
)

// Verdict sums a row up in a word: its Decision, or for a row read from
// a comparison written before decisions, the one its flags imply (never
// a pass for what the data did not decide).
func (r Row) Verdict() string {
	switch {
	case r.Decision != "":
		return r.Decision
	case r.NoData:
		return VerdictNoData
	case r.Regression:
		return VerdictRegression
	case r.Base == r.New:
		return VerdictSame
	case !r.Significant:
		return VerdictInconclusive
	case r.Worse:
		return VerdictWorse
	default:
		return VerdictBetter
	}
}

// value renders a metric's value in its unit.
func value(metricName string, v float64, noData bool) string {
	if noData && v == 0 {
		return "-"
	}
	m, err := lookup(metricName)
	if err != nil {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	switch m.kind {
	case "ms":
		if math.Abs(v) >= 1000 {
			return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	case "rate":
		return strconv.FormatFloat(v, 'f', 2, 64) + " req/s"
	case "tok":
		return strconv.FormatFloat(v, 'f', 1, 64) + " tok/s"
	default:
		return strconv.FormatFloat(v*100, 'f', 2, 64) + "%"
	}
}

// change renders a row's relative change.
func change(r Row) string {
	switch {
	case r.NoData:
		return "-"
	case r.Base == 0 && r.New != 0:
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", r.ChangePct)
}

// pct renders a fraction as a percentage bound: 0.2 → "20%".
func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + "%" }

// summary is the one-line verdict of a comparison, after its mark: the
// stages', then the capacities'.
func summary(r *Result) string {
	var parts []string
	if len(r.Matched) > 0 || len(r.Capacity) == 0 {
		parts = append(parts, stageSummary(r))
	}
	if len(r.Capacity) > 0 {
		parts = append(parts, capacitySummary(r))
	}
	return strings.Join(parts, "; ")
}

func stageSummary(r *Result) string {
	compared := 0
	for _, row := range r.Rows {
		if !row.NoData {
			compared++
		}
	}
	scope := fmt.Sprintf("%s in %s", plural(compared, "comparison"), plural(len(r.Matched), "stage"))
	bound := pct(r.MaxRegression)
	switch {
	case r.Regressions > 0 && r.Inconclusive > 0:
		return fmt.Sprintf("%s beyond %s, %d inconclusive (%s)", plural(r.Regressions, "regression"), bound, r.Inconclusive, scope)
	case r.Regressions > 0:
		return fmt.Sprintf("%s beyond %s (%s)", plural(r.Regressions, "regression"), bound, scope)
	case r.Inconclusive > 0:
		return fmt.Sprintf("inconclusive: no regression beyond %s found, but the data cannot decide %d of %s in %s",
			bound, r.Inconclusive, plural(compared, "comparison"), plural(len(r.Matched), "stage"))
	}
	return fmt.Sprintf("no regression beyond %s (%s)", bound, scope)
}

// capacitySummary names the searches whose capacity dropped beyond the
// bound, or that the intervals cannot decide.
func capacitySummary(r *Result) string {
	var dropped, undecided, compared []string
	for _, row := range r.Capacity {
		switch {
		case row.Regression:
			dropped = append(dropped, row.Scenario)
		case row.Inconclusive:
			undecided = append(undecided, row.Scenario)
		}
		if !row.NoData {
			compared = append(compared, row.Scenario)
		}
	}
	bound := pct(r.MaxCapacityDrop)
	switch {
	case len(dropped) > 0:
		return fmt.Sprintf("capacity dropped beyond %s in %s", bound, strings.Join(dropped, ", "))
	case len(undecided) > 0:
		return fmt.Sprintf("capacity inconclusive: cannot tell a drop beyond %s in %s", bound, strings.Join(undecided, ", "))
	case len(compared) == 0:
		return "capacity: no search in both files"
	}
	return fmt.Sprintf("capacity: no drop beyond %s (%s)", bound, strings.Join(compared, ", "))
}

// mark is the headline's sign: ❌ a regression, ⚠ undecided rows, ✅
// only when every row was decided and none regressed.
func mark(r *Result) string {
	switch {
	case !r.Passed():
		return "❌"
	case !r.Conclusive():
		return "⚠"
	}
	return "✅"
}

// plural renders a count with its noun: "1 stage", "3 stages".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
