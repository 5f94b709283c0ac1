package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
)

// breakdownRun is a sweep measured by a real collector whose server sent a
// span for every request: at 4 VUs requests barely queue, at 16 they wait
// 1.5 s for a slot while prefill stays flat; one request's server timed
// more than the client measured.
func breakdownRun() *result.Result {
	c := metrics.NewCollector()
	stages := []struct {
		name  string
		vus   int
		queue time.Duration
	}{{"4-vus", 4, 20 * time.Millisecond}, {"16-vus", 16, 1500 * time.Millisecond}}
	ms := time.Millisecond
	for i, st := range stages {
		c.StageStarted(engine.StageMark{Scenario: "sweep", Stage: st.name, Index: i, Target: st.vus, At: t0.Add(time.Duration(i) * 20 * time.Second)})
	}
	for i, st := range stages {
		base := t0.Add(time.Duration(i) * 20 * time.Second)
		for j := range 40 {
			queue := st.queue + time.Duration(j)*ms
			prefill := time.Duration(60+j%5) * ms
			ttft := 2*ms + queue + prefill
			s := engine.Sample{Scenario: "sweep", Stage: st.name, Result: engine.Result{API: engine.EndpointChat,
				Start: base.Add(time.Duration(j) * 400 * ms), Status: 200, TTFB: ms, TTFT: ttft, TTFC: ttft,
				E2E: ttft + 800*ms + ms, TPOT: 8 * ms, InputTokens: 100, InputTokensSource: engine.TokensFromUsage,
				OutputTokens: 100, TokensSource: engine.TokensFromUsage, Streamed: true, TextEvents: 100,
				TraceID: "4bf92f3577b34da6a3ce929d0e0e47" + string(rune('a'+i)) + string(rune('a'+j%26)), RequestID: "chatcmpl-" + st.name,
				Span: &engine.ServerSpan{Queue: queue, Prefill: prefill, Decode: 800 * ms, TTFT: engine.Absent, E2E: engine.Absent,
					PromptTokens: 100, CompletionTokens: 100}}}
			if i == 1 && j == 7 {
				s.Span.Queue += 5 * ms // the server counted from before the request reached it
			}
			c.Sample(s)
		}
	}
	for i, st := range stages {
		c.StageEnded(engine.StageMark{Scenario: "sweep", Stage: st.name, Index: i, Target: st.vus, At: t0.Add(time.Duration(i)*20*time.Second + 20*time.Second)})
	}
	r := result.New(result.Meta{Scenario: "sweep.lua", Model: "m", Simulator: true, Seed: 7,
		Start: t0, End: t0.Add(40 * time.Second), Complete: true}, c.Close())
	r.ServerSpans = &result.ServerSpans{Listen: "127.0.0.1:4318", Spans: 81, Joined: 80, Unjoined: 1, Requests: 80}
	r.NegativeResiduals = []result.NegativeResidual{{Scenario: "sweep", Stage: "16-vus", RequestID: "chatcmpl-16-vus",
		TraceID: "4bf92f3577b34da6a3ce929d0e0e47bh", Source: engine.BreakdownSpan, TTFTMS: 1571, ResidualMS: -3}}
	return r
}

func TestBreakdownGolden(t *testing.T) {
	r := breakdownRun()
	golden(t, "breakdown.txt.golden", render(t, Text(r)))
	golden(t, "breakdown.html.golden", render(t, HTML(r)))
}

