package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// TrendPage is a history's trend report: one chart per metric and stage.
type TrendPage struct {
	Title     string // e.g. "llmload history — scenarios/chat_mix.lua"
	Generated time.Time
	Filters   []string // human text of the filters applied, e.g. "branch=main", "last 30 runs"
	Charts    []TrendChart
}

// TrendChart is one metric of one stage across runs, oldest run first.
type TrendChart struct {
	Metric    string // "ttft.p99"
	Stage     string // "chat/steady"
	Unit      string // "ms", "req/s", "tok/s", "%"
	HigherBad bool   // latency up is worse; throughput down is worse
	Runs      []TrendRun
	Changes   []TrendChange
	Note      string // e.g. why a chart has no change check ("fewer than 6 runs")
}

// TrendRun is one run's value.
type TrendRun struct {
	ID     string // run id as the store names it
	Time   time.Time
	Label  string  // short extra, e.g. the commit "a1b2c3d" or ""
	Value  float64 // NaN or ±Inf: listed in the table, not drawn
	Lo, Hi float64 // 95% interval; NaN when the run has none
}

// TrendChange marks a change point: Runs[Index] is the first run after the
// shift. A change whose Index is outside Runs is not shown.
type TrendChange struct {
	Index     int
	Before    float64
	After     float64
	RelChange float64 // (After-Before)/|Before|
	Worse     bool
}

//go:embed html_trend.tmpl
var trendSource string

// trendTemplate is the trend page added to a copy of the run report's
// templates, so that both draw tables and charts with the same blocks.
var trendTemplate = template.Must(template.Must(htmlTemplate.Clone()).New("trend").Parse(trendSource))

// reportCSS is the run report's style sheet, shared so that the two pages
// look alike and change together.
var reportCSS = template.CSS(styleOf(htmlSource))

// styleOf is the content of page's first <style> element.
func styleOf(page string) string {
	_, after, _ := strings.Cut(page, "<style>")
	css, _, _ := strings.Cut(after, "</style>")
	return css
}

// trendPageOut is everything the trend template shows, computed beforehand.
type trendPageOut struct {
	Title  string
	CSS    template.CSS
	Meta   [][2]string
	Worse  []string // each shift for the worse, one line
	Charts []trendSection
}

// trendSection is one chart and the table of its runs.
type trendSection struct {
	Heading string
	Chart   chartOut
	Table   htmlTable
}

// TrendHTML renders p as one self-contained page: per chart an inline SVG
// of the runs' values with their 95% intervals and the change points, and
// a table of the runs. Like HTML it has no script and no external resource,
// escapes every text, and is deterministic for a given page.
func TrendHTML(p TrendPage) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		if err := trendTemplate.ExecuteTemplate(&b, "trend", buildTrendPage(p)); err != nil {
			return fmt.Errorf("render HTML trend report: %w", err)
		}
		_, err := w.Write(b.Bytes())
		return err
	}
}

func buildTrendPage(p TrendPage) trendPageOut {
	out := trendPageOut{Title: p.Title, CSS: reportCSS, Meta: trendMeta(p)}
	if out.Title == "" {
		out.Title = "llmload history"
	}
	for i, c := range p.Charts {
		out.Worse = append(out.Worse, worseLines(c)...)
		out.Charts = append(out.Charts, trendSection{Heading: trendHeading(c), Chart: trendChartOut(c, i), Table: trendTable(c)})
	}
	return out
}

func trendMeta(p TrendPage) [][2]string {
	var rows [][2]string
	if !p.Generated.IsZero() {
		rows = append(rows, [2]string{"generated", p.Generated.UTC().Format(time.RFC3339)})
	}
	filters := "none"
	if len(p.Filters) > 0 {
		filters = strings.Join(p.Filters, "; ")
	}
	return append(rows, [2]string{"filters", filters}, [2]string{"charts", strconv.Itoa(len(p.Charts))})
}

func trendHeading(c TrendChart) string {
	m := c.Metric
	if m == "" {
		m = "(unnamed metric)"
	}
	if c.Stage == "" {
		return m
	}
	return m + " · " + c.Stage
}

// worseLines are c's shifts for the worse: "ttft.p99 · chat/steady: +6.1% at run 42".
func worseLines(c TrendChart) []string {
	var out []string
	for _, ch := range shownChanges(c) {
		if ch.Worse {
			out = append(out, trendHeading(c)+": "+changeLabel(c, ch))
		}
	}
	return out
}

// shownChanges are the changes whose Index names a run.
func shownChanges(c TrendChart) []TrendChange {
	var out []TrendChange
	for _, ch := range c.Changes {
		if ch.Index >= 0 && ch.Index < len(c.Runs) {
			out = append(out, ch)
		}
	}
	return out
}

// changeLabel is "+6.1% at run 42", or "410 → 435 at run 42" when the
// relative change is not a number (a shift from zero).
func changeLabel(c TrendChart, ch TrendChange) string {
	return relText(ch) + " at run " + clipRunes(c.Runs[ch.Index].ID, 16)
}

func relText(ch TrendChange) string {
	if math.IsNaN(ch.RelChange) || math.IsInf(ch.RelChange, 0) {
		return trendValue(ch.Before) + " → " + trendValue(ch.After)
	}
	return fmt.Sprintf("%+.1f%%", 100*ch.RelChange)
}

// trendTable lists c's runs, oldest first, with the shift each change
// point starts; a shift for the worse is marked bad.
func trendTable(c TrendChart) htmlTable {
	value := "value"
	if c.Unit != "" {
		value += " (" + c.Unit + ")"
	}
	t := htmlTable{Head: []string{"run", "time (UTC)", "label", value, "95% interval", "shift"}}
	shifts := make(map[int]TrendChange)
	for _, ch := range shownChanges(c) {
		shifts[ch.Index] = ch
	}
	for i, r := range c.Runs {
		t.Rows = append(t.Rows, []htmlCell{
			{Text: r.ID, Left: true}, {Text: trendTime(r.Time)}, {Text: r.Label},
			{Text: trendValue(r.Value)}, {Text: intervalText(r.Lo, r.Hi)}, shiftCell(shifts, i),
		})
	}
	return t
}

func shiftCell(shifts map[int]TrendChange, i int) htmlCell {
	ch, ok := shifts[i]
	switch {
	case !ok:
		return htmlCell{}
	case ch.Worse:
		return htmlCell{Text: relText(ch) + " (worse)", Bad: true}
	}
	return htmlCell{Text: relText(ch) + " (better)"}
}

func trendTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func intervalText(lo, hi float64) string {
	if !finite(lo) || !finite(hi) {
		return "-"
	}
	return trendValue(min(lo, hi)) + " – " + trendValue(max(lo, hi))
}

// trendValue prints a value with the precision its size needs; "-" for
// NaN, so that no "NaN" reaches the page.
func trendValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 1):
		return "+∞"
	case math.IsInf(v, -1):
		return "-∞"
	case a == 0:
		return "0"
	case a >= 1e6 || a < 0.01:
		return strconv.FormatFloat(v, 'g', 4, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// clipRunes shortens s to n runes, marking the cut with "…".
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
