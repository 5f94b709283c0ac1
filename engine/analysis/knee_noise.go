package analysis

import (
	"fmt"
	"math"
)

// z95 is the standard normal quantile of a two-sided 95% band.
const z95 = 1.96

// kneeNoise marks f tentative when the comparison that decided it, the
// throughput of a against b (what names the comparison), could within
// the 95% noise of the two figures have been growth (GrowEfficiency or
// more): then the bend that made the knee may be chance. The bar is
// growth, not KneeEfficiency, because a step between the two is no
// growth either: only a flat step that may be growing undoes the
// reading. A figure whose noise is unknown (no request counts) leaves f as
// it is.
func kneeNoise(f Finding, a, b Point, what string) Finding {
	na, ca := figureNoise(a)
	nb, cb := figureNoise(b)
	if na <= 0 || nb <= 0 {
		return f
	}
	// The ratio of two rates is log-normal to a first approximation.
	hi := throughputOf(b) / throughputOf(a) * math.Exp(z95*math.Hypot(na, nb))
	e := (hi - 1) / (b.Load/a.Load - 1)
	if e < GrowEfficiency {
		return f
	}
	f.Tentative = fmt.Sprintf("throughput at %s and %s rests on %d and %d requests: within its 95%% noise %s "+
		"may have yielded up to %.0f%% of proportional gain, which is growth (≥ %.0f%%)",
		a.Stage, b.Stage, ca, cb, what, 100*e, 100*GrowEfficiency)
	f.Text = "tentative " + f.Text
	return f
}

// figureNoise is the relative standard error of p's throughput figure and
// the count it rests on; 0 when unknown. The delivered rate VUs / mean E2E
// is as noisy as the mean: its coefficient of variation over √n. The
// table's req/s is a count of starts, as noisy as a Poisson count (1/√n),
// which overstates the noise of a closed loop without think time.
func figureNoise(p Point) (float64, int64) {
	if delivered(p) {
		if p.E2ECount <= 0 || p.E2EStddev <= 0 {
			return 0, 0
		}
		return p.E2EStddev / p.E2EMean / math.Sqrt(float64(p.E2ECount)), p.E2ECount
	}
	if p.Requests <= 0 {
		return 0, 0
	}
	return 1 / math.Sqrt(float64(p.Requests)), p.Requests
}
