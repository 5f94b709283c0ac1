package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
	"github.com/llmload/llmload/engine/threshold"
)

// decision is one test's outcome on a probe.
type decision int

const (
	undecided decision = iota
	passed
	failed
)

// judgeSLO decides a probe on its requests: the good share, then each
// condition; a failure decides at once, an undecided test leaves the
// probe undecided, and it passes only when every test passes.
//
// minSamples is the probe's own: the search's, or fewer at a rate so low
// that max_window cannot hold them, which the reason then says.
//
// Below minSamples a probe is only failed, and only once at least
// minFailSamples requests show the failure beyond their interval: a
// pass needs minSamples, a clear failure does not wait for them, so a
// search going down from a load that broke reaches the capacity in a
// window per probe, not max_window.
func judgeSLO(src *probeSource, rules *probeRules, load probeLoad, minSamples int) Verdict {
	if load.requests < int64(minSamples) {
		tooFew := Verdict{Why: fmt.Sprintf("too few requests to judge: %d of the %d min_samples", load.requests, minSamples)}
		if load.requests < minFailSamples {
			return tooFew
		}
		if v := judgeTests(src, rules, load, minSamples); v.Decided && !v.Pass {
			v.Why += fmt.Sprintf(" (failed before the %d min_samples: the interval is beyond the bound)", minSamples)
			return v
		}
		return tooFew
	}
	return judgeTests(src, rules, load, minSamples)
}

// minFailSamples is the fewest requests a probe fails on before it has
// min_samples.
const minFailSamples = 5

// judgeTests decides the probe's good share and conditions.
func judgeTests(src *probeSource, rules *probeRules, load probeLoad, minSamples int) Verdict {
	var parts []string
	all := passed
	add := func(d decision, text string) {
		parts = append(parts, text)
		switch {
		case d == failed:
			all = failed
		case d == undecided && all == passed:
			all = undecided
		}
	}
	if rules.GoodShare > 0 {
		d, text, err := goodShare(src, rules.GoodShare)
		if err != nil {
			return Verdict{Why: err.Error()}
		}
		add(d, text)
	}
	for _, t := range rules.conds {
		d, text, err := condition(src, t)
		if err != nil {
			return Verdict{Why: err.Error()}
		}
		add(d, text)
	}
	if len(parts) > 0 {
		parts[0] += fmt.Sprintf(" (n=%d)", load.requests)
		if minSamples < rules.MinSamples {
			parts[0] += fmt.Sprintf(" (fewer than the %d min_samples: max_window holds no more at this rate, so the interval is wider)", rules.MinSamples)
		}
	}
	return Verdict{Decided: all != undecided, Pass: all == passed, Why: strings.Join(parts, "; ")}
}

// goodShare tests the share of the probe's requests that met the SLO
// (failed ones count as not good) against want, by its Wilson score
// interval: wholly at or above passes, wholly below fails. A want of 100%
// asks that every request be good: any bad one fails, none passes.
func goodShare(src *probeSource, want float64) (decision, string, error) {
	hits, n, err := src.share("good_share")
	if err != nil {
		return undecided, "", err
	}
	lo, hi := wilson(hits, n)
	p := ratio(hits, n)
	text := fmt.Sprintf("good %.1f%% [%.1f, %.1f]", 100*p, 100*lo, 100*hi)
	bound := fmt.Sprintf("%s%%", textfmt.Load(100*want))
	switch {
	case want >= 1 && hits == n:
		return passed, text + " = " + bound, nil
	case want >= 1:
		return failed, text + " < " + bound, nil
	case lo >= want:
		return passed, text + " ≥ " + bound, nil
	case hi < want:
		return failed, text + " < " + bound, nil
	}
	return undecided, text + " straddles " + bound, nil
}

// condition tests one probe condition. A percentile is decided on its 95%
// confidence interval (an interval whose rank lies beyond the samples is
// unbounded on that side, so too few samples never pass a tail
// percentile); a rate on its Wilson interval; other aggregations (mean,
// min, max, count) on the value itself.
func condition(src *probeSource, t *threshold.Threshold) (decision, string, error) {
	c := t.Conditions[0]
	v, n, err := src.Value(t.Query(c))
	if err != nil {
		return undecided, "", fmt.Errorf("%s: %w", t.Expr, err)
	}
	if n == 0 && t.Kind != engine.MetricCounter {
		return undecided, t.Expr + ": no data yet", nil
	}
	lo, hi := v, v
	switch {
	case t.Kind == engine.MetricTrend && (c.Agg == metrics.AggP || c.Agg == metrics.AggMed):
		p := c.P
		if c.Agg == metrics.AggMed {
			p = 50
		}
		if lo, hi, _, err = src.percentileInterval(t.Metric, p); err != nil {
			return undecided, "", fmt.Errorf("%s: %w", t.Expr, err)
		}
	case t.Kind == engine.MetricRate && c.Agg == metrics.AggRate:
		lo, hi = wilson(int64(math.Round(v*float64(n))), n)
	}
	d := against(lo, hi, c)
	return d, conditionText(t, c, v, lo, hi, d), nil
}

// against decides an interval [lo, hi] against a condition's bound: the
// whole interval on the passing side passes, the whole on the other fails.
func against(lo, hi float64, c threshold.Condition) decision {
	var pass, fail bool
	switch c.Op {
	case "<":
		pass, fail = hi < c.Value, lo >= c.Value
	case "<=":
		pass, fail = hi <= c.Value, lo > c.Value
	case ">":
		pass, fail = lo > c.Value, hi <= c.Value
	case ">=":
		pass, fail = lo >= c.Value, hi < c.Value
	}
	switch {
	case pass:
		return passed
	case fail:
		return failed
	}
	return undecided
}

// conditionText is "ttft.p99 812ms [640ms, 990ms] < 1s", "... not < 1s"
// or "... undecided against < 1s".
func conditionText(t *threshold.Threshold, c threshold.Condition, v, lo, hi float64, d decision) string {
	format := func(x float64) string {
		if math.IsInf(x, 0) {
			return "?"
		}
		return threshold.FormatValue(t.Kind, c.Agg, x)
	}
	text := t.Expr + " " + format(v)
	if lo != v || hi != v {
		text += " [" + format(lo) + ", " + format(hi) + "]"
	}
	switch d {
	case passed:
		return text + " " + c.Text
	case failed:
		return text + " not " + c.Text
	}
	if math.IsInf(hi, 1) || math.IsInf(lo, -1) {
		return text + " undecided against " + c.Text + " (too few requests to bound it)"
	}
	return text + " undecided against " + c.Text
}

// wilson is the Wilson score 95% interval of a proportion of hits in n,
// which stays inside [0, 1] and keeps its coverage near 0 and 1, where
// the normal approximation fails; [0, 1] for n = 0.
func wilson(hits, n int64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	p, nf, z2 := float64(hits)/float64(n), float64(n), metrics.Z95*metrics.Z95
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := metrics.Z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(center-half, 0), min(center+half, 1)
}
