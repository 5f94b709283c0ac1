package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
)

// serverSweep is a closed sweep of 1 to 8 VUs over 20 s stages whose TTFT
// p50 jumps at 8 VUs, and a scrape every 5 s of a llama.cpp server with 4
// slots: running fills at 4 VUs and the deferred requests grow at 8.
func serverSweep() *result.Result {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var stages []metrics.StageSummary
	sm := &servermetrics.Result{URL: "http://127.0.0.1:8080/metrics", EveryS: 5, Scrapes: 20, Server: servermetrics.ServerLlamaCpp,
		Families: 12, Known: 8}
	running := servermetrics.Series{Name: "llamacpp:requests_processing", Role: servermetrics.RoleRunning, Unit: servermetrics.UnitRequests}
	waiting := servermetrics.Series{Name: "llamacpp:requests_deferred", Role: servermetrics.RoleWaiting, Unit: servermetrics.UnitRequests}
	// Written before roles existed: the role comes from the name.
	tokens := servermetrics.Series{Name: "llamacpp:tokens_predicted_total:rate", Unit: servermetrics.UnitTokensPerSecond}
	itl := servermetrics.Series{Name: "llamacpp:tokens_predicted_seconds_total/llamacpp:tokens_predicted_total",
		Role: servermetrics.RoleITL.Mean(), Unit: servermetrics.UnitMS}
	for i, vus := range []int{1, 2, 4, 8} {
		st := metrics.StageSummary{Scenario: "sweep", Stage: fmt.Sprintf("c%d", vus), Index: i, VUs: vus, Complete: true,
			Start: start.Add(time.Duration(20*i) * time.Second), DurationS: 20, PlannedS: 20, ReqPerSec: float64(min(vus, 4)),
			TTFT: metrics.Dist{Count: 2000, P50: []float64{40, 42, 45, 900}[i], P99: []float64{60, 70, 90, 1500}[i]}}
		st.End = st.Start.Add(20 * time.Second)
		stages = append(stages, st)
		for _, dt := range []float64{5, 10, 15, 20} {
			at := float64(20*i) + dt
			running.T, running.V = append(running.T, at), append(running.V, float64(min(vus, 4)))
			waiting.T, waiting.V = append(waiting.T, at), append(waiting.V, float64(max(vus-4, 0))*dt/10)
			tokens.T, tokens.V = append(tokens.T, at), append(tokens.V, 30*float64(min(vus, 4)))
			itl.T, itl.V = append(itl.T, at), append(itl.V, 8*float64(min(vus, 4)))
		}
	}
	sm.Series = []servermetrics.Series{running, waiting, tokens, itl}
	r := result.New(result.Meta{Start: start, Complete: true}, &metrics.Summary{Stages: stages})
	r.ServerMetrics = sm
	return r
}

// serverEndpoints are the ways an endpoint can fare, one result each.
func serverEndpoints() map[string]*result.Result {
	unknown := result.New(result.Meta{Complete: true}, nil)
	unknown.ServerMetrics = &servermetrics.Result{URL: "http://127.0.0.1:9000/metrics", EveryS: 5, Scrapes: 45,
		Families: 37, Examples: []string{"bar_latency", "foo_requests"}, Series: []servermetrics.Series{}}
	failed := result.New(result.Meta{Complete: true}, nil)
	failed.ServerMetrics = &servermetrics.Result{URL: "http://127.0.0.1:8080/metrics", EveryS: 5, Scrapes: 12, Failures: 12,
		Errors: []string{"HTTP 501 Not Implemented (12×)"}, Series: []servermetrics.Series{}}
	found := serverSweep()
	found.ServerMetrics.Discovered = true
	return map[string]*result.Result{"llama.cpp sweep": serverSweep(), "unknown endpoint": unknown, "every scrape failed": failed,
		"found at the origin": found, "two replicas": serverReplicas()}
}

// serverReplicas is serverSweep's server twice, the second replica found
// at its target's origin and failing once: their queue and token rate
// are summed.
func serverReplicas() *result.Result {
	r := serverSweep()
	a := *r.ServerMetrics
	b := a
	b.URL, b.Target, b.Discovered, b.Failures, b.Errors = "http://127.0.0.1:8081/metrics", "b", true, 1, []string{"timeout after 2s (1×)"}
	sums := []servermetrics.Series{}
	for _, s := range a.Series {
		if !servermetrics.Additive(&s) {
			continue
		}
		sum := servermetrics.Series{Name: "sum(" + s.Name + ")", Role: servermetrics.RoleOf(&s), Unit: s.Unit, T: s.T}
		for _, v := range s.V {
			sum.V = append(sum.V, 2*v)
		}
		sums = append(sums, sum)
	}
	r.ServerMetrics = &servermetrics.Result{EveryS: 5, Scrapes: 40, Failures: 1, Server: servermetrics.ServerLlamaCpp,
		Series: sums, Endpoints: []servermetrics.Result{a, b}}
	return r
}

