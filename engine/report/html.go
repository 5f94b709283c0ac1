package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

//go:embed html.tmpl
var htmlSource string

// htmlTemplate is parsed once; html/template escapes every value the page
// shows, so a tag value "<script>" renders as text.
var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// htmlPage is everything the template shows, computed beforehand so that
// the template holds no logic beyond loops and conditions.
type htmlPage struct {
	Title      string
	Meta       [][2]string
	Incomplete string
	Thresholds []thresholdRow
	Stages     htmlTable
	Goodput    string
	CacheHit   string // explains the stage table's cache hit column
	Sweeps     []sweepSection
	Pareto     []paretoSection
	Capacity   []capacitySection
	Traces     []traceSection
	Prefix     []string // each stage's asked prefix-cache hit share beside the served one
	PrefixNote string   // explains them
	Spend      *spendSection
	Details    []stageDetail
	Series     []chartOut
	Server     []chartOut
	ServerNote string
	GPU        template.HTML // the GPU and speculative-decoding section
	Errors     htmlTable
	Robustness htmlTable
	Media      htmlTable // the media requests' figures; no rows without
	Speech     htmlTable
	MediaNote  string
	SpeechNote string
	Tasks      htmlTable // the tasks' figures (llm.task); no rows without
	TaskNote   string
	Breakdown  *breakdownSection // where the time went; nil when the server timed nothing
	Warnings   []string
	Lints      []lintRow
	Notes      []string // once-per-run notes, such as the token counts'
	Checks     []string
}

// HTML renders r as one self-contained page: tables and inline SVG charts,
// with no script and no external resource, so that it opens offline and
// can be attached to a ticket. An interrupted run renders what it has.
// The output is deterministic for a given Result.
func HTML(r *result.Result) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		if err := htmlTemplate.Execute(&b, buildPage(r)); err != nil {
			return fmt.Errorf("render HTML report: %w", err)
		}
		_, err := w.Write(b.Bytes())
		return err
	}
}

func buildPage(r *result.Result) htmlPage {
	labels := stageLabels(r.Stages)
	p := htmlPage{
		Title:      "llmload report: " + orDash(r.Run.Scenario),
		Meta:       metaRows(r),
		Incomplete: incompleteText(r),
		Thresholds: thresholdRows(r.Thresholds),
		Stages:     stageTable(r, labels),
		Sweeps:     sweepSections(r),
		Pareto:     paretoSections(r),
		Capacity:   capacitySections(r),
		Traces:     traceSections(r),
		Spend:      spendSectionOf(r),
		Details:    stageDetails(r.Stages, labels),
		Series:     timeSeriesCharts(r, labels),
		Errors:     errorTable(r.Stages, labels),
		Robustness: robustnessTable(r),
		Warnings:   r.Warnings,
		Lints:      lintRows(r.Lints),
		Notes:      tokenNotes(r),
		Checks:     checkLines(r),
	}
	p.Server, p.ServerNote = serverSection(r, labels)
	p.GPU = gpuHTML(r)
	p.Media, p.Speech = mediaTables(r.Stages, labels)
	p.MediaNote, p.SpeechNote = mediaNote, speechNote
	p.Tasks, p.TaskNote = taskTable(r.Stages, labels), taskNote(r.Run.SLO)
	p.Breakdown = breakdownHTML(r, labels)
	if r.SLOSet {
		p.Goodput = goodputNote(r.Run.SLO)
	}
	if hasHitShare(r.Stages) {
		p.CacheHit = cacheHitNote
	}
	if p.Prefix = prefixTargetLines(r.Stages, labels); p.Prefix != nil {
		p.PrefixNote = prefixTargetNote
	}
	return p
}

func orDash(s string) string {
	if s == "" {
		return "(no script)"
	}
	return s
}

func incompleteText(r *result.Result) string {
	switch {
	case r.Run.Aborted != "":
		return "Run incomplete: " + r.Run.Aborted
	case !r.Run.Complete:
		return "Run incomplete: it was interrupted; the figures cover what ran."
	}
	return ""
}

func metaRows(r *result.Result) [][2]string {
	m := r.Run
	target := m.Target
	if m.Simulator || target == "" {
		target = "built-in simulator"
	}
	rows := [][2]string{{"scenario", orDash(m.Scenario)}, {"target", target}, {"model", orDash(m.Model)}}
	if !m.Start.IsZero() {
		rows = append(rows, [2]string{"start", m.Start.UTC().Format(time.RFC3339)})
	}
	if !m.Start.IsZero() && !m.End.IsZero() {
		rows = append(rows, [2]string{"duration", m.End.Sub(m.Start).Round(100 * time.Millisecond).String()})
	}
	rows = append(rows, [2]string{"seed", fmt.Sprint(m.Seed)})
	if line := segmentLine(m); line != "" {
		rows = append(rows, [2]string{"segments", line})
	}
	if m.Version != "" {
		rows = append(rows, [2]string{"llmload", m.Version})
	}
	if m.Tokenizer != "" {
		rows = append(rows, [2]string{"tokenizer", m.Tokenizer})
	}
	if line := localServerText(r, stageLabels(r.Stages)); line != "" {
		rows = append(rows, [2]string{"local server", line})
	}
	if w := r.Warmup; w.Requests > 0 || w.IterationErrors > 0 {
		rows = append(rows, [2]string{"warmup", fmt.Sprintf("%s, %d failed, %s (excluded from all figures)",
			textfmt.Count(w.Requests, "request", "requests"), w.Failed, textfmt.Count(w.IterationErrors, "script error", "script errors"))})
	}
	return rows
}

// checkLines are the checks, then the script errors, one line each.
func checkLines(r *result.Result) []string {
	var out []string
	for _, c := range r.Checks {
		mark := "✓"
		if c.Fails > 0 {
			mark = "✗"
		}
		out = append(out, fmt.Sprintf("%s %s: %d passed, %d failed", mark, c.Name, c.Passes, c.Fails))
	}
	for _, e := range r.ScriptErrors {
		out = append(out, fmt.Sprintf("script error ×%d: %s", e.Count, oneLine(e.Message)))
	}
	return out
}
