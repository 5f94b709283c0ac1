package lint

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
)

// What a closed model's requests are assumed to take before a run has
// measured them: E2E = AssumedTTFT + AssumedTPOT × max_tokens
// (AssumedOutputTokens where a request sets none), plus the think time a
// dry run of the iterations asked for. A mid-sized model on a GPU streams
// 30–100 tokens a second; the assumption errs slow, so the estimate of
// requests errs low. The run's own figures judge again at its end.
const (
	AssumedTTFT         = 200 * time.Millisecond
	AssumedTPOT         = 20 * time.Millisecond
	AssumedOutputTokens = 256
)

// perRequest are the distributions with one value per successful request;
// perIteration those with one per open-model iteration (its first request).
// Per-token distributions (itl, itl_token) have many values a request and
// custom trends any number: the stage rule leaves them alone.
var (
	perRequest   = []string{"ttft", "ttfc", "tpot", "e2e", "ttfb", "connect"}
	perIteration = []string{"ttft_sched", "e2e_sched", "schedule_lag"}
)

// estimate is what the plan leads one stage to expect.
type estimate struct {
	sc    *plan.Scenario
	stage string
	// requests and iterations expected in the stage
	requests, iterations float64
	// assumed explains a closed model's estimate ("" otherwise).
	assumed string
	// blind marks a closed model's estimate made without a dry run (a
	// run's start): nothing says what its requests ask for, so it only
	// informs, and the run's end judges from what it measured.
	blind bool
}

// estimates are every measured stage's expectations, in plan order.
func estimates(in Input) []estimate {
	var out []estimate
	for i := range in.Plan.Scenarios {
		sc := &in.Plan.Scenarios[i]
		if !measured(*sc) {
			continue
		}
		out = append(out, scenarioEstimates(sc, profileOf(in.Profiles, sc.Name), total(scenarioTallies(in.Sampled, sc.Name)))...)
	}
	return out
}

func scenarioEstimates(sc *plan.Scenario, p *Profile, t Tally) []estimate {
	r := 1.0 // requests per iteration, when no dry run says
	if p != nil && p.Iterations > 0 && p.Requests > 0 {
		r = float64(p.Requests) / float64(p.Iterations)
	}
	var out []estimate
	loads := sc.StageLoads()
	for i, st := range sc.Stages {
		e := estimate{sc: sc, stage: st.Name}
		switch {
		case sc.Trace != nil:
			e.iterations = float64(len(sc.Trace.Arrivals))
		case sc.Executor == plan.ExecutorSharedIterations:
			e.iterations = float64(sc.Iterations)
		case sc.Executor == plan.ExecutorPerVUIterations:
			e.iterations = float64(sc.VUs * sc.Iterations)
		case plan.OpenModel(sc.Executor):
			e.iterations = loads[i].Integral()
		default:
			per, why := iterationTime(p, t, r)
			e.iterations = loads[i].Integral() / per.Seconds()
			e.assumed, e.blind = why, p == nil
		}
		e.requests = e.iterations * r
		out = append(out, e)
	}
	return out
}

// iterationTime is how long a closed-model iteration is assumed to take:
// its requests at the assumed E2E, then its think time, or its pace when
// constant_pacing holds it longer; why says so.
func iterationTime(p *Profile, t Tally, r float64) (time.Duration, string) {
	tokens := float64(AssumedOutputTokens)
	if t.Requests > 0 {
		tokens = (float64(t.MaxTokens) + float64(t.NoMaxTokens*AssumedOutputTokens)) / float64(t.Requests)
	}
	gen := 1.0 // share of requests that generate text (not embeddings)
	if p != nil && p.Requests > 0 {
		gen = min(1, float64(t.Requests)/float64(p.Requests))
	}
	e2e := AssumedTTFT + time.Duration(gen*tokens*float64(AssumedTPOT))
	think := time.Duration(0)
	if p != nil && p.Iterations > 0 {
		think = p.Think / time.Duration(p.Iterations)
	}
	per := time.Duration(r*float64(e2e)) + think
	why := fmt.Sprintf("closed model, assuming E2E ≈ %s a request — %s to the first token", approx(e2e), AssumedTTFT)
	if gen*tokens >= 0.5 {
		why += fmt.Sprintf(", then %s for each of %.0f tokens", AssumedTPOT, gen*tokens)
	}
	if think > 0 {
		why += fmt.Sprintf(" — and %s of think time an iteration", approx(think))
	}
	if p != nil && p.Pace > per {
		per = p.Pace
		why = fmt.Sprintf("closed model, one iteration every %s (constant_pacing)", approx(p.Pace))
	}
	return max(per, time.Millisecond), why + "; the run's end judges again from what it measured"
}

