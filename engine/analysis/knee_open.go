package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Thresholds of the open-model knee rule, on how a level's arrivals were
// delivered.
const (
	// TrackShare is the share of the offered rate below which the achieved
	// rate stopped tracking it, when Poisson noise does not explain the
	// shortfall.
	TrackShare = 0.95
	// DropShare is the share of due iterations beyond which the drops
	// say every VU was busy for much of the window, not at one burst.
	DropShare = 0.05
)

// OpenKneeRule states the open-model knee rule in words.
var OpenKneeRule = fmt.Sprintf("open model: the last rate before the first level whose load was not delivered as offered: "+
	"more than %.0f%% of due iterations dropped (every VU busy), the achieved rate below %.0f%% of the offered by more "+
	"than 3 standard deviations of a Poisson count, or schedule lag p99 > %g ms (llmload behind its schedule); "+
	"the first level when it already was not; drops while E2E held within x%g of the first level's, and lag, make the knee suspect "+
	"(max_vus or llmload, not the server)", 100*DropShare, 100*TrackShare, LagSuspectMS, CliffGrowth)

// OpenKnee finds the knee of an open-model sweep: the last level before
// the first whose arrivals were not delivered as offered (see shortfall).
// In an open model the achieved rate tracks the offered while VUs are
// free, whether the server keeps up or queues, so a server past its
// capacity shows in latency (the cliff); here it shows only once its slow
// answers hold every VU. A knee that may be the load generator's — drops
// while latency held (max_vus too low), or schedule lag — says so in
// Suspect.
func OpenKnee(s Sweep) Finding {
	f := Finding{Kind: KindKnee, Scenario: s.Scenario, LoadUnit: s.LoadUnit, Metric: "req/s", Rule: OpenKneeRule}
	for i, p := range s.Points {
		sh := shortfallOf(p)
		if !sh.any() {
			continue
		}
		if i == 0 {
			return behindFromFirst(f, p, sh)
		}
		k := s.Points[i-1]
		f.Found, f.Stage, f.Load, f.Value = true, k.Stage, k.Load, k.Achieved
		cause, suspect := sh.cause(s.Points[0], p)
		f.Text = fmt.Sprintf("throughput knee at %s: %s: %s", loadText(k.Load, s.LoadUnit), deliveredText(p), cause)
		f.Suspect = joinNonEmpty("; ", suspectOf(k, p), suspect)
		return f
	}
	f.Text = "no throughput knee within the sweep (the achieved rate kept up with the offered at every level; " +
		"in an open model an overloaded server shows as queueing, which the cliff reads)"
	return f
}

// behindFromFirst is the knee of a sweep whose first level already fell
// behind: nothing was delivered as offered.
func behindFromFirst(f Finding, p Point, sh shortfall) Finding {
	f.Found, f.Stage, f.Load, f.Value = true, p.Stage, p.Load, p.Achieved
	cause, _ := sh.cause(p, p)
	lead, advice := "the offered rate not delivered from the first level", ""
	if sh.drops {
		lead, advice = "arrivals dropped from the first level", " (start the sweep lower, or raise max_vus)"
		// Without a level that kept up, nothing tells whether the server's
		// slowness or too few VUs held every VU.
		f.Suspect = p.Stage + ": iterations dropped from the first level, so the sweep cannot tell max_vus from the server" + vusNeeded(p)
	}
	f.Text = fmt.Sprintf("%s: %s: %s%s", lead, deliveredText(p), cause, advice)
	f.Suspect = joinNonEmpty("; ", suspectOf(p), f.Suspect)
	return f
}

// shortfall says how a level's arrivals fell short of the offered rate.
type shortfall struct {
	drops, short, lag bool
}

func (s shortfall) any() bool { return s.drops || s.short || s.lag }

// shortfallOf reads p's delivery: its share of dropped iterations, its
// achieved rate against the offered (beyond 3 σ of a Poisson count over
// the window, so that a low rate's random arrivals are no shortfall; the
// same test as the report's warning), and its schedule lag.
func shortfallOf(p Point) shortfall {
	due := p.Achieved*p.WindowS + float64(p.Dropped)
	expected := p.Load * p.WindowS
	return shortfall{
		drops: p.Dropped > 0 && float64(p.Dropped) > DropShare*due,
		short: p.Achieved < TrackShare*p.Load && expected-p.Achieved*p.WindowS > 3*math.Sqrt(expected),
		lag:   p.LagP99 > LagSuspectMS,
	}
}

// cause names what fell short at p, with first the sweep's first level to
// compare its latency with, and why that may be the load generator's.
func (s shortfall) cause(first, p Point) (text, suspect string) {
	var parts []string
	if s.drops {
		d, why := dropCause(first, p)
		parts, suspect = append(parts, strconv.FormatInt(p.Dropped, 10)+" iterations dropped with every VU busy"+d), why
	}
	if s.lag {
		parts = append(parts, "llmload fell behind its schedule (schedule lag p99 "+msText(p.LagP99)+")")
	}
	if len(parts) == 0 {
		parts = append(parts, "fewer iterations started than the arrival schedule offered")
	}
	return strings.Join(parts, "; "), suspect
}

// dropCause tells whose the drops at p are by its E2E against the first
// level's: a server that fell behind holds every VU longer; with latency
// unchanged the VUs ran out first, and max_vus capped the rate.
func dropCause(first, p Point) (text, suspect string) {
	if first.Stage == p.Stage || first.E2EP50 <= 0 || p.E2EP50 <= 0 {
		return "", ""
	}
	change := "(E2E p50 " + msText(first.E2EP50) + " → " + msText(p.E2EP50) + ")"
	if p.E2EP50 >= CliffGrowth*first.E2EP50 {
		return ", as the server fell behind " + change, ""
	}
	return ", while E2E held (p50 " + msText(first.E2EP50) + " → " + msText(p.E2EP50) + ")",
		p.Stage + ": iterations dropped while E2E held: every VU was busy with requests no slower than at the first level, " +
			"so max_vus capped the rate, not the server" + vusNeeded(p)
}

// vusNeeded is the VUs p's rate needs by Little's law, offered rate ×
// mean E2E, as " (this rate needs ≈ N VUs: ...)"; "" without a mean.
func vusNeeded(p Point) string {
	if p.E2EMean <= 0 {
		return ""
	}
	return fmt.Sprintf(" (this rate needs ≈ %.0f VUs: %s × mean E2E %s)", p.Load*p.E2EMean/1000, loadText(p.Load, UnitReqRate), msText(p.E2EMean))
}

// deliveredText is "at 50 req/s achieved 38.2 req/s of 50 offered (76%)".
func deliveredText(p Point) string {
	return fmt.Sprintf("at %s achieved %s req/s of %s offered (%.0f%%)", loadText(p.Load, UnitReqRate),
		strconv.FormatFloat(p.Achieved, 'g', 3, 64), strconv.FormatFloat(p.Load, 'g', 4, 64), 100*p.Achieved/p.Load)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
