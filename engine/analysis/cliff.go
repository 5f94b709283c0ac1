package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// CliffGrowth is the factor of the growth rule: a percentile at least this
// many times its previous value, and growing at least this many times
// faster than load.
const CliffGrowth = 2.0

// percentile is one figure of a latency the growth rule reads.
type percentile struct {
	metric string // Finding.Metric
	name   string // for Text
	// means says what the percentile's jump tells: the median moving is
	// the typical request waiting, the p99 alone is the tail.
	means string
	of    func(Point) float64
}

// latency is one latency the cliff rules read: its percentiles in the
// order p50, p90, p99, and its objective.
type latency struct {
	label       string
	percentiles []percentile
	count       func(Point) int64
	slo         func(plan.SLO) time.Duration
}

// p99 is the percentile the SLO rule reads.
func (l latency) p99() percentile { return l.percentiles[len(l.percentiles)-1] }

// latencies are read in order: TTFT first, because it is what users wait
// for, then E2E. All of p50, p90 and p99 are read because LLM latency is
// bimodal: a p99 set by long-prompt prefill from the first level on can
// hide the median jumping when requests start to queue.
var latencies = []latency{
	{"TTFT", []percentile{
		{"ttft_p50", "p50", "requests queue", func(p Point) float64 { return p.TTFTP50 }},
		{"ttft_p90", "p90", "a growing share of requests wait", func(p Point) float64 { return p.TTFTP90 }},
		{"ttft_p99", "p99", "the tail breaks away", func(p Point) float64 { return p.TTFTP99 }},
	}, func(p Point) int64 { return p.TTFTCount }, func(o plan.SLO) time.Duration { return o.TTFT }},
	{"E2E", []percentile{
		{"e2e_p50", "p50", "the typical request slows", func(p Point) float64 { return p.E2EP50 }},
		{"e2e_p90", "p90", "a growing share of requests slow", func(p Point) float64 { return p.E2EP90 }},
		{"e2e_p99", "p99", "the tail breaks away", func(p Point) float64 { return p.E2EP99 }},
	}, func(p Point) int64 { return p.E2ECount }, func(o plan.SLO) time.Duration { return o.E2E }},
}

// Latency is p's percentile named as Finding.Metric names one
// ("ttft_p50", "e2e_p99"); 0 for any other name.
func (p Point) Latency(metric string) float64 {
	for _, l := range latencies {
		for _, pc := range l.percentiles {
			if pc.metric == metric {
				return pc.of(p)
			}
		}
	}
	return 0
}

// Cliff finds the latency cliff of s. With a TTFT or E2E objective in slo
// it is first the first point whose p99 breaks the objective (TTFT, then
// E2E). Without one, or when none is broken, it is the first point where
// a TTFT percentile (p50, p90 or p99), else an E2E one, grows much faster
// than load (CliffGrowth); when several do at one level, the one that grew
// most is named. Metric says which percentile found it. Points without
// that percentile are skipped, never divided by. A cliff read from a
// percentile flagged unreliable is Tentative.
func Cliff(s Sweep, slo plan.SLO) Finding {
	return cliff(s, slo, func(breakAt) bool { return true })
}

// cliff is Cliff counting only the growth-rule breaks that accept takes.
func cliff(s Sweep, slo plan.SLO, accept func(breakAt) bool) Finding {
	f := Finding{Kind: KindCliff, Scenario: s.Scenario, LoadUnit: s.LoadUnit, Rule: cliffRule(slo)}
	bySLO := slo.TTFT > 0 || slo.E2E > 0
	if bySLO {
		for _, l := range latencies {
			if p, ok := sloBreach(s.Points, l, slo); ok {
				return sloFinding(f, s, l, p, slo)
			}
		}
	}
	for _, l := range latencies {
		if b, ok := growthBreak(s.Points, l, accept); ok {
			return growthFinding(f, s, l, b, bySLO)
		}
	}
	f.Metric = latencies[0].p99().metric
	f.Text = "no latency cliff within the sweep (no TTFT or E2E p50, p90 or p99 grew much faster than load)"
	if bySLO {
		f.Text = "no latency cliff within the sweep (TTFT and E2E p99 stayed within the SLO, and no p50, p90 or p99 grew much faster than load)"
	}
	return f
}

