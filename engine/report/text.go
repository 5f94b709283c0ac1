package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// Text renders r as the terminal summary: a header, a throughput table, a
// latency table, then errors and notes when there are any. The output is
// deterministic for a given Result.
func Text(r *result.Result) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		writeText(&b, r)
		_, err := w.Write(trimLines(b.Bytes()))
		return err
	}
}

func writeText(b *bytes.Buffer, r *result.Result) {
	writeHeader(b, r)
	if len(r.Stages) == 0 {
		b.WriteString("\nno stage ran: nothing was measured\n")
	} else {
		labels := stageLabels(r.Stages)
		writeThroughput(b, r, labels)
		writeArrivals(b, r, labels)
		writeTraces(b, r)
		writePrefixTargets(b, r.Stages, labels)
		starred := writeLatency(b, r.Stages, labels)
		writeSweepFindings(b, r)
		writePareto(b, readings(r).Pareto)
		writeCapacity(b, r)
		writeTail(b, r.Stages, labels)
		writeConnections(b, r.Stages, labels)
		writeMedia(b, r.Stages, labels)
		writeTasks(b, r, labels)
		writeBreakdown(b, r, labels)
		writeByTag(b, r.Stages, labels, starred)
		writeByAPI(b, r.Stages, labels, starred)
		writeByTarget(b, r, labels, starred)
		writeErrorClasses(b, r.Stages, labels)
		writeRobustness(b, r, labels)
		writeClientHealth(b, r.Stages, labels, serverName(r))
		writeDrift(b, r.Run.Process)
		writeTokenNotes(b, r, labels)
	}
	writeSpend(b, r)
	writeChecks(b, r.Checks)
	writeMetrics(b, r.Metrics)
	writeMetricErrors(b, r.MetricErrors)
	writeThresholds(b, r.Thresholds)
	if r.Run.Segment != nil && len(r.Thresholds) > 0 {
		b.WriteString("  (this segment's share only: the gate is the merged result's, from llmload merge)\n")
	}
	writeScriptErrors(b, r.ScriptErrors)
	writeServerMetricsNote(b, r)
	writeGPU(b, r)
	writeExports(b, r.Exports)
	writePools(b, r.Pools)
	writeClamped(b, r.Stages)
	writeLints(b, r.Lints)
	writeWarnings(b, r.Warnings)
	switch {
	case r.Run.Aborted != "":
		fmt.Fprintf(b, "\nrun incomplete: %s\n", r.Run.Aborted)
	case !r.Run.Complete:
		b.WriteString("\nrun incomplete (interrupted)\n")
	}
}

// trimLines drops the spaces that padded table cells leave at line ends.
func trimLines(text []byte) []byte {
	lines := bytes.Split(text, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

func writeHeader(b *bytes.Buffer, r *result.Result) {
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
	if len(m.Targets) > 0 {
		writeTargets(b, m)
	} else {
		fmt.Fprintf(b, "target  %s, model %s\n", target, cmp.Or(m.Model, "(default)"))
	}
	writeSegments(b, m)
	if w := r.Warmup; w.Requests > 0 || w.IterationErrors > 0 {
		fmt.Fprintf(b, "warmup: %s, %d failed, %s (excluded from all figures)\n",
			textfmt.Count(w.Requests, "request", "requests"), w.Failed, textfmt.Count(w.IterationErrors, "script error", "script errors"))
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

// throughputColumns says which optional columns the throughput table has.
type throughputColumns struct{ inputs, scriptErrs, dirty, goodput, cacheHit bool }

func writeThroughput(b *bytes.Buffer, r *result.Result, labels []string) {
	stages := r.Stages
	cols := throughputColumns{
		inputs:     slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.Inputs > 0 }),
		scriptErrs: slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.IterationErrors > 0 }),
		dirty:      slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.DirtyRequests > 0 }),
		goodput:    r.SLOSet,
		cacheHit:   hasHitShare(stages),
	}
	marked := make([]string, len(labels))
	var marks []string              // distinct marks, in order of first use
	byMark := map[string][]string{} // stage labels per mark
	for i, s := range stages {
		marked[i] = labels[i]
		if mark := clientMark(&s); mark != "" {
			marked[i] = labels[i] + " !"
			if byMark[mark] == nil {
				marks = append(marks, mark)
			}
			byMark[mark] = append(byMark[mark], labels[i])
		}
	}
	var flagged []string
	for _, mark := range marks {
		flagged = append(flagged, markMeaning(mark)+" in "+strings.Join(byMark[mark], ", "))
	}
	stageHead, marked := leftColumn("stage", marked)
	b.WriteString("\n")
	tw := newTable(b)
	row(tw, cols.head(stageHead)...)
	cut := false
	for i := range stages {
		cut = cut || !stages[i].Complete
		row(tw, cols.cells(marked[i], &stages[i])...)
	}
	tw.Flush()
	if cut {
		b.WriteString("cut: the stage did not run to its end; its window ends at its last completed request, or when the run stopped\n")
	}
	if len(flagged) > 0 {
		b.WriteString(wrap("!: "+strings.Join(flagged, "; ")+": figures from those stages are suspect (see WARNING)", "", "  ", maxWidth))
	}
	writeTailNote(b, stages, labels)
	if cols.inputs {
		b.WriteString("inputs/s: inputs embedded per second (embeddings requests)\n")
	}
	writeAPIs(b, stages)
	if cols.dirty {
		b.WriteString("dirty: deliberately malformed requests, left out of every other figure\n")
	}
	if cols.goodput {
		b.WriteString(goodputNote(r.Run.SLO) + "\n")
	}
	if cols.cacheHit {
		b.WriteString(cacheHitNote + "\n")
	}
}

