package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// serverColumn is one server role shown per stage beside the client's
// figures.
type serverColumn struct {
	role servermetrics.Role
	head string
	text bool // in the text summary too, not only in the HTML report
}

// serverColumns are the roles a stage row can show, in order: the queue
// first, as it explains a TTFT cliff, then the caches, the server's own
// latencies and its token rates. A column is shown only when the server
// has that role.
var serverColumns = []serverColumn{
	{servermetrics.RoleRunning, "running", true},
	{servermetrics.RoleWaiting, "waiting", true},
	{servermetrics.RoleKVCache, "KV use", true},
	{servermetrics.RolePrefixHit, "cache hit", true},
	{servermetrics.RoleTTFT.P50(), "srv TTFT p50", false},
	{servermetrics.RoleTTFT.P99(), "srv TTFT p99", true},
	{servermetrics.RoleQueueTime.P99(), "srv queue p99", true},
	{servermetrics.RoleITL.P99(), "srv ITL p99", false},
	{servermetrics.RoleITL.Mean(), "srv ITL mean", false},
	{servermetrics.RoleTPOT.P99(), "srv TPOT p99", false},
	{servermetrics.RoleE2E.P99(), "srv E2E p99", false},
	{servermetrics.RolePromptTokens, "srv in tok/s", false},
	{servermetrics.RoleOutputTokens, "srv out tok/s", true},
	{servermetrics.RolePreemptions, "preempt/s", false},
}

// serverStagesNote says how the server's figures of a stage were taken.
const serverStagesNote = "server figures: means of the scrapes within each stage; srv p99: the worst scrape interval's, " +
	"from the server's own histogram; TTFT p50, p99: the client's"