// TestBreakdownText: the tables' figures by arithmetic over the fixture,
// and the account of the spans.
func TestBreakdownText(t *testing.T) {
	text := string(render(t, Text(breakdownRun())))
	i := strings.Index(text, "\nwhere the time goes, p50")
	if i < 0 {
		t.Fatalf("no breakdown in the report:\n%s", text)
	}
	text = text[i:]
	// 4 VUs: upload 0, residual 2 ms, queue 20..59 ms (p50 39), prefill 60..64, decode 800, tail 1.
	if got, want := fieldsOf(text, "4-vus"), "[4-vus 40 spans"; !strings.HasPrefix(got, want) {
		t.Errorf("p50 row = %s, want it to start %s", got, want)
	}
	f := strings.Fields(lineOf(text, "4-vus"))
	if len(f) != 11 || f[5] != "2.0" || f[6] != "39.0" || f[8] != "800" || f[9] != "1.0" || f[10] != "-" {
		t.Errorf("4-vus p50 cells %q, want residual 2.0, queue 39.0, decode 800, tail 1.0, no negative", f)
	}
	f = strings.Fields(lineOf(text, "16-vus"))
	if len(f) != 11 || f[10] != "1" || f[6] != "1520" {
		t.Errorf("16-vus p50 cells %q, want queue 1520 (1519.5, as the histogram holds it) and one negative residual", f)
	}
	for _, want := range []string{
		"server spans (received at 127.0.0.1:4318): 81 spans, 80 joined to their request by trace id; 0 of 80 traced requests got none",
		"1 spans met no request of this run",
		"sweep/16-vus request chatcmpl-16-vus trace 4bf92f3577b34da6a3ce929d0e0e47bh: TTFT 1571.000 ms, residual -3.000 ms (span)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// lineOf is the first line of text that starts with label.
func lineOf(text, label string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), label+" ") {
			return l
		}
	}
	return ""
}

// Stages the server's /metrics histograms split, but no span or timings
// did, get a table of their own, naming the histograms.
func TestServerPartsTable(t *testing.T) {
	r := breakdownRun()
	r.ServerSpans = nil
	r.Stages[0].Breakdown, r.Stages[1].Breakdown = nil, nil
	f := func(v float64) *float64 { return &v }
	r.ServerParts = []result.StageServerParts{{Scenario: "sweep", Stage: "16-vus", Parts: servermetrics.Parts{Server: servermetrics.ServerVLLM,
		Queue:   &servermetrics.Part{P50MS: f(1520), P99MS: f(1710), Metric: "vllm:request_queue_time_seconds"},
		Prefill: &servermetrics.Part{P50MS: f(61.5), P99MS: f(70), Metric: "vllm:request_prefill_time_seconds"}}}}
	text := string(render(t, Text(r)))
	if strings.Contains(text, "where the time goes, p50") {
		t.Errorf("a per-request table without any request split:\n%s", text)
	}
	for _, want := range []string{"the server's own split, from its /metrics histograms",
		"vllm:request_queue_time_seconds, vllm:request_prefill_time_seconds"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	section := text[strings.Index(text, "the server's own split"):]
	if f := strings.Fields(lineOf(section, "16-vus")); len(f) < 8 || f[1] != "1520" || f[2] != "1710" || f[3] != "61.5" || f[5] != "-" {
		t.Errorf("16-vus row %q, want queue 1520/1710, prefill 61.5/70, no decode", f)
	}
	if html := string(render(t, HTML(r))); !strings.Contains(html, "The server&#39;s own split") && !strings.Contains(html, "The server's own split") {
		t.Errorf("HTML lacks the server's split")
	}
}

// Without a trace receiver (llama.cpp's timings split the requests), the
// requests whose residual was below zero are still named.
func TestNegativeResidualsWithoutReceiver(t *testing.T) {
	r := breakdownRun()
	r.ServerSpans = nil
	r.NegativeResiduals = []result.NegativeResidual{{Scenario: "sweep", Stage: "16-vus", RequestID: "chatcmpl-7",
		Source: engine.BreakdownTimings, TTFTMS: 40, ResidualMS: -0.25}}
	want := "sweep/16-vus request chatcmpl-7 trace : TTFT 40.000 ms, residual -0.250 ms (timings)"
	text := string(render(t, Text(r)))
	if strings.Contains(text, "server spans (received") {
		t.Errorf("a receiver's account without a receiver:\n%s", text)
	}
	if !strings.Contains(text, want) {
		t.Errorf("text report lacks %q:\n%s", want, text)
	}
	if html := string(render(t, HTML(r))); !strings.Contains(html, "request chatcmpl-7") {
		t.Errorf("HTML report does not name the negative residual's request")
	}
}
