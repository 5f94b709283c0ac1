package analysis

import (
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// TagCliffRule is what the growth rule asks more of on a tag value's curve.
var TagCliffRule = "on a tag value's curve, a percentile flagged unreliable at either level counts only when the growth rule " +
	"holds between its 95% confidence intervals (lower bound at the level / upper bound at the level before)"

// TagCliffs reads the growth rule on each user tag value's curve through
// the sweep s (its scenario's stages among stages): LLM traffic mixes
// short and long prompts, and the long prompts' tail can hide the short
// ones queueing. A break read from a percentile flagged unreliable counts
// only when it is confirmed (see confirmed). Only found cliffs are
// returned, ordered by tag key and value; each Text starts with
// "key=value: ".
func TagCliffs(s Sweep, stages []metrics.StageSummary) []Finding {
	mine := scenarioStages(stages, s.Scenario)
	var out []Finding
	for _, key := range tagKeys(mine) {
		for _, value := range tagValues(mine, key) {
			f := cliff(tagSweep(s, mine, key, value), plan.SLO{}, confirmed)
			if f.Found {
				f.Tag = key + "=" + value
				f.Rule += "; " + TagCliffRule
				f.Text = f.Tag + ": " + f.Text
				out = append(out, f)
			}
		}
	}
	return out
}

// TagSweep is the curve of one tag value, "key=value" as Finding.Tag
// names it, through s (its scenario's stages among stages).
func TagSweep(s Sweep, stages []metrics.StageSummary, tag string) Sweep {
	key, value, _ := strings.Cut(tag, "=")
	return tagSweep(s, scenarioStages(stages, s.Scenario), key, value)
}

// scenarioStages are the stages of one scenario, in order: a sweep's
// points one to one.
func scenarioStages(stages []metrics.StageSummary, scenario string) []metrics.StageSummary {
	var mine []metrics.StageSummary
	for _, st := range stages {
		if st.Scenario == scenario {
			mine = append(mine, st)
		}
	}
	return mine
}

// tagSweep is the curve of one tag value: s's loads with that value's
// latencies; a stage without the value has no data at that level.
func tagSweep(s Sweep, stages []metrics.StageSummary, key, value string) Sweep {
	ts := Sweep{Scenario: s.Scenario, LoadUnit: s.LoadUnit}
	for i, st := range stages {
		p := Point{Stage: st.Stage, Load: s.Points[i].Load, Suspect: s.Points[i].Suspect}
		if t, ok := st.ByTag[key][value]; ok {
			p.TTFTP50, p.TTFTP90, p.TTFTP99, p.TTFTCount = t.TTFT.P50, t.TTFT.P90, t.TTFT.P99, t.TTFT.Count
			p.E2EP50, p.E2EP90, p.E2EP99, p.E2ECount = t.E2E.P50, t.E2E.P90, t.E2E.P99, t.E2E.Count
			p.Unreliable = slices.Concat(prefixed("ttft_", t.TTFT.Unreliable), prefixed("e2e_", t.E2E.Unreliable))
			p.CI = intervals(t.TTFT, t.E2E)
		}
		ts.Points = append(ts.Points, p)
	}
	return ts
}

// confirmed takes a break on a tag value's curve when its percentile is
// reliable at both levels, or when the growth rule still holds from the
// upper end of the earlier level's 95% confidence interval to the lower
// end of the later one's. Tag values split a stage's requests into thin
// curves and multiply the comparisons (values × percentiles × levels), so
// somewhere one slow request moving a percentile of a handful is likely
// by chance: on the 4 s sweep of testdata/r4.json short prompts' p99 went
// ×5.4 from 2 and 6 samples, five of them at 17–18 ms and one at 92 ms.
// The sweep's own curve is
// one reading and stays listed as tentative; a tag's thin break is listed
// only when no choice of which requests happened to land in its window
// would undo it. One that is confirmed is still tentative.
func confirmed(b breakAt) bool {
	m := b.pc.metric
	if !slices.Contains(b.at.Unreliable, m) && !slices.Contains(b.before.Unreliable, m) {
		return true
	}
	lo, hi := b.at.CI[m][0], b.before.CI[m][1]
	return lo > 0 && hi > 0 && grows(lo/hi, b.at.Load/b.before.Load)
}

func tagKeys(stages []metrics.StageSummary) []string {
	seen := map[string]bool{}
	for _, st := range stages {
		for k := range st.ByTag {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func tagValues(stages []metrics.StageSummary, key string) []string {
	seen := map[string]bool{}
	for _, st := range stages {
		for v := range st.ByTag[key] {
			seen[v] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
