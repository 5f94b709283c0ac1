package compare

import "math"

// compareOne builds the row of one metric in one stage.
func compareOne(stage string, m metric, b, n sample, bound float64) Row {
	row := Row{Stage: stage, Metric: m.name, Base: finite(b.value), New: finite(n.value)}
	switch {
	case !b.ok && !n.ok:
		row.NoData, row.Note = true, b.absent+" in either"
		return row
	case !b.ok:
		row.NoData, row.Note = true, b.absent+" in base"
		return row
	case !n.ok:
		row.NoData, row.Note = true, n.absent+" in new"
		return row
	}
	diff := row.New - row.Base
	row.Worse = (diff > 0) == m.higherBad && diff != 0
	row.Significant, row.Note = significant(b, n)
	if row.Base != 0 {
		row.ChangePct = finite(diff / math.Abs(row.Base) * 100)
	} else if diff != 0 {
		row.Note = join(row.Note, "base was 0")
	}
	beyond := math.Abs(row.ChangePct) > bound*100 || (row.Base == 0 && diff != 0)
	row.Regression = row.Worse && row.Significant && beyond
	if row.Worse && row.Significant && !beyond {
		row.Note = join(row.Note, "within the bound")
	}
	return row
}

// significant decides whether two samples differ beyond their noise, and
// says why not.
func significant(b, n sample) (bool, string) {
	if b.hasIV && n.hasIV {
		if b.iv[0] <= n.iv[1] && n.iv[0] <= b.iv[1] {
			return false, "within noise (95% intervals overlap)"
		}
		return true, ""
	}
	if b.weak || n.weak {
		return false, "within noise (too few samples)"
	}
	return true, ""
}

func join(a, b string) string {
	if a == "" {
		return b
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
