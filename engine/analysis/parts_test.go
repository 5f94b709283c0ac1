package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/servermetrics"
)

// dist is a Dist of count values with the given median and p99.
func dist(count int64, p50, p99 float64) metrics.Dist {
	return metrics.Dist{Count: count, P50: p50, P90: p99, P95: p99, P99: p99, Max: p99}
}

// partsStage is a stage of a closed sweep whose TTFT is split into
// residual, queue and prefill medians (ms), with the p99s twice them.
func partsStage(name string, vus int, residual, queue, prefill float64, source string) metrics.StageSummary {
	st := stage("s", name, vus, 0)
	ttft := residual + queue + prefill
	st.TTFT = dist(1000, ttft, 2*ttft)
	st.E2E = dist(1000, ttft+800, 2*ttft+900)
	st.OK, st.Requests = 1000, 1000
	bd := &metrics.BreakdownSummary{Requests: 1000, Residual: dist(1000, residual, 2*residual),
		Prefill: dist(1000, prefill, 2*prefill), Decode: dist(1000, 800, 900), Tail: dist(1000, 1, 2)}
	if source == "spans" {
		bd.FromSpans, bd.Queue = 1000, dist(1000, queue, 2*queue)
	} else {
		bd.FromTimings = 1000
	}
	st.Breakdown = bd
	return st
}

// The cliff names the part that grew, at the percentile that found it,
// and calls the others flat.
func TestCliffExplained(t *testing.T) {
	tests := []struct {
		name   string
		stages []metrics.StageSummary
		want   string
		grew   string
	}{
		{"requests queue", []metrics.StageSummary{
			partsStage("c4", 4, 2, 10, 60, "spans"), partsStage("c8", 8, 2, 20, 62, "spans"),
			partsStage("c16", 16, 2, 1700, 63, "spans")},
			"TTFT cliff at 16 VUs: p50 ×21 for ×2 load (84 ms → 1.76 s): requests queue; where the time went: queue p50 20 ms → 1.7 s, prefill flat (63 ms), residual flat (2 ms): requests queue",
			"queue"},
		{"prefill grows", []metrics.StageSummary{
			partsStage("c4", 4, 2, 0, 60, "spans"), partsStage("c8", 8, 2, 0, 62, "spans"),
			partsStage("c16", 16, 2, 5, 900, "spans")},
			"where the time went: prefill p50 62 ms → 900 ms, queue flat (5 ms), residual flat (2 ms): prompt processing slows",
			"prefill"},
		{"llama.cpp: the slot wait is in the residual", []metrics.StageSummary{
			partsStage("c4", 4, 3, 0, 60, "timings"), partsStage("c8", 8, 4, 0, 62, "timings"),
			partsStage("c16", 16, 1500, 0, 63, "timings")},
			"where the time went: residual p50 4 ms → 1.5 s, prefill flat (63 ms): requests wait for a slot, or the network or the server's front slows (llama.cpp's timings do not time the wait apart)",
			"residual"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(tt.stages, plan.SLO{}, Server{})
			if len(a.Sweeps) != 1 {
				t.Fatalf("%d sweeps", len(a.Sweeps))
			}
			c := a.Sweeps[0].Cliff
			if !c.Found || c.Stage != "c16" {
				t.Fatalf("cliff %+v, want one at c16", c)
			}
			if !strings.Contains(c.Text, tt.want) {
				t.Errorf("cliff text\n  %s\nwant it to contain\n  %s", c.Text, tt.want)
			}
			if c.Explained == nil || c.Explained.Grew != tt.grew || c.Explained.From != "c8" {
				t.Errorf("explained %+v, want %s grew since c8", c.Explained, tt.grew)
			}
		})
	}
}

// Without a breakdown at both stages there is nothing to explain, and
// the finding's text is as it was.
func TestCliffUnexplained(t *testing.T) {
	stages := []metrics.StageSummary{
		partsStage("c4", 4, 2, 10, 60, "spans"), partsStage("c8", 8, 2, 20, 62, "spans"),
		partsStage("c16", 16, 2, 1700, 63, "spans")}
	stages[1].Breakdown = nil
	c := Analyze(stages, plan.SLO{}, Server{}).Sweeps[0].Cliff
	if !c.Found || c.Explained != nil || strings.Contains(c.Text, "where the time went") {
		t.Errorf("cliff %+v: want it found and unexplained", c)
	}
}

// A p99 finding is explained by the parts' p99s.
func TestExplainP99(t *testing.T) {
	s := Sweep{Scenario: "s", LoadUnit: UnitVUs}
	for _, st := range []metrics.StageSummary{partsStage("c4", 4, 2, 10, 60, "spans"), partsStage("c8", 8, 2, 400, 62, "spans")} {
		s.Points = append(s.Points, pointOf(st))
	}
	e := explain(Finding{Found: true, Kind: KindCliff, Stage: "c8", Metric: "ttft_p99"}, s)
	if e == nil || e.Quantile != "p99" || e.Grew != "queue" || e.Changes[0].Before != 20 || e.Changes[0].After != 800 {
		t.Errorf("explained %+v, want queue p99 20 → 800", e)
	}
}

// With no span or timings, vLLM's /metrics histograms over each stage's
// window explain the cliff, and the finding says where it read them.
func TestCliffExplainedByServerMetrics(t *testing.T) {
	start := time.Unix(1e9, 0)
	var stages []metrics.StageSummary
	for i, st := range []metrics.StageSummary{partsStage("c4", 4, 2, 10, 60, "spans"), partsStage("c8", 8, 2, 20, 62, "spans"),
		partsStage("c16", 16, 2, 1700, 63, "spans")} {
		st.Breakdown = nil
		st.Start, st.End = start.Add(time.Duration(i)*10*time.Second), start.Add(time.Duration(i+1)*10*time.Second)
		stages = append(stages, st)
	}
	// Scrapes every 2 s; the queue histogram's median 10, 20, then 1700 ms.
	series := func(name string, role servermetrics.Role, per [3]float64) servermetrics.Series {
		s := servermetrics.Series{Name: name, Role: role, Unit: servermetrics.UnitMS}
		for tick := 1; tick <= 15; tick++ {
			s.T = append(s.T, float64(2*tick))
			s.V = append(s.V, per[min((2*tick-1)/10, 2)])
		}
		return s
	}
	sm := &servermetrics.Result{Server: servermetrics.ServerVLLM, Series: []servermetrics.Series{
		series("vllm:request_queue_time_seconds:p50", servermetrics.RoleQueueTime.P50(), [3]float64{10, 20, 1700}),
		series("vllm:request_queue_time_seconds:p99", servermetrics.RoleQueueTime.P99(), [3]float64{20, 40, 3400}),
		series("vllm:request_prefill_time_seconds:p50", servermetrics.RolePrefillTime.P50(), [3]float64{60, 62, 63}),
		series("vllm:request_prefill_time_seconds:p99", servermetrics.RolePrefillTime.P99(), [3]float64{120, 124, 126}),
	}}
	c := Analyze(stages, plan.SLO{}, Server{Metrics: sm, Start: start}).Sweeps[0].Cliff
	if !c.Found || c.Explained == nil || c.Explained.Grew != "queue" {
		t.Fatalf("cliff %+v, want it explained by the queue", c)
	}
	if want := "queue p50 20 ms → 1.7 s, prefill flat (63 ms): requests queue (from the server's /metrics histograms)"; !strings.Contains(c.Text, want) {
		t.Errorf("cliff text\n  %s\nwant it to contain\n  %s", c.Text, want)
	}
}
