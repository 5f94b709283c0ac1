package analysis

import "fmt"

// Thresholds of the knee rule, on the marginal efficiency of a step: the
// share of the proportional throughput gain that the added load yielded.
const (
	KneeEfficiency = 0.2 // below this, added load no longer pays
	GrowEfficiency = 0.5 // at or above this, throughput was still growing
)

// KneeRule states the knee rule in words.
var KneeRule = fmt.Sprintf("the last load level before the first step where added load yields < %.0f%% of "+
	"proportional throughput gain (e = (T_i/T_i-1 - 1) / (L_i/L_i-1 - 1) < %.1f), provided an earlier step "+
	"had e >= %.1f; when the first step has e < %.1f and no later step reaches %.1f, the first level (saturated from the start); "+
	"T is the delivered request rate (the smaller of req/s and VUs / mean E2E in closed models); "+
	"tentative when, within the 95%% noise of the two figures it compared (a count's 1/√n, a mean's CV/√n), that step (for a curve saturated from the start, the whole sweep) could have been growth (e >= %.1f)",
	KneeEfficiency*100, KneeEfficiency, GrowEfficiency, KneeEfficiency, GrowEfficiency, GrowEfficiency)

// Knee finds the throughput knee of s. An open-model sweep (rates) is read
// by OpenKnee. In a closed model it is the last point before the first
// step whose marginal efficiency is below KneeEfficiency, provided an
// earlier step reached GrowEfficiency. A curve whose first step is flat (or
// falling) and that never grows after has its knee at the first point:
// the server was saturated before the sweep began, which is a reading, not
// an absence of one. A flat step before growth that follows is read as
// noise at the bottom of the curve. A curve that kept growing has no knee.
// Points without throughput are skipped. A knee whose deciding comparison
// is within the noise of its figures is Tentative (see kneeNoise).
func Knee(s Sweep) Finding {
	if s.LoadUnit == UnitReqRate {
		return OpenKnee(s)
	}
	f := Finding{Kind: KindKnee, Scenario: s.Scenario, LoadUnit: s.LoadUnit, Metric: "req/s", Rule: KneeRule}
	pts := withThroughput(s.Points)
	if len(pts) < 2 {
		f.Text = "no throughput knee: too few load levels with throughput"
		return f
	}
	if efficiency(pts[0], pts[1]) < KneeEfficiency && !growsAfter(pts, 1) {
		return saturatedAtFirst(f, pts, s.LoadUnit)
	}
	grew := false
	for i := 1; i < len(pts); i++ {
		e := efficiency(pts[i-1], pts[i])
		if e >= KneeEfficiency {
			grew = grew || e >= GrowEfficiency
			continue
		}
		if !grew {
			if growsAfter(pts, i) {
				continue
			}
			f.Text = fmt.Sprintf("no throughput knee: throughput did not grow in proportion to load (from %s to %s)",
				loadText(pts[i-1].Load, s.LoadUnit), loadText(pts[i].Load, s.LoadUnit))
			return f
		}
		k := pts[i-1]
		f.Found, f.Stage, f.Load, f.Value = true, k.Stage, k.Load, throughputOf(k)
		f.Text = fmt.Sprintf("throughput knee at %s: %s", loadText(k.Load, s.LoadUnit), figureText(k))
		// The knee is read from the step to the next level too.
		f.Suspect = suspectOf(k, pts[i])
		return kneeNoise(f, k, pts[i], "the step to "+loadText(pts[i].Load, s.LoadUnit))
	}
	f.Text = "no throughput knee within the sweep (throughput kept growing)"
	return f
}

// growsAfter says whether a step after pts[i] reaches GrowEfficiency.
func growsAfter(pts []Point, i int) bool {
	for j := i + 1; j < len(pts); j++ {
		if efficiency(pts[j-1], pts[j]) >= GrowEfficiency {
			return true
		}
	}
	return false
}

// saturatedAtFirst is the knee of a curve flat or falling from its first
// level, with the whole sweep's throughput ratio against its load ratio.
func saturatedAtFirst(f Finding, pts []Point, unit string) Finding {
	first, last := pts[0], pts[len(pts)-1]
	f.Found, f.Stage, f.Load, f.Value = true, first.Stage, first.Load, throughputOf(first)
	shape := "flat"
	if throughputOf(last) < throughputOf(first) {
		shape = "falling"
	}
	f.Text = fmt.Sprintf("throughput %s from the first level: saturated at %s (%s, ×%s at ×%s load; "+
		"start the sweep lower, or the server has one worker)", shape, loadText(first.Load, unit), rateText(f.Value),
		ratioText(throughputOf(last)/f.Value), ratioText(last.Load/first.Load))
	f.Suspect = suspectOf(pts...)
	// The reading is about the whole curve, so its noise is the span's.
	return kneeNoise(f, first, last, "the sweep from "+loadText(first.Load, unit)+" to "+loadText(last.Load, unit))
}

// efficiency is the marginal efficiency of the step from a to b; both have
// throughput and b's load is larger.
func efficiency(a, b Point) float64 {
	return (throughputOf(b)/throughputOf(a) - 1) / (b.Load/a.Load - 1)
}

// figureText names the throughput figure the knee rule read: the table's
// req/s, or the delivered rate VUs / mean E2E when that was smaller.
func figureText(p Point) string {
	v := throughputOf(p)
	if delivered(p) {
		return fmt.Sprintf("%s delivered (%s ÷ mean E2E %s; the table's %.2f req/s counts requests started)",
			rateText(v), loadText(float64(p.VUs), UnitVUs), msText(p.E2EMean), p.ReqPerSec)
	}
	return rateText(v) + " (the table's req/s)"
}

// delivered says whether p's throughput figure is the delivered rate VUs
// / mean E2E rather than the table's req/s.
func delivered(p Point) bool {
	return p.Throughput > 0 && p.Throughput < p.ReqPerSec && p.E2EMean > 0
}

func throughputOf(p Point) float64 {
	if p.Throughput > 0 {
		return p.Throughput
	}
	return p.ReqPerSec
}

func withThroughput(points []Point) []Point {
	var out []Point
	for _, p := range points {
		if throughputOf(p) > 0 && p.Load > 0 {
			out = append(out, p)
		}
	}
	return out
}
