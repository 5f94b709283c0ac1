package lint

import (
	"fmt"
	"strconv"
	"strings"
)

// gateNeed is a percentile the baseline gate compares.
type gateNeed struct {
	metric string // "ttft"
	need
}

// gateNeeds are the percentile rows of the gate's metrics ("ttft.p99",
// "e2e.p90", "ttft.mean", "req_per_sec"): only percentiles of per-request
// distributions need samples beyond them.
func gateNeeds(gate []string) []gateNeed {
	var out []gateNeed
	for _, g := range gate {
		metric, agg, ok := strings.Cut(g, ".")
		if !ok || !contains(perRequest, metric) || !strings.HasPrefix(agg, "p") {
			continue
		}
		if p, err := strconv.ParseFloat(agg[1:], 64); err == nil && p > 0 && p < 100 {
			out = append(out, gateNeed{metric: metric, need: needOf(p)})
		}
	}
	return out
}

// shortfall is one stage short of what a percentile needs.
type shortfall struct {
	c      stageCount
	n      float64
	need   need
	metric string
}

// worst is the stage's largest shortfall among needs, if it has one.
func worst(c stageCount, needs []gateNeed) (shortfall, bool) {
	var w shortfall
	ratio := 1.0
	for _, g := range needs {
		n := c.samples(g.metric)
		if n <= 0 {
			continue // no such samples (embeddings have no TTFT): no row to gate
		}
		if r := float64(g.n) / n; r > ratio {
			ratio, w = r, shortfall{c: c, n: n, need: g.need, metric: g.metric}
		}
	}
	return w, ratio > 1
}

// byScenario groups each scenario's shortfalls, scenarios in the order
// their first stage comes (a run's stages of concurrent scenarios
// interleave).
func byScenario(cs []stageCount, needs []gateNeed) [][]shortfall {
	var out [][]shortfall
	at := map[string]int{}
	for _, c := range cs {
		s, short := worst(c, needs)
		if !short {
			continue
		}
		i, ok := at[c.scenario]
		if !ok {
			i = len(out)
			at[c.scenario] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	return out
}

// gateLints: the baseline gate compares each stage's percentiles with the
// baseline's; a stage with fewer samples than a compared percentile needs
// gives rows that read inconclusive, or rest on its few slowest requests.
func gateLints(gate []string, cs []stageCount, src Source) []Lint {
	needs := gateNeeds(gate)
	if len(needs) == 0 {
		return nil
	}
	var ls []Lint
	for _, group := range byScenario(cs, needs) {
		sev := Warning
		if blindly(counts(group)) {
			sev = Info
		}
		ls = append(ls, Lint{ID: ShortStage, Severity: sev, Scenario: group[0].c.scenario, Source: src,
			Message: fmt.Sprintf("the baseline gate (--baseline) compares %s stage by stage, and %s: those rows will "+
				"read inconclusive, or rest on the stage's few slowest requests%s",
				strings.Join(gate, ", "), shortList(group, src, true), assumption(counts(group))),
			Fix: lengthenEach(group) + " (or gate with --metrics on percentiles the stages reach)"})
	}
	return ls
}

// summaryLints: the summary prints p50, p90, p95 and p99 of every stage
// and marks those from too few samples; a stage short of a p99's samples
// is told, at info level, since the summary gates nothing.
func summaryLints(cs []stageCount, src Source) []Lint {
	needs := []gateNeed{{metric: "e2e", need: needOf(99)}}
	var ls []Lint
	for _, group := range byScenario(cs, needs) {
		ls = append(ls, Lint{ID: ShortStage, Severity: Info, Scenario: group[0].c.scenario, Source: src,
			Message: fmt.Sprintf("%s: the summary marks such p99s not reliable (*), as it does a p95 below 200 "+
				"requests, a p90 below 100 and a p50 below 20; 30 s and 5 min of the same load can differ 2× at the tail%s",
				shortList(group, src, false), assumption(counts(group))),
			Fix: lengthenEach(group) + " for a p99 to act on"})
	}
	return ls
}

func counts(group []shortfall) []stageCount {
	out := make([]stageCount, len(group))
	for i, s := range group {
		out[i] = s.c
	}
	return out
}

// shortList says which stages fall short, with their counts: "stage c1
// expects ≈ 11 requests, fewer than the 1,000 a p99 of ttft needs" or
// "stages c1 ≈ 11, c4 ≈ 44 expect fewer requests than ..."; metric names
// the distribution when it matters (the gate compares several).
func shortList(group []shortfall, src Source, metric bool) string {
	verb, verbs := "expects", "expect"
	if src == FromRun {
		verb, verbs = "measured", "measured"
	}
	first := group[0]
	of := ""
	if metric {
		of = " of " + first.metric
	}
	if len(group) == 1 {
		return fmt.Sprintf("stage %s %s ≈ %s, fewer than the %s a %s%s needs", first.c.stage, verb, count(first.n),
			thousands(first.need.n), first.need.name, of)
	}
	parts := make([]string, len(group))
	for i, s := range group {
		parts[i] = fmt.Sprintf("%s ≈ %s", s.c.stage, thousands(int64(s.n+0.5)))
		if s.n < 0.5 {
			parts[i] = s.c.stage + " < 1"
		}
	}
	return fmt.Sprintf("stages %s %s fewer requests than the %s a %s%s needs", strings.Join(parts, ", "), verbs,
		thousands(first.need.n), first.need.name, of)
}

// lengthenEach says what each short stage would need.
func lengthenEach(group []shortfall) string {
	parts := make([]string, len(group))
	for i, s := range group {
		parts[i] = s.c.stage + " " + s.c.suffices(float64(s.need.n)/s.n)
	}
	return "lengthen " + plural(len(group), "the stage", "the stages") + " to " + strings.Join(parts, ", ")
}