func (c throughputColumns) head(stage string) []string {
	head := []string{stage, "VUs", "ok", "failed", "req/s", "out tok/s", "in tok/s"}
	if c.inputs {
		head = append(head, "inputs/s")
	}
	head = append(head, "window")
	if c.scriptErrs {
		head = append(head, "script err")
	}
	if c.dirty {
		head = append(head, "dirty")
	}
	if c.goodput {
		head = append(head, "goodput/s", "good %")
	}
	if c.cacheHit {
		head = append(head, "cache hit")
	}
	return head
}

func (c throughputColumns) cells(label string, s *metrics.StageSummary) []string {
	window := windowText(s)
	vus := fmt.Sprint(s.VUs)
	if s.TargetRate > 0 {
		vus = "-" // open model: the rate, not a VU count, sets the load
	}
	cells := []string{label, vus, fmt.Sprint(s.OK), fmt.Sprint(s.Failed),
		fmtRate(s.ReqPerSec), fmtRate(s.OutputTokPerSec), fmtRate(s.InputTokPerSec)}
	if c.inputs {
		cells = append(cells, fmtRate(s.InputsPerSec))
	}
	cells = append(cells, window)
	if c.scriptErrs {
		cells = append(cells, fmt.Sprint(s.IterationErrors))
	}
	if c.dirty {
		cells = append(cells, fmt.Sprint(s.DirtyRequests))
	}
	if c.goodput {
		cells = append(cells, fmtRate(s.Goodput), fmt.Sprintf("%.1f%%", 100*s.GoodShare))
	}
	if c.cacheHit {
		cells = append(cells, hitShareText(s))
	}
	return cells
}

// goodputNote names the objectives goodput counted against.
func goodputNote(slo *result.SLO) string {
	what := "the scenario's SLO"
	if objectives := result.SLOText(slo); objectives != "" {
		what = "the SLO " + objectives
	}
	return "goodput: successful requests per second that met " + what + "; good %: their share of all requests"
}

// clientMark names what the self-check flagged in a stage: "CLIENT-BOUND",
// "MACHINE-BUSY", both, or "" for nothing.
func clientMark(s *metrics.StageSummary) string {
	c := s.Client
	switch {
	case c == nil:
		return ""
	case c.Bound && c.MachineBusy:
		return "CLIENT-BOUND, MACHINE-BUSY"
	case c.Bound:
		return "CLIENT-BOUND"
	case c.MachineBusy:
		return "MACHINE-BUSY"
	}
	return ""
}

// markMeaning spells out a clientMark.
func markMeaning(mark string) string {
	switch mark {
	case "CLIENT-BOUND":
		return mark + " (llmload itself was the bottleneck)"
	case "MACHINE-BUSY":
		return mark + " (other processes held the machine's CPU)"
	}
	return mark + " (llmload was the bottleneck on a machine busy with other processes)"
}

// windowText is a stage's window, marked when it was cut or slipped from
// its planned length.
func windowText(s *metrics.StageSummary) string {
	w := fmt.Sprintf("%.1fs", s.DurationS)
	switch {
	case !s.Complete:
		w += " cut"
	case s.Slipped() && s.LateS > metrics.MaxWindowSlip*s.PlannedS:
		w += fmt.Sprintf(", %.1fs late", s.LateS)
	case s.Slipped():
		w += " of " + strconv.FormatFloat(s.PlannedS, 'f', -1, 64) + "s"
	}
	return w
}

