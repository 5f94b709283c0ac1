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
	loads := sc.StageLoads()
	for i, st := range sc.Stages {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", st.Name, engine.FormatDuration(at), engine.FormatDuration(st.Duration), stageLoad(sc, st, loads[i]))
		at += st.Duration
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

// stageLoad describes a stage's load (l, from engine.StageLoads): VUs or a
// rate, ramped or stepped.
func stageLoad(sc engine.Scenario, st engine.Stage, l engine.StageLoad) string {
	level := func(v float64) string {
		if engine.OpenModel(sc.Executor) {
			return fmt.Sprintf("%g req/s", v)
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
	if l.Ramp == 0 {
		return level(l.To)
	}
	s := fmt.Sprintf("%s → %s over %s", level(l.From), level(l.To), engine.FormatDuration(l.Ramp))
	if st.Ramp > l.Ramp {
		s += fmt.Sprintf(", the stage's end cutting a %s ramp", engine.FormatDuration(st.Ramp))
	}
	if l.Hold > 0 {
		s += ", then hold"
	}
	return s
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

// expectedArrivals is ∫ rate dt over the stages, rounded.
func expectedArrivals(sc engine.Scenario) float64 {
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
