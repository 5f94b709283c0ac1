package analysis

import (
	"fmt"
	"time"

	"github.com/llmload/llmload/engine"
)

// CliffGrowth is the factor of the growth rule: a p99 at least this many
// times its previous value, and growing at least this many times faster
// than load.
const CliffGrowth = 2.0

// latency names one p99 the cliff rules read.
type latency struct {
	metric string // Finding.Metric
	label  string // for Text
	p99    func(Point) float64
	slo    func(engine.SLO) time.Duration
}

// latencies are read in order: TTFT first, because it is what users wait
// for, then E2E.
var latencies = []latency{
	{"ttft_p99", "TTFT p99", func(p Point) float64 { return p.TTFTP99 }, func(o engine.SLO) time.Duration { return o.TTFT }},
	{"e2e_p99", "E2E p99", func(p Point) float64 { return p.E2EP99 }, func(o engine.SLO) time.Duration { return o.E2E }},
}

// Cliff finds the latency cliff of s. With a TTFT or E2E objective in slo
// it is the first point whose p99 breaks the objective; without one, the
// first point whose p99 grows much faster than load (CliffGrowth). TTFT p99
// is read first, then E2E p99; Metric says which found it. Points without
// that latency are skipped, never divided by.
func Cliff(s Sweep, slo engine.SLO) Finding {
	f := Finding{Kind: KindCliff, Scenario: s.Scenario, LoadUnit: s.LoadUnit}
	bySLO := slo.TTFT > 0 || slo.E2E > 0
	for _, l := range latencies {
		var p, prev Point
		var ok bool
		if bySLO {
			p, ok = sloBreach(s.Points, l, slo)
		} else {
			p, prev, ok = growthBreak(s.Points, l)
		}
		if ok {
			f.Found, f.Stage, f.Load, f.Metric, f.Value = true, p.Stage, p.Load, l.metric, l.p99(p)
			f.Rule, f.Text = cliffRule(slo, bySLO), fmt.Sprintf("%s cliff at %s: %s",
				l.label, loadText(p.Load, s.LoadUnit), msText(f.Value))
			if bySLO {
				f.Text += " (SLO " + msText(ms(l.slo(slo))) + ")"
			}
			// The growth rule compares with the level before; an empty
			// prev (the SLO rule) has no Suspect.
			f.Suspect = suspectOf(p, prev)
			return f
		}
	}
	f.Metric = latencies[0].metric
	f.Rule = cliffRule(slo, bySLO)
	f.Text = "no latency cliff within the sweep (TTFT and E2E p99 grew no faster than load)"
	if bySLO {
		f.Text = "no latency cliff within the sweep (TTFT and E2E p99 stayed within the SLO)"
	}
	return f
}

// sloBreach returns the first point whose p99 exceeds l's objective.
func sloBreach(points []Point, l latency, slo engine.SLO) (Point, bool) {
	limit := ms(l.slo(slo))
	if limit <= 0 {
		return Point{}, false
	}
	for _, p := range points {
		if l.p99(p) > limit {
			return p, true
		}
	}
	return Point{}, false
}

// growthBreak returns the first point whose p99 is at least CliffGrowth
// times the previous point's that has one, and at least CliffGrowth times
// the load ratio.
func growthBreak(points []Point, l latency) (found, before Point, ok bool) {
	var prev *Point
	for i := range points {
		p := &points[i]
		if l.p99(*p) <= 0 || p.Load <= 0 {
			continue
		}
		if prev != nil {
			r := l.p99(*p) / l.p99(*prev)
			if r >= CliffGrowth && r >= CliffGrowth*p.Load/prev.Load {
				return *p, *prev, true
			}
		}
		prev = p
	}
	return Point{}, Point{}, false
}

func cliffRule(slo engine.SLO, bySLO bool) string {
	if bySLO {
		return fmt.Sprintf("the first load level whose p99 exceeds the SLO (TTFT p99 > %s, then E2E p99 > %s; unset objectives are not checked)",
			sloText(slo.TTFT), sloText(slo.E2E))
	}
	return fmt.Sprintf("the first load level whose p99 (TTFT, then E2E) grows much faster than load: "+
		"p99_i/p99_i-1 >= %g and >= %g x L_i/L_i-1", CliffGrowth, CliffGrowth)
}

func sloText(d time.Duration) string {
	if d <= 0 {
		return "unset"
	}
	return msText(ms(d))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