// writeTailNote says how many requests started after their stage's window
// closed: counted and timed, but not in the rates.
func writeTailNote(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	var parts []string
	for i, s := range stages {
		if s.TailRequests > 0 {
			parts = append(parts, fmt.Sprintf("%s %d of %d", labels[i], s.TailRequests, s.Requests))
		}
	}
	if len(parts) == 0 {
		return
	}
	b.WriteString(wrap("tail: requests started after the window closed (graceful stop): "+strings.Join(parts, ", ")+
		"; in ok, failed and the latencies, not in req/s, tok/s or goodput", "", "  ", maxWidth))
}

// writeArrivals shows, for open-model stages, the target rate against what
// was scheduled and started, drops and llmload's own schedule lag.
func writeArrivals(b *bytes.Buffer, r *result.Result, labels []string) {
	stages := r.Stages
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
			fmt.Sprint(s.DroppedIterations), textfmt.DistMS(l, l.P50), textfmt.DistMS(l, l.P99), textfmt.DistMS(l, l.Max))
	}
	tw.Flush()
	if note := traceArrivalsNote(r); note != "" {
		b.WriteString(note + "\n")
	}
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

// readings are the knee and cliff of r's sweeps as this llmload reads
// them: recomputed from the stages, the run's SLO and the server's metrics
// (all kept in the file), so re-reporting a file written by an older
// llmload gives today's rules' reading. The stored Analysis is kept only when no stage is left to read
// (a hand-made result).
func readings(r *result.Result) analysis.Analysis {
	server := analysis.Server{Metrics: r.ServerMetrics, Start: r.Run.Start}
	if a := analysis.Analyze(r.Stages, engineSLO(r.Run.SLO), server); len(a.Sweeps) > 0 || len(r.Analysis.Sweeps) == 0 {
		return a
	}
	return r.Analysis
}

// writeSweepFindings names the knee and the cliff of each concurrency or
// rate sweep in one line each, with the rule that found them.
func writeSweepFindings(b *bytes.Buffer, r *result.Result) {
	a := readings(r)
	if len(a.Sweeps) == 0 {
		return
	}
	b.WriteString("\n")
	for _, sw := range a.Sweeps {
		prefix := ""
		if len(a.Sweeps) > 1 {
			prefix = sw.Scenario + ": "
		}
		for _, f := range slices.Concat([]analysis.Finding{sw.Knee, sw.Cliff}, sw.TagCliffs) {
			fmt.Fprintf(b, "%s%s\n", prefix, f.Text)
			if f.Suspect != "" {
				b.WriteString(wrap("suspect: "+f.Suspect+" (see WARNING)", "  ", "    ", maxWidth))
			}
			if f.Tentative != "" {
				b.WriteString(wrap("tentative: "+f.Tentative+"; a reading, not a fact", "  ", "    ", maxWidth))
			}
			if f.Server != nil {
				b.WriteString(wrap(serverLine(f.Server), "  ", "    ", maxWidth))
			}
		}
	}
}

// serverLine is what the server's queue gauges say about a finding:
// "server agrees: queue grows from 8 VUs (...)".
func serverLine(c *analysis.ServerCheck) string {
	if c.Verdict == "" {
		return "server: " + c.Text
	}
	return "server " + c.Verdict + ": " + c.Text
}

// writeSegments says that a result is one segment of a run, or which
// segments a merged result joins and how far apart they started.
func writeSegments(b *bytes.Buffer, m result.Meta) {
	switch line := segmentLine(m); {
	case m.Segment != nil:
		b.WriteString(line + "\n")
	case line != "":
		b.WriteString("merged  " + line + "\n")
	}
}

// segmentLine describes a segment result or a merged one; "" otherwise.
func segmentLine(m result.Meta) string {
	if s := m.Segment; s != nil {
		return fmt.Sprintf("segment %d/%d of a segmented run%s: merge every segment's result with llmload merge", s.Index, s.Count, onHost(s.Host))
	}
	if len(m.Segments) == 0 {
		return ""
	}
	var hosts []string
	var first, last time.Time
	for _, s := range m.Segments {
		if s.Host != "" && !slices.Contains(hosts, s.Host) {
			hosts = append(hosts, s.Host)
		}
		if s.ActualStart.IsZero() {
			continue
		}
		if first.IsZero() || s.ActualStart.Before(first) {
			first = s.ActualStart
		}
		if s.ActualStart.After(last) {
			last = s.ActualStart
		}
	}
	spread := ""
	if !first.IsZero() {
		spread = fmt.Sprintf(", started within %v", last.Sub(first).Round(time.Millisecond))
	}
	return fmt.Sprintf("%d segments on %s%s", len(m.Segments), textfmt.Count(int64(len(hosts)), "host", "hosts"), spread)
}

func onHost(h string) string {
	if h == "" {
		return ""
	}
	return " on " + h
}
