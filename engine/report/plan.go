package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// Plan renders what a run would do, for 'llmload check': per scenario its
// executor, a timeline of stages, its duration and the expected request
// count (a trace scenario also what it replays, a capacity scenario its
// search), then the thresholds. thresholds are rendered as given; traces
// describe the trace scenarios' records (luabind's Script.Traces), and
// may be nil, which prints what the plan alone says of them.
func Plan(p plan.Plan, thresholds []string, traces []result.Trace) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		writePlanHeader(&b, p)
		for _, sc := range p.Scenarios {
			writeScenarioPlan(&b, p, sc, traces)
		}
		writePlanThresholds(&b, thresholds)
		b.WriteString("\n" + totalLine(p) + "\n")
		_, err := w.Write(b.Bytes())
		return err
	}
}

func writePlanHeader(b *bytes.Buffer, p plan.Plan) {
	target := "built-in simulator (no base_url set)"
	if p.Target.BaseURL != "" {
		target = redact.URL(p.Target.BaseURL)
	}
	model := p.Target.Model
	if model == "" {
		model = "(the server's first model)"
	}
	fmt.Fprintf(b, "script  %s\n", p.Script)
	if len(p.Targets) == 0 {
		fmt.Fprintf(b, "target  %s, model %s\n", target, model)
	}
	for i, t := range p.Targets {
		head := "        "
		if i == 0 {
			head = "targets "
		}
		url := "built-in simulator (no base_url set)"
		if t.BaseURL != "" {
			url = redact.URL(t.BaseURL)
		}
		fmt.Fprintf(b, "%s%s: %s, model %s, weight %s\n", head, t.Name, url, cmp.Or(t.Model, "(the server's first model)"),
			textfmt.Load(t.Weight))
		writeTargetSettings(b, t)
		if i == len(p.Targets)-1 {
			fmt.Fprintf(b, "        spread %s\n", cmp.Or(p.Balance, plan.BalanceRoundRobin))
		}
	}
	if len(p.Targets) == 0 {
		writeTargetSettings(b, p.Target)
	}
	fmt.Fprintf(b, "seed    %d\n", p.Seed)
	if p.Warmup.Requests > 0 {
		fmt.Fprintf(b, "warmup  %s, excluded from all statistics\n", textfmt.Count(int64(p.Warmup.Requests), "request", "requests"))
	} else if p.Warmup.Duration > 0 {
		fmt.Fprintf(b, "warmup  %s, excluded from all statistics\n", plan.FormatDuration(p.Warmup.Duration))
	}
}

func warmupNote(w plan.Warmup) string {
	if w.Duration > 0 {
		return " after a " + plan.FormatDuration(w.Duration) + " warmup"
	}
	return ""
}

// planDuration is the end of the last scenario, without graceful stops.
func planDuration(p plan.Plan) time.Duration {
	var end time.Duration
	for _, sc := range p.Scenarios {
		end = max(end, sc.StartTime+sc.Duration())
	}
	return end
}

