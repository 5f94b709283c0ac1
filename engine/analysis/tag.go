package analysis

import (
	"maps"
	"slices"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// TagCliffs reads the growth rule on each user tag value's curve through
// the sweep s (its scenario's stages among stages): LLM traffic mixes
// short and long prompts, and the long prompts' tail can hide the short
// ones queueing. Only found cliffs are returned, ordered by tag key and
// value; each Text starts with "key=value: ".
func TagCliffs(s Sweep, stages []metrics.StageSummary) []Finding {
	var mine []metrics.StageSummary
	for _, st := range stages {
		if st.Scenario == s.Scenario {
			mine = append(mine, st)
		}
	}
	var out []Finding
	for _, key := range tagKeys(mine) {
		for _, value := range tagValues(mine, key) {
			f := Cliff(tagSweep(s, mine, key, value), engine.SLO{})
			if f.Found {
				f.Tag = key + "=" + value
				f.Text = f.Tag + ": " + f.Text
				out = append(out, f)
			}
		}
	}
	return out
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
		}
		ts.Points = append(ts.Points, p)
	}
	return ts
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