// TestServerMetricsNoteGolden: what the text summary says of each
// endpoint, the server's roles per stage beside the client's TTFT.
func TestServerMetricsNoteGolden(t *testing.T) {
	var b bytes.Buffer
	for _, name := range []string{"llama.cpp sweep", "unknown endpoint", "every scrape failed", "found at the origin", "two replicas"} {
		fmt.Fprintf(&b, "== %s\n", name)
		writeServerMetricsNote(&b, serverEndpoints()[name])
	}
	golden(t, "server.txt.golden", trimLines(b.Bytes()))
}

// TestServerStagesColumns: the text keeps to the compact columns, the HTML
// shows every role the server has; a stage without scrapes has dashes.
func TestServerStagesColumns(t *testing.T) {
	r := serverSweep()
	heads := func(text bool) string {
		cols, _ := serverStages(r, r.ServerMetrics, text)
		var out []string
		for _, c := range cols {
			out = append(out, c.head)
		}
		return strings.Join(out, ",")
	}
	if got, want := heads(true), "running,waiting,srv out tok/s"; got != want {
		t.Errorf("text columns %s, want %s", got, want)
	}
	if got, want := heads(false), "running,waiting,srv ITL mean,srv out tok/s"; got != want {
		t.Errorf("HTML columns %s, want %s", got, want)
	}
	r.Stages = append(r.Stages, metrics.StageSummary{Scenario: "sweep", Stage: "late", Start: r.Run.Start.Add(time.Hour), End: r.Run.Start.Add(2 * time.Hour)})
	if _, rows := serverStages(r, r.ServerMetrics, true); strings.Join(rows[len(rows)-1], ",") != "-,-,-" {
		t.Errorf("a stage without scrapes: %q, want dashes", rows[len(rows)-1])
	}
	r.Run.Start = time.Time{}
	if cols, _ := serverStages(r, r.ServerMetrics, true); cols != nil {
		t.Error("no run start, yet a table")
	}
}

// TestHTMLServerSection: the HTML shows the per-stage table and the role
// titles, and an endpoint without series still gets a section that says
// why.
func TestHTMLServerSection(t *testing.T) {
	page := string(render(t, HTML(serverSweep())))
	for _, want := range []string{
		`<th class="l">llama.cpp server</th><th>TTFT p50</th><th>TTFT p99</th><th>running</th><th>waiting</th><th>srv ITL mean</th><th>srv out tok/s</th>`,
		`<tr><td class="l ">c8</td><td>900</td><td>1500</td><td>4</td><td>5</td><td>32.0</td><td>120.0</td></tr>`,
		"<title>requests waiting: llamacpp:requests_deferred</title>",
		"<title>server ITL mean: llamacpp:tokens_predicted_seconds_total/llamacpp:tokens_predicted_total</title>",
		"Server: llama.cpp.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for name, r := range serverEndpoints() {
		if name == "llama.cpp sweep" {
			continue
		}
		page := string(render(t, HTML(r)))
		note := strings.ReplaceAll(r.ServerMetrics.Explain(), "'", "&#39;")
		if !strings.Contains(page, "<h2>Server metrics</h2>") || !strings.Contains(page, note) {
			t.Errorf("%s: page lacks the server section or its note %q", name, note)
		}
	}
}

// TestHTMLServerSectionReplicas: several endpoints get the table of their
// sums and one of each, and a chart per quantity with a line per
// endpoint beside their sum; their cache use or latency is never summed.
func TestHTMLServerSectionReplicas(t *testing.T) {
	page := string(render(t, HTML(serverReplicas())))
	for _, want := range []string{
		`<th class="l">sum of 2 llama.cpp servers</th><th>TTFT p50</th><th>TTFT p99</th><th>running</th><th>waiting</th><th>srv out tok/s</th></tr>`,
		`<tr><td class="l ">c8</td><td>900</td><td>1500</td><td>8</td><td>10</td><td>240.0</td></tr>`,
		`<th class="l">#2 llama.cpp server</th><th>TTFT p50</th><th>TTFT p99</th><th>running</th><th>waiting</th><th>srv ITL mean</th>`,
		"<title>requests waiting: sum(llamacpp:requests_deferred)</title>",
		"#1 llamacpp:requests_deferred", "#2 llamacpp:requests_deferred",
		"#2: Target b: found at the target&#39;s origin, http://127.0.0.1:8081/metrics, and scraped every 5s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "sum(llamacpp:tokens_predicted_seconds_total") {
		t.Error("a latency was summed")
	}
}

// TestServerMetricsJSON: the roles, the server kind and the note are in
// the result file, and a file without them (an older llmload's) reads
// back and renders with the roles its names have.
func TestServerMetricsJSON(t *testing.T) {
	sm := serverSweep().ServerMetrics
	sm.Note = sm.Explain()
	b, err := json.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"server":"llamacpp"`, `"families":12`, `"known":8`,
		`{"name":"llamacpp:requests_deferred","role":"waiting","unit":"requests"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	old := readTestdata(t, "llamacpp-sweep-4slots.json")
	assertText(t, string(render(t, Text(old))), []string{
		"server metrics: 0 series from http://127.0.0.1:8080/metrics (45 scrapes)\n  http://127.0.0.1:8080/metrics gave no series llmload knows in 45 scrapes",
	}, nil)
}