func sloFinding(f Finding, s Sweep, l latency, p Point, slo plan.SLO) Finding {
	pc := l.p99()
	f.Found, f.Stage, f.Load, f.Metric, f.Value = true, p.Stage, p.Load, pc.metric, pc.of(p)
	f.Text = fmt.Sprintf("%s cliff at %s: %s %s breaks the SLO of %s", l.label, loadText(p.Load, s.LoadUnit),
		pc.name, msText(f.Value), msText(ms(l.slo(slo))))
	f.Suspect = suspectOf(p)
	return tentative(f, l, pc, p)
}

func growthFinding(f Finding, s Sweep, l latency, b breakAt, bySLO bool) Finding {
	f.Found, f.Stage, f.Load, f.Metric, f.Value = true, b.at.Stage, b.at.Load, b.pc.metric, b.pc.of(b.at)
	f.Growth, f.LoadGrowth = b.growth, b.at.Load/b.before.Load
	f.Text = fmt.Sprintf("%s cliff at %s: %s ×%s for ×%s load (%s → %s): %s", l.label, loadText(b.at.Load, s.LoadUnit),
		b.pc.name, ratioText(f.Growth), ratioText(f.LoadGrowth), msText(b.pc.of(b.before)), msText(f.Value), b.pc.means)
	if bySLO {
		f.Text += " (p99 within the SLO)"
	}
	// The growth rule compares with the level before: both count.
	f.Suspect = suspectOf(b.before, b.at)
	return tentative(f, l, b.pc, b.before, b.at)
}

// tentative marks f when pc was flagged unreliable at any of points.
func tentative(f Finding, l latency, pc percentile, points ...Point) Finding {
	var at []string
	for _, p := range points {
		if slices.Contains(p.Unreliable, pc.metric) {
			at = append(at, fmt.Sprintf("%s (%d samples)", p.Stage, l.count(p)))
		}
	}
	if len(at) > 0 {
		f.Tentative = fmt.Sprintf("%s %s flagged unreliable at %s", l.label, pc.name, strings.Join(at, ", "))
		f.Text = "tentative " + f.Text
	}
	return f
}

// sloBreach returns the first point whose p99 exceeds l's objective.
func sloBreach(points []Point, l latency, slo plan.SLO) (Point, bool) {
	limit := ms(l.slo(slo))
	if limit <= 0 {
		return Point{}, false
	}
	for _, p := range points {
		if l.p99().of(p) > limit {
			return p, true
		}
	}
	return Point{}, false
}

// breakAt is where the growth rule fired: the percentile, the point, the
// point it was compared with and the percentile's ratio between them.
type breakAt struct {
	pc         percentile
	at, before Point
	growth     float64
}

// growthBreak returns the first point where one of l's percentiles is at
// least CliffGrowth times its value at the previous point that has it, and
// at least CliffGrowth times the load ratio, and accept takes the break; of
// several at that point, the one with the largest ratio.
func growthBreak(points []Point, l latency, accept func(breakAt) bool) (breakAt, bool) {
	prev := make([]*Point, len(l.percentiles))
	for i := range points {
		p := &points[i]
		if p.Load <= 0 {
			continue
		}
		var best breakAt
		for j, pc := range l.percentiles {
			if pc.of(*p) <= 0 {
				continue
			}
			if q := prev[j]; q != nil {
				r := pc.of(*p) / pc.of(*q)
				if b := (breakAt{pc, *p, *q, r}); grows(r, p.Load/q.Load) && r > best.growth && accept(b) {
					best = b
				}
			}
			prev[j] = p
		}
		if best.growth > 0 {
			return best, true
		}
	}
	return breakAt{}, false
}

// grows says whether a percentile's ratio r between two levels is the
// growth rule's break for their load ratio.
func grows(r, loadRatio float64) bool { return r >= CliffGrowth && r >= CliffGrowth*loadRatio }

func cliffRule(slo plan.SLO) string {
	growth := fmt.Sprintf("the first load level where a TTFT percentile (p50, p90 or p99; then E2E's) grows much faster than load: "+
		"v_i/v_i-1 >= %g and >= %g x L_i/L_i-1, naming the percentile that grew most", CliffGrowth, CliffGrowth)
	if slo.TTFT > 0 || slo.E2E > 0 {
		return fmt.Sprintf("the first load level whose p99 exceeds the SLO (TTFT p99 > %s, then E2E p99 > %s; unset objectives are not checked); "+
			"if none does, %s", sloText(slo.TTFT), sloText(slo.E2E), growth)
	}
	return growth
}

// ratioText renders a growth ratio: "16.4", "2".
func ratioText(r float64) string { return strconv.FormatFloat(r, 'g', 3, 64) }

func sloText(d time.Duration) string {
	if d <= 0 {
		return "unset"
	}
	return msText(ms(d))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