// approx is a duration as a message states a figure: two significant
// digits ("1.2s", "840ms", "13s").
func approx(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= 100*time.Millisecond:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// stageCount is one stage's samples: expected from the plan, or measured.
type stageCount struct {
	scenario, stage string
	// samples is how many values of a distribution the stage has.
	samples func(metric string) float64
	// suffices says what the stage would need to have factor times the
	// samples: a length, iterations, or records.
	suffices func(factor float64) string
	// desc describes the stage's load for a message (", 2 req/s for 10s").
	desc string
	// assumed explains a closed model's estimate ("" otherwise).
	assumed string
	blind   bool // see estimate.blind
}

// planCounts turns the plan's estimates into stage counts.
func planCounts(es []estimate) []stageCount {
	out := make([]stageCount, len(es))
	for i, e := range es {
		out[i] = stageCount{scenario: e.sc.Name, stage: e.stage, desc: load(e), assumed: e.assumed, blind: e.blind,
			samples: func(metric string) float64 {
				switch {
				case contains(perIteration, metric) && plan.OpenModel(e.sc.Executor):
					return e.iterations
				case contains(perRequest, metric):
					return e.requests
				}
				return 0
			},
			suffices: func(f float64) string { return suffices(e.sc, e.iterations, stageDuration(e.sc, e.stage), f) }}
	}
	return out
}

// runCounts are the measured stages of the plan's measured scenarios.
func runCounts(in Input) []stageCount {
	var out []stageCount
	for i := range in.Run.Stages {
		s := &in.Run.Stages[i]
		sc := scenarioOf(in.Plan, s.Scenario)
		if sc == nil || !measured(*sc) {
			continue
		}
		window := time.Duration(cmpOr(s.PlannedS, s.DurationS) * float64(time.Second))
		out = append(out, stageCount{scenario: s.Scenario, stage: s.Stage,
			desc:     fmt.Sprintf(", %s in %s", count(float64(s.E2E.Count)), approx(window)),
			samples:  func(metric string) float64 { return float64(distOf(s, metric).Count) },
			suffices: func(f float64) string { return suffices(sc, float64(s.Iterations), window, f) }})
	}
	return out
}

func cmpOr(a, b float64) float64 {
	if a > 0 {
		return a
	}
	return b
}

func scenarioOf(p plan.Plan, name string) *plan.Scenario {
	for i := range p.Scenarios {
		if p.Scenarios[i].Name == name {
			return &p.Scenarios[i]
		}
	}
	return nil
}

// distOf is a stage's distribution of a built-in metric.
func distOf(s *metrics.StageSummary, metric string) metrics.Dist {
	switch metric {
	case "ttft":
		return s.TTFT
	case "ttfc":
		return s.TTFC
	case "tpot":
		return s.TPOT
	case "e2e":
		return s.E2E
	case "ttfb":
		return s.TTFB
	case "connect":
		return s.Connect
	case "ttft_sched":
		return s.TTFTSched
	case "e2e_sched":
		return s.E2ESched
	case "schedule_lag":
		return s.ScheduleLag
	}
	return metrics.Dist{}
}

func stageDuration(sc *plan.Scenario, stage string) time.Duration {
	for _, st := range sc.Stages {
		if st.Name == stage {
			return st.Duration
		}
	}
	return 0
}

// shortStagesPlan judges the stage lengths from the plan's estimates.
func shortStagesPlan(in Input) []Lint {
	cs := planCounts(estimates(in))
	var ls []Lint
	for _, t := range in.Thresholds {
		es, narrower := matching(t.Filter, cs)
		for _, c := range t.Conditions {
			if nd, ok := conditionNeed(t, c); ok && len(es) > 0 {
				ls = append(ls, thresholdLint(t, c, nd, sum(es, t.Metric), es, narrower, FromPlan)...)
			}
		}
	}
	ls = append(ls, gateLints(in.Gate, cs, FromPlan)...)
	return append(ls, summaryLints(cs, FromPlan)...)
}

// shortStagesRun judges the stage lengths from what the run measured:
// the samples each threshold judged, and each stage's counts.
func shortStagesRun(in Input) []Lint {
	cs := runCounts(in)
	var ls []Lint
	for i, t := range in.Thresholds {
		if i >= len(in.Run.Thresholds) || in.Run.Thresholds[i].Expr != t.Expr {
			break // not this plan's verdicts
		}
		es, narrower := matching(t.Filter, cs)
		for j, c := range t.Conditions {
			outs := in.Run.Thresholds[i].Outcomes
			if nd, ok := conditionNeed(t, c); ok && j < len(outs) && outs[j].Samples > 0 {
				ls = append(ls, thresholdLint(t, c, nd, float64(outs[j].Samples), es, narrower, FromRun)...)
			}
		}
	}
	ls = append(ls, gateLints(in.Gate, cs, FromRun)...)
	return append(ls, summaryLints(cs, FromRun)...)
}

func sum(cs []stageCount, metric string) float64 {
	n := 0.0
	for _, c := range cs {
		n += c.samples(metric)
	}
	return n
}

// need is one percentile and the samples it needs.
type need struct {
	name string // "p99"
	n    int64
}

func needOf(p float64) need {
	return need{name: "p" + strconv.FormatFloat(p, 'f', -1, 64), n: metrics.MinReliable(p)}
}

// conditionNeed is the percentile a threshold condition reads, if it
// reads one of a distribution the stage rule counts.
func conditionNeed(t *threshold.Threshold, c threshold.Condition) (need, bool) {
	if t.Kind != engine.MetricTrend || !(contains(perRequest, t.Metric) || contains(perIteration, t.Metric)) {
		return need{}, false
	}
	switch c.Agg {
	case metrics.AggMed:
		return needOf(50), true
	case metrics.AggP:
		return needOf(c.P), true
	}
	return need{}, false
}

// matching are the stages a threshold's filter selects, and whether a tag
// filter beyond scenario and stage narrows them further (so their count
// is an upper bound).
func matching(f metrics.Filter, cs []stageCount) (out []stageCount, narrower bool) {
	for k := range f {
		narrower = narrower || k != "scenario" && k != "stage"
	}
	for _, c := range cs {
		if (f["scenario"] == "" || f["scenario"] == c.scenario) && (f["stage"] == "" || f["stage"] == c.stage) {
			out = append(out, c)
		}
	}
	return out, narrower
}

func thresholdLint(t *threshold.Threshold, c threshold.Condition, nd need, n float64, cs []stageCount,
	narrower bool, src Source) []Lint {
	if n <= 0 || n >= float64(nd.n) {
		return nil
	}
	scen, stage := locate(cs)
	verb, qual := "judges", about(narrower)
	if src == FromRun {
		verb, qual = "judged", ""
	}
	sev := Warning
	if blindly(cs) {
		sev = Info
	}
	return []Lint{{ID: ShortStage, Severity: sev, Scenario: scen, Stage: stage, Source: src,
		Message: fmt.Sprintf("threshold %s %s %s the %s of %s%s%s; a %s needs %s (ten values beyond it), so it gates on noise%s",
			t.Expr, c.Text, verb, nd.name, qual, count(n), stageList(cs), nd.name, thousands(nd.n), assumption(cs)),
		Fix: lengthen(cs, nd, n)}}
}

// about qualifies an expected count: "at most ≈" when a tag filter takes
// only part of the stages' requests.
func about(narrower bool) string {
	if narrower {
		return "at most ≈ "
	}
	return "≈ "
}

// locate names the one scenario (and stage) the counts belong to, if
// they belong to one.
func locate(cs []stageCount) (scenario, stage string) {
	if len(cs) == 0 {
		return "", ""
	}
	scenario = cs[0].scenario
	for _, c := range cs {
		if c.scenario != scenario {
			return "", ""
		}
	}
	if len(cs) == 1 {
		stage = cs[0].stage
	}
	return scenario, stage
}

// count is a sample count as a message says it.
func count(n float64) string {
	v := int64(math.Round(n))
	switch {
	case n > 0 && n < 0.5:
		return "less than 1 request"
	case v == 1:
		return "1 request"
	}
	return thousands(v) + " requests"
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// stageList says which stages a count covers: " (stage r2, 2 req/s for
// 10s)" or " (stages c1, c4)".
func stageList(cs []stageCount) string {
	if len(cs) == 1 {
		return " (stage " + cs[0].stage + cs[0].desc + ")"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.stage
	}
	return " (stages " + strings.Join(names, ", ") + ")"
}

// load describes a stage's load for a message.
func load(e estimate) string {
	sc := e.sc
	var st plan.Stage
	for _, s := range sc.Stages {
		if s.Name == e.stage {
			st = s
		}
	}
	switch {
	case sc.Trace != nil:
		return fmt.Sprintf(", %d records", len(sc.Trace.Arrivals))
	case sc.Executor == plan.ExecutorSharedIterations || sc.Executor == plan.ExecutorPerVUIterations:
		return fmt.Sprintf(", %.0f iterations", e.iterations)
	case plan.OpenModel(sc.Executor):
		return fmt.Sprintf(", %g req/s for %s", sc.RatePerSecond(st.Rate), plan.FormatDuration(st.Duration))
	}
	return fmt.Sprintf(", %s for %s", plural(st.Target, "1 VU", fmt.Sprintf("%d VUs", st.Target)), plan.FormatDuration(st.Duration))
}

// blindly reports whether a count rests on a closed model's estimate made
// without a dry run: too weak to warn on before the run has measured.
func blindly(cs []stageCount) bool {
	for _, c := range cs {
		if c.blind {
			return true
		}
	}
	return false
}

// assumption is a closed model's stated assumption, once.
func assumption(cs []stageCount) string {
	for _, c := range cs {
		if c.assumed != "" {
			return " (" + c.assumed + ")"
		}
	}
	return ""
}

// lengthen says what would give the stages nd's samples from the n they
// have: each stage grown by the same factor.
func lengthen(cs []stageCount, nd need, n float64) string {
	factor := float64(nd.n) / n
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.stage + " " + c.suffices(factor)
	}
	s := "lengthen " + plural(len(cs), "the stage", "the stages") + " to " + strings.Join(parts, ", ")
	if lower := reachable(n); lower != "" {
		s += ", or gate on a percentile " + plural(len(cs), "it reaches", "they reach") + " (" + lower + ")"
	}
	return s
}

// suffices is what a stage of sc needs to grow by factor: its length (d,
// its window), or its iterations, or the trace's records.
func suffices(sc *plan.Scenario, iterations float64, d time.Duration, factor float64) string {
	switch {
	case sc.Trace != nil:
		return "≈ " + thousands(int64(math.Ceil(iterations*factor))) + " records (a larger limit, or more of the trace)"
	case sc.Executor == plan.ExecutorSharedIterations || sc.Executor == plan.ExecutorPerVUIterations:
		return "≈ " + thousands(int64(math.Ceil(iterations*factor))) + " iterations"
	}
	return "≈ " + roundDuration(time.Duration(float64(d)*factor))
}

// reachable names the highest of the summary's percentiles n samples
// support, "" when none.
func reachable(n float64) string {
	best := ""
	for _, p := range metrics.SummaryPercentiles {
		if nd := needOf(p); float64(nd.n) <= n {
			best = fmt.Sprintf("a %s needs %s", nd.name, thousands(nd.n))
		}
	}
	return best
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// roundDuration rounds a suggested length up to what a user would type:
// whole seconds below a minute, 10 s below ten minutes, minutes beyond.
func roundDuration(d time.Duration) string {
	step := time.Second
	switch {
	case d >= 10*time.Minute:
		step = time.Minute
	case d >= time.Minute:
		step = 10 * time.Second
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return plan.FormatDuration((d + step - 1).Truncate(step))
}
