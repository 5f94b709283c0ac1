package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmload/llmload/engine/metrics"
)

const lowSamplesNote = "* fewer than 1000 samples: p99 is not reliable"

// Text renders r as the terminal summary: a header, a throughput table, a
// latency table, then errors and notes when there are any. The output is
// deterministic for a given Result.
func Text(r *Result) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		writeText(&b, r)
		_, err := w.Write(b.Bytes())
		return err
	}
}

func writeText(b *bytes.Buffer, r *Result) {
	writeHeader(b, r)
	if len(r.Stages) == 0 {
		b.WriteString("\nno stage ran: nothing was measured\n")
	} else {
		labels := stageLabels(r.Stages)
		writeThroughput(b, r.Stages, labels)
		writeArrivals(b, r.Stages, labels)
		writeLatency(b, r.Stages, labels)
		writeErrorClasses(b, r.Stages, labels)
	}
	writeChecks(b, r.Checks)
	writeMetrics(b, r.Metrics)
	writeMetricErrors(b, r.MetricErrors)
	writeThresholds(b, r.Thresholds)
	writeScriptErrors(b, r.ScriptErrors)
	writeClamped(b, r.Stages)
	writeWarnings(b, r.Warnings)
	switch {
	case r.Run.Aborted != "":
		fmt.Fprintf(b, "\nrun incomplete: %s\n", r.Run.Aborted)
	case !r.Run.Complete:
		b.WriteString("\nrun incomplete (interrupted)\n")
	}
}

func writeHeader(b *bytes.Buffer, r *Result) {
	m := r.Run
	target := m.Target
	if m.Simulator || target == "" {
		target = "built-in simulator"
	}
	dur := "duration unknown"
	if !m.Start.IsZero() && !m.End.IsZero() {
		dur = m.End.Sub(m.Start).Round(100 * time.Millisecond).String()
	}
	version := ""
	if m.Version != "" {
		version = " " + m.Version
	}
	fmt.Fprintf(b, "run     %s, %s, seed %d (llmload%s)\n", cmp.Or(m.Scenario, "(no script)"), dur, m.Seed, version)
	fmt.Fprintf(b, "target  %s, model %s\n", target, cmp.Or(m.Model, "(default)"))
	if w := r.Warmup; w.Requests > 0 || w.IterationErrors > 0 {
		fmt.Fprintf(b, "warmup: %d requests, %d failed, %d script errors (excluded from all figures)\n",
			w.Requests, w.Failed, w.IterationErrors)
	}
}

// stageLabels names each stage, with its scenario only when there are
// several scenarios.
func stageLabels(stages []metrics.StageSummary) []string {
	multi := slices.ContainsFunc(stages, func(s metrics.StageSummary) bool {
		return s.Scenario != stages[0].Scenario
	})
	labels := make([]string, len(stages))
	for i, s := range stages {
		labels[i] = s.Stage
		if multi {
			labels[i] = s.Scenario + "/" + s.Stage
		}
	}
	return labels
}

// leftColumn pads a header and its cells to one width, so that a
// right-aligning tabwriter still shows them left-aligned.
func leftColumn(head string, cells []string) (string, []string) {
	all := padRight(append([]string{head}, cells...))
	return all[0], all[1:]
}

func padRight(cells []string) []string {
	w := 0
	for _, c := range cells {
		w = max(w, len([]rune(c)))
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c + strings.Repeat(" ", w-len([]rune(c)))
	}
	return out
}

func newTable(b *bytes.Buffer) *tabwriter.Writer {
	return tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// row writes cells terminated by a tab, so that every cell, the last one
// included, is aligned.
func row(tw io.Writer, cells ...string) {
	fmt.Fprint(tw, strings.Join(cells, "\t")+"\t\n")
}

func writeThroughput(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	scriptErrs := slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.IterationErrors > 0 })
	stageHead, labels := leftColumn("stage", labels)
	head := []string{stageHead, "VUs", "ok", "failed", "req/s", "out tok/s", "in tok/s", "window"}
	if scriptErrs {
		head = append(head, "script err")
	}
	b.WriteString("\n")
	tw := newTable(b)
	row(tw, head...)
	cut := false
	for i, s := range stages {
		window := fmt.Sprintf("%.1fs", s.DurationS)
		if !s.Complete {
			window += " cut"
			cut = true
		}
		vus := fmt.Sprint(s.VUs)
		if s.TargetRate > 0 {
			vus = "-" // open model: the rate, not a VU count, sets the load
		}
		cells := []string{labels[i], vus, fmt.Sprint(s.OK), fmt.Sprint(s.Failed),
			fmtRate(s.ReqPerSec), fmtRate(s.OutputTokPerSec), fmtRate(s.InputTokPerSec), window}
		if scriptErrs {
			cells = append(cells, fmt.Sprint(s.IterationErrors))
		}
		row(tw, cells...)
	}
	tw.Flush()
	if cut {
		b.WriteString("cut: the stage did not run to its end; its window ends at its last completed request, or when the run stopped\n")
	}
}