// serverStages are the server's roles over each stage's window: the
// columns that have a value in some stage, and one row of cells per stage
// ("-" where no scrape fell within it), from sm: the result's server
// metrics, or one of their endpoints. No columns when the result has no
// run start to place the series on, or no role within any stage.
func serverStages(r *result.Result, sm *servermetrics.Result, text bool) (cols []serverColumn, rows [][]string) {
	if sm == nil || r.Run.Start.IsZero() {
		return nil, nil
	}
	rows = make([][]string, len(r.Stages))
	for _, c := range serverColumns {
		s := sm.ByRole(c.role)
		if s == nil || (text && !c.text) {
			continue
		}
		cells, any := stageCells(r, s)
		if !any {
			continue
		}
		cols = append(cols, c)
		for i := range rows {
			rows[i] = append(rows[i], cells[i])
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	return cols, rows
}

// stageCells summarises s over each stage's window (see Series.Within);
// any is false when no stage has a value.
func stageCells(r *result.Result, s *servermetrics.Series) (cells []string, any bool) {
	for _, st := range r.Stages {
		from, to := st.Start.Sub(r.Run.Start).Seconds(), st.End.Sub(r.Run.Start).Seconds()
		v, ok := s.Within(from, to)
		if !ok || st.Start.IsZero() {
			cells = append(cells, "-")
			continue
		}
		cells, any = append(cells, serverValue(s.Unit, v)), true
	}
	return cells, any
}

// serverValue renders a server figure in its unit: "3.9" requests, "42%",
// "120" ms, and rates as the throughput table writes them.
func serverValue(unit string, v float64) string {
	switch unit {
	case servermetrics.UnitFraction:
		return fmt.Sprintf("%.0f%%", 100*v)
	case servermetrics.UnitMS:
		return textfmt.DistMS(metrics.Dist{Count: 1}, v)
	case servermetrics.UnitTokensPerSecond, servermetrics.UnitPerSecond:
		return fmtRate(v)
	}
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// serverKindName names the server a result's series came from: "vLLM
// server", or "server" when its kind is not known.
func serverKindName(sm *servermetrics.Result) string {
	if k := sm.ServerKind(); k != "" {
		return servermetrics.ServerName(k) + " server"
	}
	return "server"
}

// writeServerMetricsNote says how the server's metrics endpoint fared and
// why it gave no series when it gave none, then shows the server's roles
// per stage beside the client's TTFT, so that a cliff and the server's
// queue sit side by side; the series themselves are drawn in the HTML
// report. Several endpoints get a line each, the table of their sums,
// then each one's own table.
func writeServerMetricsNote(b *bytes.Buffer, r *result.Result) {
	sm := r.ServerMetrics
	if sm == nil {
		return
	}
	if len(sm.Endpoints) > 0 {
		writeEndpointsNote(b, r)
		return
	}
	fmt.Fprintf(b, "\nserver metrics: %s\n", endpointLine(sm))
	if note := sm.Explain(); note != "" {
		b.WriteString(wrap(note, "  ", "    ", maxWidth))
	}
	writeServerStages(b, r, sm, serverKindName(sm), "")
}

// writeEndpointsNote is writeServerMetricsNote for several endpoints.
func writeEndpointsNote(b *bytes.Buffer, r *result.Result) {
	sm := r.ServerMetrics
	fmt.Fprintf(b, "\nserver metrics: %d endpoints, %s; %s\n", len(sm.Endpoints),
		textfmt.Count(int64(sm.Scrapes), "scrape", "scrapes"), sumsNote)
	for i := range sm.Endpoints {
		e := &sm.Endpoints[i]
		b.WriteString(wrap(fmt.Sprintf("#%d %s", i+1, endpointLine(e)), "  ", "    ", maxWidth))
		if note := e.Explain(); note != "" {
			b.WriteString(wrap(note, "    ", "      ", maxWidth))
		}
	}
	if note := sm.Explain(); note != "" {
		b.WriteString(wrap(note, "  ", "    ", maxWidth))
	}
	legend := writeServerStages(b, r, sm, "sum of "+serverKindsName(sm), "")
	for i := range sm.Endpoints {
		e := &sm.Endpoints[i]
		legend = writeServerStages(b, r, e, fmt.Sprintf("#%d %s", i+1, serverKindName(e)), legend)
	}
}

// sumsNote says what the sums of several endpoints are.
const sumsNote = "requests and token rates summed across them, cache use and latencies per endpoint"

// endpointLine says what one endpoint gave and how its scrapes fared:
// "12 series from http://host:8000/metrics (45 scrapes)", or for one
// found at the target's origin "found vLLM's at ...: 12 series (...)".
func endpointLine(sm *servermetrics.Result) string {
	var b strings.Builder
	if sm.Target != "" {
		fmt.Fprintf(&b, "target %s: ", sm.Target)
	}
	switch k := sm.ServerKind(); {
	case sm.Discovered && k != "":
		fmt.Fprintf(&b, "found %s's at %s: %d series (", servermetrics.ServerName(k), sm.URL, len(sm.Series))
	case sm.Discovered:
		fmt.Fprintf(&b, "found at %s: %d series (", sm.URL, len(sm.Series))
	default:
		fmt.Fprintf(&b, "%d series from %s (", len(sm.Series), sm.URL)
	}
	b.WriteString(textfmt.Count(int64(sm.Scrapes), "scrape", "scrapes"))
	if sm.Failures > 0 {
		fmt.Fprintf(&b, ", %d failed: %s", sm.Failures, strings.Join(sm.Errors, "; "))
	}
	b.WriteString(")")
	return b.String()
}

// serverKindsName names the servers of several endpoints: "2 vLLM
// servers", or "3 servers" when their kinds differ or are not known.
func serverKindsName(sm *servermetrics.Result) string {
	if k := sm.ServerKind(); k != "" {
		return fmt.Sprintf("%d %s servers", len(sm.Endpoints), servermetrics.ServerName(k))
	}
	return fmt.Sprintf("%d servers", len(sm.Endpoints))
}

// writeServerStages writes one row per stage of sm's figures, headed
// head: the client's TTFT p50 and p99, then the server's roles over the
// same window, and the legend of its series unless it is the one
// written before (prev); it returns the legend written last.
func writeServerStages(b *bytes.Buffer, r *result.Result, sm *servermetrics.Result, head, prev string) string {
	cols, rows := serverStages(r, sm, true)
	if cols == nil {
		return prev
	}
	tw := newTable(b)
	head, labels := leftColumn(head, stageLabels(r.Stages))
	cells := []string{head, "TTFT p50 ", "TTFT p99 "}
	for _, c := range cols {
		cells = append(cells, c.head)
	}
	row(tw, cells...)
	for i := range r.Stages {
		d := r.Stages[i].TTFT
		row(tw, append([]string{labels[i], fmtP(d, "p50", d.P50), fmtP(d, "p99", d.P99)}, rows[i]...)...)
	}
	tw.Flush()
	legend := seriesLegend(sm, cols)
	if prev == "" {
		b.WriteString(wrap(serverStagesNote+"; "+legend, "", "  ", maxWidth))
	} else if legend != prev {
		b.WriteString(wrap(legend, "", "  ", maxWidth))
	}
	return legend
}

// seriesLegend names the server's own series behind each column, so a
// reader can find them in the server's dashboards.
func seriesLegend(sm *servermetrics.Result, cols []serverColumn) string {
	parts := make([]string, 0, len(cols))
	for _, c := range cols {
		if s := sm.ByRole(c.role); s != nil {
			parts = append(parts, c.head+" = "+s.Name)
		}
	}
	return "series: " + strings.Join(parts, ", ")
}