func writeScenarioPlan(b *bytes.Buffer, p plan.Plan, sc plan.Scenario, traces []result.Trace) {
	fmt.Fprintf(b, "\nscenario %s: %s, exec %s()", sc.Name, sc.Executor, sc.Exec)
	if sc.StartTime > 0 {
		fmt.Fprintf(b, ", starts at %s", plan.FormatDuration(sc.StartTime))
	}
	switch {
	case sc.Trace != nil:
		fmt.Fprintf(b, ", arrivals at the records' times, %d pre-allocated VUs (max %d)", sc.PreAllocatedVUs, sc.MaxVUs())
	case plan.OpenModel(sc.Executor) || sc.Capacity != nil && sc.Capacity.Load == plan.CapacityRate:
		fmt.Fprintf(b, ", %s arrivals, %d pre-allocated VUs (max %d)", arrivalName(sc), sc.PreAllocatedVUs, sc.MaxVUs())
	}
	if len(sc.Tags) > 0 {
		fmt.Fprintf(b, ", tags %s", fmtTags(sc.Tags))
	}
	b.WriteString("\n")
	if sc.Capacity != nil {
		// Its stages are made as it runs: the search is the plan.
		writeSearchPlan(b, sc, result.SLOFrom(p.SLO))
		return
	}
	if sc.Trace != nil {
		writeTracePlan(b, planTrace(sc, traces))
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  stage\tstarts\tduration\tload")
	at := sc.StartTime
	loads := sc.StageLoads()
	for i, st := range sc.Stages {
		dur := plan.FormatDuration(st.Duration)
		if sc.Trace.Stretches() {
			dur = "≥ " + dur // until the last child has run
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", st.Name, plan.FormatDuration(at), dur, stageLoad(sc, st, loads[i]))
		at += st.Duration
	}
	tw.Flush()
	fmt.Fprintf(b, "  %s; graceful stop %s\n", expected(sc), plan.FormatDuration(sc.GracefulStop))
}

func arrivalName(sc plan.Scenario) string {
	if sc.Arrival == plan.ArrivalGamma {
		return fmt.Sprintf("gamma (burstiness %g)", sc.Burstiness)
	}
	if sc.Arrival == "" {
		return plan.ArrivalPoisson
	}
	return sc.Arrival
}

// stageLoad describes a stage's load (l, from engine.StageLoads): VUs or a
// rate, ramped or stepped.
func stageLoad(sc plan.Scenario, st plan.Stage, l plan.StageLoad) string {
	level := func(v float64) string {
		if plan.OpenModel(sc.Executor) {
			return fmt.Sprintf("%g req/s", v)
		}
		if v == 1 {
			return "1 VU"
		}
		return fmt.Sprintf("%g VUs", v)
	}
	switch sc.Executor {
	case plan.ExecutorTrace:
		if sc.Trace != nil {
			return fmt.Sprintf("%s, %s req/s mean", textfmt.Count(int64(len(sc.Trace.Arrivals)), "record", "records"), textfmt.Load(l.To))
		}
	case plan.ExecutorSharedIterations:
		return fmt.Sprintf("%s %s %s (at most %s)", textfmt.Count(int64(sc.VUs), "VU", "VUs"), textfmt.Plural(int64(sc.VUs), "runs", "share"),
			textfmt.Count(int64(sc.Iterations), "iteration", "iterations"), plan.FormatDuration(st.Duration))
	case plan.ExecutorPerVUIterations:
		return fmt.Sprintf("%s × %s (at most %s)", textfmt.Count(int64(sc.VUs), "VU", "VUs"), textfmt.Count(int64(sc.Iterations), "iteration", "iterations"), plan.FormatDuration(st.Duration))
	}
	if l.Ramp == 0 {
		return level(l.To)
	}
	s := fmt.Sprintf("%s → %s over %s", level(l.From), level(l.To), plan.FormatDuration(l.Ramp))
	if st.Ramp > l.Ramp {
		s += fmt.Sprintf(", the stage's end cutting a %s ramp", plan.FormatDuration(st.Ramp))
	}
	if l.Hold > 0 {
		s += ", then hold"
	}
	return s
}

// expected says how many iterations the scenario will run.
func expected(sc plan.Scenario) string {
	switch {
	case sc.Trace.Stretches():
		return "expected " + textfmt.Count(int64(len(sc.Trace.Arrivals)), "iteration", "iterations") +
			", one per record; the stage lasts until the last has run (a child starts at its parent's answer plus its gap)"
	case sc.Trace != nil:
		return "expected " + textfmt.Count(int64(len(sc.Trace.Arrivals)), "iteration", "iterations") + ", one per record"
	case plan.OpenModel(sc.Executor):
		return fmt.Sprintf("expected ≈ %.0f iterations (∫ rate dt)", expectedArrivals(sc))
	case sc.Executor == plan.ExecutorSharedIterations:
		return "expected " + textfmt.Count(int64(sc.Iterations), "iteration", "iterations")
	case sc.Executor == plan.ExecutorPerVUIterations:
		return "expected " + textfmt.Count(int64(sc.VUs*sc.Iterations), "iteration", "iterations")
	}
	return "closed model: the iteration count depends on response times"
}

// expectedArrivals is ∫ rate dt over the stages, rounded.
func expectedArrivals(sc plan.Scenario) float64 {
	return math.Round(sc.ExpectedArrivals())
}

func writePlanThresholds(b *bytes.Buffer, thresholds []string) {
	if len(thresholds) == 0 {
		return
	}
	b.WriteString("\nthresholds (a failed one exits 99)\n")
	for _, t := range thresholds {
		fmt.Fprintf(b, "  %s\n", t)
	}
}

func fmtTags(tags map[string]string) string {
	keys := sortedKeys(tags)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + tags[k]
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// planTrace is what the plan printer says of a trace scenario's replay:
// the Trace of traces for it, or what the plan alone knows.
func planTrace(sc plan.Scenario, traces []result.Trace) *result.Trace {
	for i := range traces {
		if traces[i].Scenario == sc.Name {
			return &traces[i]
		}
	}
	tr := sc.Trace
	return &result.Trace{Scenario: sc.Name, Source: tr.Source, Digest: tr.Digest, Speedup: tr.Speedup,
		TimeOffsetS: tr.TimeOffset.Seconds(), Limit: tr.Limit, Records: len(tr.Arrivals),
		SpanS: tr.Duration().Seconds() * tr.Speedup, DurationS: tr.Duration().Seconds(),
		Sessions: tr.Sessions, Conversations: tr.Sessions > 0, Children: tr.Children, WarmTurns: tr.WarmTurns}
}

// planIndent aligns a scenario's trace and search lines under their text.
const planIndent = "          "

// writeTracePlan says what a trace scenario replays: the records, the
// slice and pace, their lengths, sessions, blocks and prefix reuse.
func writeTracePlan(b *bytes.Buffer, t *result.Trace) {
	fmt.Fprintf(b, "  trace   %s\n", traceHeadline(t))
	if s := sliceLine(t); s != "" {
		b.WriteString(planIndent + s + "\n")
	}
	writeTraceLengths(b, t, planIndent)
	lines := traceLines(t)
	if described(t) {
		lines = append(lines, "prefix reuse: "+traceReuse(t))
	}
	for _, line := range lines {
		b.WriteString(wrap(line, planIndent, planIndent+"  ", maxWidth))
	}
}

// writeSearchPlan says how a capacity scenario searches: the loads it
// brackets and bisects, how each probe is measured and what it must meet,
// and about how many probes that takes.
func writeSearchPlan(b *bytes.Buffer, sc plan.Scenario, slo *result.SLO) {
	c := sc.Capacity
	unit := result.CapacityUnit(c.Load)
	fmt.Fprintf(b, "  search  %s, %s → %s %s ×%s, then bisect to a precision of %s%%\n", c.Load, textfmt.Load(c.Start),
		textfmt.Load(c.Max), unit, textfmt.Load(c.Growth), textfmt.Load(100*c.Precision))
	fmt.Fprintf(b, "  probes  %s warmup + %s window each, extended up to %s while undecided; judged on at least %s\n",
		plan.FormatDuration(c.Warmup), plan.FormatDuration(c.Window), plan.FormatDuration(c.MaxWindow),
		textfmt.Count(int64(c.MinSamples), "request", "requests"))
	b.WriteString(wrap(fmt.Sprintf("between probes the load stops until the last probe's requests end and the server's queue is empty "+
		"(at most %s); the next then warms up at least a window", plan.FormatDuration(cmp.Or(c.IdleTimeout, plan.DefaultProbeIdleTimeout))),
		"  ", planIndent, maxWidth))
	criteria := (&result.Capacity{Search: result.CapacitySearch{GoodShare: c.GoodShare, Conditions: c.Conditions}}).Criteria(slo)
	b.WriteString(wrap("holds when "+criteria, "  ", planIndent, maxWidth))
	bracket, bisect := searchProbes(c)
	fmt.Fprintf(b, "  about %d probes (up to %d to bracket, %d to bisect): ≈ %s if each decides in one window; graceful stop %s\n",
		bracket+bisect, bracket, bisect, plan.FormatDuration(c.Warmup+c.Window+time.Duration(bracket+bisect-1)*(max(c.Warmup, c.Window)+c.Window)),
		plan.FormatDuration(sc.GracefulStop))
}

// searchProbes estimates a search's probes: the bracket's, growing from
// Start by Growth up to Max, and the bisection's, halving a bracket one
// Growth wide down to Precision (or to one VU). A search that breaks at
// once, or early, probes fewer; one that must bracket down, more.
func searchProbes(c *plan.CapacitySearch) (bracket, bisect int) {
	if c.Start <= 0 || c.Growth <= 1 {
		return 1, 0
	}
	bracket = 1
	if c.Max > c.Start {
		bracket += int(math.Ceil(math.Log(c.Max/c.Start)/math.Log(c.Growth) - 1e-9))
	}
	if c.Precision > 0 {
		bisect = int(math.Ceil(math.Log2((c.Growth - 1) / c.Precision)))
	}
	if c.Load == plan.CapacityVUs {
		// Bisection of VUs ends at a width of one VU: a bracket near Max
		// is (Growth − 1) × Max / Growth VUs wide.
		bisect = min(bisect, int(math.Ceil(math.Log2(max((c.Growth-1)*c.Max/c.Growth, 1)))))
	}
	return bracket, max(bisect, 0)
}

// totalLine is the plan's length: the stages' end, and beside it each
// capacity search's estimate, since a search lasts as many probes as it
// needs.
func totalLine(p plan.Plan) string {
	var searches []string
	for _, sc := range p.Scenarios {
		if c := sc.Capacity; c != nil {
			bracket, bisect := searchProbes(c)
			searches = append(searches, fmt.Sprintf("capacity search %s ≈ %s", sc.Name,
				plan.FormatDuration(sc.StartTime+time.Duration(bracket+bisect)*(c.Warmup+c.Window))))
		}
	}
	bound := "at most"
	for _, sc := range p.Scenarios {
		if sc.Trace.Stretches() {
			bound = "at least" // a trace of trees lasts as long as its answers make it
		}
	}
	stages := fmt.Sprintf("%s %s of load%s", bound, plan.FormatDuration(planDuration(p)), warmupNote(p.Warmup))
	switch {
	case len(searches) == 0:
		return "total: " + stages + "; nothing was sent"
	case planDuration(p) > 0:
		searches = append([]string{stages}, searches...)
	case p.Warmup.Duration > 0:
		searches = append([]string{"a " + plan.FormatDuration(p.Warmup.Duration) + " warmup"}, searches...)
	}
	return "total: " + strings.Join(searches, ", ") + " if each probe decides in one window; nothing was sent"
}
