package compare

import (
	"fmt"
	"math"
	"strconv"
)

// Verdicts of a row, as the reporters print them.
const (
	VerdictRegression = "REGRESSION"
	VerdictWorse      = "worse"
	VerdictBetter     = "better"
	VerdictNoise      = "~ noise"
	VerdictSame       = "same"
	VerdictNoData     = "no data"
)

// Verdict sums a row up in a word.
func (r Row) Verdict() string {
	switch {
	case r.NoData:
		return VerdictNoData
	case r.Regression:
		return VerdictRegression
	case r.Base == r.New:
		return VerdictSame
	case !r.Significant:
		return VerdictNoise
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

// summary is the one-line verdict of a comparison.
func summary(r *Result) string {
	compared := 0
	for _, row := range r.Rows {
		if !row.NoData {
			compared++
		}
	}
	scope := fmt.Sprintf("%d comparisons in %d stages", compared, len(r.Matched))
	switch r.Regressions {
	case 0:
		return fmt.Sprintf("no regression beyond %s (%s)", pct(r.MaxRegression), scope)
	case 1:
		return fmt.Sprintf("1 regression beyond %s (%s)", pct(r.MaxRegression), scope)
	}
	return fmt.Sprintf("%d regressions beyond %s (%s)", r.Regressions, pct(r.MaxRegression), scope)
}