type family struct {
	name string
	dist func(*metrics.StageSummary) metrics.Dist
}

var families = []family{
	{"TTFT", func(s *metrics.StageSummary) metrics.Dist { return s.TTFT }},
	{"TPOT", func(s *metrics.StageSummary) metrics.Dist { return s.TPOT }},
	{"ITL ", func(s *metrics.StageSummary) metrics.Dist { return s.ITL }},
	{"E2E ", func(s *metrics.StageSummary) metrics.Dist { return s.E2E }},
}

// schedFamilies are shown for open-model runs: latencies measured from the
// intended start, so waiting for a late start is not hidden.
var schedFamilies = []family{
	{"TTFT@ts", func(s *metrics.StageSummary) metrics.Dist { return s.TTFTSched }},
	{"E2E@ts ", func(s *metrics.StageSummary) metrics.Dist { return s.E2ESched }},
}

// stageFamilies are the latency rows of one stage.
func stageFamilies(s *metrics.StageSummary) []family {
	if s.TTFTSched.Count > 0 || s.E2ESched.Count > 0 {
		return append(slices.Clone(families), schedFamilies...)
	}
	return families
}

func writeLatency(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	b.WriteString("\n")
	tw := newTable(b)
	head, labels := leftColumn("latency ms", labels)
	row(tw, head, "     ", "p50", "p90", "p95", "p99 ", "max", "n")
	blank := strings.Repeat(" ", len([]rune(head)))
	low := false
	for i := range stages {
		for j, f := range stageFamilies(&stages[i]) {
			label := blank
			if j == 0 {
				label = labels[i]
			}
			d := f.dist(&stages[i])
			low = low || d.LowSamples
			row(tw, label, f.name+" ", fmtMS(d, d.P50), fmtMS(d, d.P90), fmtMS(d, d.P95),
				fmtP99(d), fmtMS(d, d.Max), fmt.Sprint(d.Count))
		}
	}
	tw.Flush()
	if low {
		b.WriteString(lowSamplesNote + "\n")
	}
	if slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.TTFTSched.Count > 0 }) {
		b.WriteString("@ts: measured from the intended start (open model), so a late start is not hidden\n")
	}
}

// writeArrivals shows, for open-model stages, the target rate against what
// was scheduled and started, drops and llmload's own schedule lag.
func writeArrivals(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	if !slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.TargetRate > 0 }) {
		return
	}
	b.WriteString("\n")
	tw := newTable(b)
	head, labels := leftColumn("arrivals", labels)
	row(tw, head, "target/s", "scheduled/s", "achieved/s", "dropped", "lag p50 ms", "lag p99 ms", "lag max ms")
	for i, s := range stages {
		if s.TargetRate <= 0 {
			continue
		}
		l := s.ScheduleLag
		row(tw, labels[i], fmtRate(s.TargetRate), fmtRate(s.ScheduledRate), fmtRate(s.AchievedRate),
			fmt.Sprint(s.DroppedIterations), fmtMS(l, l.P50), fmtMS(l, l.P99), fmtMS(l, l.Max))
	}
	tw.Flush()
}

// fmtMS prints milliseconds: two decimals below 1 ms (so fast token gaps
// do not read as zero), one below 100 ms, integers above.
func fmtMS(d metrics.Dist, v float64) string {
	switch {
	case d.Count == 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// fmtP99 marks an unreliable p99; the trailing space keeps digits aligned.
func fmtP99(d metrics.Dist) string {
	if d.Count == 0 {
		return "- "
	}
	if d.LowSamples {
		return fmtMS(d, d.P99) + "*"
	}
	return fmtMS(d, d.P99) + " "
}

func fmtRate(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}
