package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// serverSection draws r's server metrics: first the server's roles per
// stage beside the client's TTFT, then each series, shifted from the run's
// start to the time series' origin so that both line up; nil when none
// were scraped. An endpoint without series still gets its section, so
// that the note says why.
func serverSection(r *result.Result, labels []string) ([]chartOut, string) {
	sm := r.ServerMetrics
	if sm == nil {
		return nil, ""
	}
	shift := 0.0
	if origin, ok := seriesOrigin(r); ok && !r.Run.Start.IsZero() {
		shift = origin - float64(r.Run.Start.UnixNano())/1e9
	}
	series := make([]serverSeries, 0, len(sm.Series))
	for i := range sm.Series {
		s := &sm.Series[i]
		series = append(series, serverSeries{Name: s.Name, Title: serverTitle(s), Help: s.Help, Unit: s.Unit, T: s.T, V: s.V})
	}
	var out []chartOut
	if table, ok := serverStageFigure(r, labels); ok {
		out = append(out, table)
	}
	out = append(out, serverCharts(series, stageMarks(r, labels), shift)...)
	if len(out) == 0 {
		out = append(out, chartOut{Notes: []string{"No server series to draw: see the note above."}})
	}
	return out, serverNote(sm)
}

// serverNote says where the series came from, how the scrapes fared and,
// when it has to, why there are no series.
func serverNote(sm *servermetrics.Result) string {
	note := fmt.Sprintf("Scraped from %s every %gs: %s, %d failed.", sm.URL, sm.EveryS, textfmt.Count(int64(sm.Scrapes), "scrape", "scrapes"), sm.Failures)
	if k := sm.ServerKind(); k != "" {
		note += " Server: " + servermetrics.ServerName(k) + "."
	}
	if len(sm.Errors) > 0 {
		note += " Errors: " + strings.Join(sm.Errors, "; ")
	}
	if explain := sm.Explain(); explain != "" {
		note += " Note: " + explain
	}
	return note
}

// serverStageFigure is the table of the server's roles per stage, with the
// client's TTFT p50 and p99 in front, rendered with the page's own table
// template; ok is false when no role has a value in any stage.
func serverStageFigure(r *result.Result, labels []string) (chartOut, bool) {
	cols, rows := serverStages(r, false)
	if cols == nil {
		return chartOut{}, false
	}
	t := htmlTable{Head: []string{serverKindName(r.ServerMetrics), "TTFT p50", "TTFT p99"}}
	for _, c := range cols {
		t.Head = append(t.Head, c.head)
	}
	for i := range r.Stages {
		d := r.Stages[i].TTFT
		cells := []htmlCell{{Text: labels[i], Left: true}, pCell(d, "p50", d.P50), pCell(d, "p99", d.P99)}
		for _, v := range rows[i] {
			cells = append(cells, htmlCell{Text: v})
		}
		t.Rows = append(t.Rows, cells)
	}
	var b bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&b, "table", t); err != nil {
		return chartOut{}, false // the template is the page's own: it cannot fail on a table
	}
	return chartOut{SVG: template.HTML(b.String()), Notes: []string{serverStagesNote}}, true
}

// serverSeries is one server metric over time, in seconds since the run
// start, as engine/servermetrics records it.
type serverSeries struct {
	Name, Title, Help, Unit string
	T, V                    []float64
}

// serverCharts draws each server series as a small chart, all on one time
// axis (the widest series' span) so that they line up under each other.
func serverCharts(series []serverSeries, marks []vmark, shift float64) []chartOut {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, t := range s.T {
			lo, hi = math.Min(lo, t-shift), math.Max(hi, t-shift)
		}
	}
	var out []chartOut
	for i, s := range series {
		if len(s.T) == 0 || len(s.T) != len(s.V) {
			continue
		}
		x := make([]float64, len(s.T))
		for j, t := range s.T {
			x[j] = t - shift
		}
		// Invisible marks at both ends give every chart the same x range.
		ends := append([]vmark{{X: lo, Class: "edge"}, {X: hi, Class: "edge"}}, marks...)
		c := lineChart{Name: fmt.Sprintf("server-%d", i), Title: s.Title, XLabel: "time since the first stage started (s)",
			YLabel: serverUnit(s.Unit), Marks: ends, Series: []lineSeries{{Name: s.Name, X: x, Y: s.V}}}
		co := c.render()
		if s.Help != "" {
			co.Notes = []string{s.Help}
		}
		out = append(out, co)
	}
	return out
}

// roleWords say what a role is, for chart titles.
var roleWords = map[servermetrics.Role]string{
	servermetrics.RoleRunning:      "requests running",
	servermetrics.RoleWaiting:      "requests waiting",
	servermetrics.RoleKVCache:      "KV cache in use",
	servermetrics.RolePrefixHit:    "prefix-cache hit ratio",
	servermetrics.RolePromptTokens: "prompt tokens/s",
	servermetrics.RoleOutputTokens: "output tokens/s",
	servermetrics.RolePreemptions:  "preemptions/s",
	servermetrics.RoleTTFT:         "server TTFT",
	servermetrics.RoleITL:          "server ITL",
	servermetrics.RoleTPOT:         "server TPOT",
	servermetrics.RoleE2E:          "server E2E",
	servermetrics.RoleQueueTime:    "server queue time",
}

// serverTitle titles a series' chart by its role and its name: "requests
// waiting: vllm:num_requests_waiting", "server TTFT p99: ..."; the name
// alone without a role.
func serverTitle(s *servermetrics.Series) string {
	role := string(servermetrics.RoleOf(s))
	if role == "" {
		return s.Name
	}
	base, stat := role, ""
	if i := strings.LastIndex(role, "_"); i > 0 && slices.Contains([]string{"p50", "p99", "mean"}, role[i+1:]) {
		base, stat = role[:i], " "+role[i+1:]
	}
	return cmp.Or(roleWords[servermetrics.Role(base)], base) + stat + ": " + s.Name
}

// serverUnit names a series' unit for its y axis.
func serverUnit(unit string) string {
	switch unit {
	case servermetrics.UnitRequests:
		return "requests"
	case servermetrics.UnitFraction:
		return "fraction (0..1)"
	case servermetrics.UnitMS:
		return "ms"
	case servermetrics.UnitPerSecond:
		return "per second"
	case servermetrics.UnitTokensPerSecond:
		return "tokens per second"
	case servermetrics.UnitTokens:
		return "tokens"
	case "":
		return "value"
	}
	return unit
}
