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
// that the note says why. Several endpoints get the table of their sums
// and then each one's own, and one chart per quantity with a line per
// endpoint beside their sum.
func serverSection(r *result.Result, labels []string) ([]chartOut, string) {
	sm := r.ServerMetrics
	if sm == nil {
		return nil, ""
	}
	shift := 0.0
	if origin, ok := seriesOrigin(r); ok && !r.Run.Start.IsZero() {
		shift = origin - float64(r.Run.Start.UnixNano())/1e9
	}
	var out []chartOut
	if table, ok := serverStageFigure(r, sm, labels, serverTableHead(sm)); ok {
		out = append(out, table)
	}
	for i := range sm.Endpoints {
		e := &sm.Endpoints[i]
		if table, ok := serverStageFigure(r, e, labels, fmt.Sprintf("#%d %s", i+1, serverKindName(e))); ok {
			out = append(out, table)
		}
	}
	out = append(out, serverCharts(chartedSeries(sm), stageMarks(r, labels), shift)...)
	if len(out) == 0 {
		out = append(out, chartOut{Notes: []string{"No server series to draw: see the note above."}})
	}
	return out, serverNote(sm)
}

// serverTableHead heads the first table: the server's kind, or the sum of
// several.
func serverTableHead(sm *servermetrics.Result) string {
	if len(sm.Endpoints) > 0 {
		return "sum of " + serverKindsName(sm)
	}
	return serverKindName(sm)
}

// chartedSeries are the charts to draw: one per series of one endpoint;
// of several, one per quantity (role, or name without one), with their
// sum first and then a line per endpoint that has it.
func chartedSeries(sm *servermetrics.Result) []serverSeries {
	if len(sm.Endpoints) == 0 {
		series := make([]serverSeries, 0, len(sm.Series))
		for i := range sm.Series {
			s := &sm.Series[i]
			series = append(series, serverSeries{Name: s.Name, Title: serverTitle(s), Help: s.Help, Unit: s.Unit,
				Lines: []chartLine{{s.Name, s.T, s.V}}})
		}
		return series
	}
	var series []serverSeries
	index := map[string]int{}
	add := func(label string, s *servermetrics.Series) {
		key := chartKey(s)
		i, ok := index[key]
		if !ok {
			i, index[key] = len(series), len(series)
			series = append(series, serverSeries{Name: s.Name, Title: serverTitle(s), Help: s.Help, Unit: s.Unit})
		}
		series[i].Lines = append(series[i].Lines, chartLine{label, s.T, s.V})
	}
	for i := range sm.Series {
		add(sm.Series[i].Name, &sm.Series[i])
	}
	for n := range sm.Endpoints {
		e := &sm.Endpoints[n]
		for i := range e.Series {
			add(fmt.Sprintf("#%d %s", n+1, e.Series[i].Name), &e.Series[i])
		}
	}
	return series
}

// chartKey is what puts several endpoints' series on one chart.
func chartKey(s *servermetrics.Series) string {
	if r := servermetrics.RoleOf(s); r != "" {
		return "role:" + string(r)
	}
	return "name:" + strings.TrimSuffix(strings.TrimPrefix(s.Name, "sum("), ")")
}

// serverNote says where the series came from, how the scrapes fared and,
// when it has to, why there are no series; of several endpoints, each.
func serverNote(sm *servermetrics.Result) string {
	if len(sm.Endpoints) == 0 {
		return endpointNote(sm)
	}
	notes := []string{fmt.Sprintf("%d endpoints, scraped every %gs: %s.", len(sm.Endpoints), sm.EveryS, sumsNote)}
	for i := range sm.Endpoints {
		notes = append(notes, fmt.Sprintf("#%d: %s", i+1, endpointNote(&sm.Endpoints[i])))
	}
	if explain := sm.Explain(); explain != "" {
		notes = append(notes, "Note: "+explain)
	}
	return strings.Join(notes, " ")
}

// endpointNote is serverNote for one endpoint.
func endpointNote(sm *servermetrics.Result) string {
	from := "Scraped from " + sm.URL
	if sm.Discovered {
		from = "Found at the target's origin, " + sm.URL + ", and scraped"
	}
	if sm.Target != "" {
		from = "Target " + sm.Target + ": " + strings.ToLower(from[:1]) + from[1:]
	}
	note := fmt.Sprintf("%s every %gs: %s, %d failed.", from, sm.EveryS, textfmt.Count(int64(sm.Scrapes), "scrape", "scrapes"), sm.Failures)
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
func serverStageFigure(r *result.Result, sm *servermetrics.Result, labels []string, head string) (chartOut, bool) {
	cols, rows := serverStages(r, sm, false)
	if cols == nil {
		return chartOut{}, false
	}
	t := htmlTable{Head: []string{head, "TTFT p50", "TTFT p99"}}
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
// start, as engine/servermetrics records it: one line, or one per
// endpoint beside their sum.
type serverSeries struct {
	Name, Title, Help, Unit string
	Lines                   []chartLine
}

// chartLine is one line of a server chart.
type chartLine struct {
	Name string
	T, V []float64
}

// serverCharts draws each server series as a small chart, all on one time
// axis (the widest series' span) so that they line up under each other.
func serverCharts(series []serverSeries, marks []vmark, shift float64) []chartOut {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, l := range s.Lines {
			for _, t := range l.T {
				lo, hi = math.Min(lo, t-shift), math.Max(hi, t-shift)
			}
		}
	}
	var out []chartOut
	for i, s := range series {
		lines := chartLines(s.Lines, shift)
		if len(lines) == 0 {
			continue
		}
		// Invisible marks at both ends give every chart the same x range.
		ends := append([]vmark{{X: lo, Class: "edge"}, {X: hi, Class: "edge"}}, marks...)
		c := lineChart{Name: fmt.Sprintf("server-%d", i), Title: s.Title, XLabel: "time since the first stage started (s)",
			YLabel: serverUnit(s.Unit), Marks: ends, Series: lines}
		co := c.render()
		if s.Help != "" {
			co.Notes = []string{s.Help}
		}
		out = append(out, co)
	}
	return out
}

// chartLines are the drawable lines, shifted onto the chart's time axis.
func chartLines(lines []chartLine, shift float64) []lineSeries {
	var out []lineSeries
	for _, l := range lines {
		if len(l.T) == 0 || len(l.T) != len(l.V) {
			continue
		}
		x := make([]float64, len(l.T))
		for j, t := range l.T {
			x[j] = t - shift
		}
		out = append(out, lineSeries{Name: l.Name, X: x, Y: l.V})
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
