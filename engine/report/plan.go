package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmload/llmload/engine"
)

// Plan renders what a run would do, for 'llmload check': per scenario its
// executor, a timeline of stages, its duration and the expected request
// count, then the thresholds. thresholds are rendered as given.
func Plan(p engine.Plan, thresholds []string) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		writePlanHeader(&b, p)
		for _, sc := range p.Scenarios {
			writeScenarioPlan(&b, sc)
		}
		writePlanThresholds(&b, thresholds)
		fmt.Fprintf(&b, "\ntotal: at most %s of load%s; nothing was sent\n", engine.FormatDuration(planDuration(p)), warmupNote(p.Warmup))
		_, err := w.Write(b.Bytes())
		return err
	}
}

func writePlanHeader(b *bytes.Buffer, p engine.Plan) {
	target := "built-in simulator (no base_url set)"
	if p.Target.BaseURL != "" {
		target = engine.RedactURL(p.Target.BaseURL)
	}
	model := p.Target.Model
	if model == "" {
		model = "(the server's first model)"
	}
	fmt.Fprintf(b, "script  %s\ntarget  %s, model %s\nseed    %d\n", p.Script, target, model, p.Seed)
	if p.Warmup.Requests > 0 {
		fmt.Fprintf(b, "warmup  %s, excluded from all statistics\n", count(int64(p.Warmup.Requests), "request", "requests"))
	} else if p.Warmup.Duration > 0 {
		fmt.Fprintf(b, "warmup  %s, excluded from all statistics\n", engine.FormatDuration(p.Warmup.Duration))
	}
}

func warmupNote(w engine.Warmup) string {
	if w.Duration > 0 {
		return " after a " + engine.FormatDuration(w.Duration) + " warmup"
	}
	return ""
}

// planDuration is the end of the last scenario, without graceful stops.
func planDuration(p engine.Plan) time.Duration {
	var end time.Duration
	for _, sc := range p.Scenarios {
		end = max(end, sc.StartTime+sc.Duration())
	}
	return end
}

func writeScenarioPlan(b *bytes.Buffer, sc engine.Scenario) {
	fmt.Fprintf(b, "\nscenario %s: %s, exec %s()", sc.Name, sc.Executor, sc.Exec)
	if sc.StartTime > 0 {
		fmt.Fprintf(b, ", starts at %s", engine.FormatDuration(sc.StartTime))
	}
	if engine.OpenModel(sc.Executor) {
		fmt.Fprintf(b, ", %s arrivals, %d pre-allocated VUs (max %d)", arrivalName(sc), sc.PreAllocatedVUs, sc.MaxVUs())
	}
	if len(sc.Tags) > 0 {
		fmt.Fprintf(b, ", tags %s", fmtTags(sc.Tags))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  stage\tstarts\tduration\tload")
	at := sc.StartTime
	prev := startLoad(sc)
	for _, st := range sc.Stages {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", st.Name, engine.FormatDuration(at), engine.FormatDuration(st.Duration), stageLoad(sc, st, prev))
		at += st.Duration
		prev = stageLevel(sc, st)
	}
	tw.Flush()
	fmt.Fprintf(b, "  %s; graceful stop %s\n", expected(sc), engine.FormatDuration(sc.GracefulStop))
}

func arrivalName(sc engine.Scenario) string {
	if sc.Arrival == engine.ArrivalGamma {
		return fmt.Sprintf("gamma (burstiness %g)", sc.Burstiness)
	}
	if sc.Arrival == "" {
		return engine.ArrivalPoisson
	}
	return sc.Arrival
}

func startLoad(sc engine.Scenario) float64 {
	if engine.OpenModel(sc.Executor) {
		return sc.StartRate
	}
	return float64(sc.StartVUs)
}

func stageLevel(sc engine.Scenario, st engine.Stage) float64 {
	if engine.OpenModel(sc.Executor) {
		return st.Rate
	}
	return float64(st.Target)
}

// stageLoad describes a stage's load: VUs or a rate, ramped or stepped.
func stageLoad(sc engine.Scenario, st engine.Stage, prev float64) string {
	level := func(v float64) string {
		if engine.OpenModel(sc.Executor) {
			return fmt.Sprintf("%g req/s", sc.RatePerSecond(v))
		}
		if v == 1 {
			return "1 VU"
		}
		return fmt.Sprintf("%g VUs", v)
	}
	switch sc.Executor {
	case engine.ExecutorSharedIterations:
		return fmt.Sprintf("%s %s %s (at most %s)", count(int64(sc.VUs), "VU", "VUs"), plural(int64(sc.VUs), "runs", "share"),
			count(int64(sc.Iterations), "iteration", "iterations"), engine.FormatDuration(st.Duration))
	case engine.ExecutorPerVUIterations:
		return fmt.Sprintf("%s × %s (at most %s)", count(int64(sc.VUs), "VU", "VUs"), count(int64(sc.Iterations), "iteration", "iterations"), engine.FormatDuration(st.Duration))
	}
	if st.Ramp > 0 {
		return fmt.Sprintf("%s → %s over %s, then hold", level(prev), level(stageLevel(sc, st)), engine.FormatDuration(st.Ramp))
	}
	return level(stageLevel(sc, st))
}

// expected says how many iterations the scenario will run.
func expected(sc engine.Scenario) string {
	switch {
	case engine.OpenModel(sc.Executor):
		return fmt.Sprintf("expected ≈ %.0f iterations (∫ rate dt)", expectedArrivals(sc))
	case sc.Executor == engine.ExecutorSharedIterations:
		return "expected " + count(int64(sc.Iterations), "iteration", "iterations")
	case sc.Executor == engine.ExecutorPerVUIterations:
		return "expected " + count(int64(sc.VUs*sc.Iterations), "iteration", "iterations")
	}
	return "closed model: the iteration count depends on response times"
}

// expectedArrivals integrates the piecewise-linear rate over the stages.
func expectedArrivals(sc engine.Scenario) float64 {
	total, prev := 0.0, sc.RatePerSecond(sc.StartRate)
	for _, st := range sc.Stages {
		rate := sc.RatePerSecond(st.Rate)
		ramp := min(st.Ramp, st.Duration).Seconds()
		total += (prev+rate)/2*ramp + rate*(st.Duration.Seconds()-ramp)
		prev = rate
	}
	return math.Round(total)
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
