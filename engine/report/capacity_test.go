package report

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/threshold"
)

// capacityProbes are a search of rates that doubles from 2/s, breaks at
// 16/s and bisects to 13/s; probe-05 needed a second window.
var capacityProbes = []struct {
	load    float64
	phase   string
	ttftMS  float64 // of the good requests
	bad     int     // in every 10 requests, this many miss the SLO
	windows int
	pass    bool
	why     string
}{
	{2, capacity.ProbeBracket, 180, 0, 1, true, "good 100.0% [91.2, 100.0] ≥ 90% (n=40); ttft.p99 240ms [230ms, 240ms] < 2s"},
	{4, capacity.ProbeBracket, 210, 0, 1, true, "good 100.0% [95.4, 100.0] ≥ 90% (n=80); ttft.p99 270ms [260ms, 270ms] < 2s"},
	{8, capacity.ProbeBracket, 320, 0, 1, true, "good 100.0% [97.7, 100.0] ≥ 90% (n=160); ttft.p99 380ms [380ms, 380ms] < 2s"},
	{16, capacity.ProbeBracket, 800, 6, 1, false, "good 40.0% [34.8, 45.4] < 90% (n=320); ttft.p99 2.5s not < 2s"},
	{12, capacity.ProbeBisect, 640, 0, 2, true, "good 100.0% [99.2, 100.0] ≥ 90% (n=480); ttft.p99 700ms [700ms, 700ms] < 2s"},
	{14, capacity.ProbeBisect, 700, 3, 1, false, "good 70.0% [64.4, 75.0] < 90% (n=280); ttft.p99 2.5s not < 2s"},
	{13, capacity.ProbeBisect, 600, 2, 1, false, "good 80.0% [74.7, 84.4] < 90% (n=260); ttft.p99 2.5s not < 2s"},
}

// capacityResult runs the probes' samples through a real collector, so
// that the probes' figures come from histograms as in a run.
func capacityResult(t testing.TB) *result.Result {
	t.Helper()
	slo := plan.SLO{TTFT: time.Second}
	col := metrics.NewCollector(metrics.WithSLO(slo))
	search := plan.CapacitySearch{Load: plan.CapacityRate, Start: 2, Max: 64, Growth: 2, Precision: 0.1,
		Warmup: 5 * time.Second, Window: 20 * time.Second, MaxWindow: 80 * time.Second, GoodShare: 0.9,
		Conditions: []string{"ttft.p99 < 2s"}, MinSamples: 30}
	out := capacity.Outcome{Scenario: "capacity", Load: plan.CapacityRate, Capacity: 12.5, Lo: 12, Hi: 13}
	at := t0
	index := 0
	for i, p := range capacityProbes {
		probe := capacity.Probe{Scenario: "capacity", Index: i, Load: p.load, Phase: p.phase, Start: at.Add(5 * time.Second),
			Extended: p.windows - 1}
		at = at.Add(5 * time.Second)
		for w := range p.windows {
			name := fmt.Sprintf("probe-%02d", i+1)
			if w > 0 {
				name += fmt.Sprintf(".%d", w+1)
			}
			probe.Stages = append(probe.Stages, name)
			feedProbeWindow(col, name, index, p.load, at, p.ttftMS, p.bad)
			index++
			at = at.Add(20 * time.Second)
		}
		probe.End = at
		v := capacity.Verdict{Decided: true, Pass: p.pass, Why: p.why}
		out.Probes = append(out.Probes, capacity.ProbeResult{Probe: probe, Verdict: v})
	}
	meta := result.Meta{Scenario: "scenarios/capacity.lua", Model: "sim-7b", Simulator: true, Start: t0, End: at,
		Version: "v0.1.0", Complete: true, Seed: 7, SLO: result.SLOFrom(slo)}
	r := result.New(meta, col.Close())
	r.AddCapacity(capacity.ResultOf(out, search, r.Stages, r.SLOSet))
	r.Thresholds = []threshold.Result{{Expr: "capacity.rate", Kind: threshold.KindCapacity, Passed: true, Outcomes: []threshold.Outcome{
		{Condition: "> 10", Agg: plan.CapacityRate, Observed: 12.5, Samples: 7, Passed: true}}}}
	return r
}

// feedProbeWindow sends one 20 s window at load/s: bad of every 10
// requests miss the 1 s TTFT objective at 2.5 s.
func feedProbeWindow(col *metrics.Collector, stage string, index int, load float64, start time.Time, ttftMS float64, bad int) {
	col.StageStarted(engine.StageMark{Scenario: "capacity", Stage: stage, Index: index, Rate: load, At: start})
	n := int(20 * load)
	for k := range n {
		begin := start.Add(time.Duration(float64(k) / load * float64(time.Second)))
		col.IterationStarted(engine.IterationMark{Scenario: "capacity", Stage: stage, Scheduled: begin, Started: begin.Add(time.Millisecond)})
		ttft := time.Duration((ttftMS + float64(k%7)*10) * float64(time.Millisecond))
		if k%10 < bad {
			ttft = 2500 * time.Millisecond
		}
		col.Sample(engine.Sample{Scenario: "capacity", Stage: stage, Scheduled: begin, Result: engine.Result{
			Start: begin.Add(time.Millisecond), Status: 200, TTFB: ttft / 2, TTFT: ttft, TTFC: ttft,
			E2E: ttft + 3*time.Second, TPOT: 30 * time.Millisecond, ITL: []time.Duration{30 * time.Millisecond},
			OutputTokens: 100, InputTokens: 200, TokensSource: engine.TokensFromUsage, InputTokensSource: engine.TokensFromUsage}})
	}
	col.StageEnded(engine.StageMark{Scenario: "capacity", Stage: stage, Index: index, Rate: load, At: start.Add(20 * time.Second)})
}

func TestCapacityGolden(t *testing.T) {
	r := capacityResult(t)
	golden(t, "capacity.txt.golden", render(t, Text(r)))
	golden(t, "capacity.html.golden", render(t, HTML(r)))
}

func TestCapacityJSONRoundTrip(t *testing.T) {
	want := capacityResult(t)
	data := render(t, JSON(want))
	got, err := result.ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Capacity, want.Capacity) {
		t.Errorf("capacity round trip differs:\ngot  %+v\nwant %+v", got.Capacity, want.Capacity)
	}
	for _, field := range []string{`"capacity": [`, `"unit": "req/s"`, `"lo": 12`, `"hi": 13`, `"good_share": 0.9`,
		`"conditions": [`, `"verdict": "pass"`, `"ttft_p99_ms"`, `"stages": [`, `"probe-05.2"`} {
		if !bytes.Contains(data, []byte(field)) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	plain := result.New(singleFixture())
	if data := render(t, JSON(plain)); bytes.Contains(data, []byte(`"capacity"`)) {
		t.Error("a result without a capacity search writes a capacity field")
	}
}

func TestCapacityProbeFigures(t *testing.T) {
	c := capacityResult(t).Capacity[0]
	p := c.Probes[4] // 12/s over two windows
	if got, want := p.Requests, int64(480); got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
	if p.GoodShare == nil || *p.GoodShare != 1 {
		t.Errorf("good share = %v, want 1", p.GoodShare)
	}
	if got, want := p.ReqPerSec, 12.0; got != want {
		t.Errorf("req/s = %v, want %v", got, want)
	}
	if p.TTFTP99MS < 640 || p.TTFTP99MS > 700 {
		t.Errorf("TTFT p99 = %v, want within the window's 640..700 ms", p.TTFTP99MS)
	}
	if got := c.Probes[3].Verdict; got != result.ProbeFail {
		t.Errorf("probe-04 verdict %q, want fail", got)
	}
}

func TestCapacityAnswer(t *testing.T) {
	tests := []struct {
		c    result.Capacity
		want string
	}{
		{result.Capacity{Unit: "req/s", Capacity: 41.5, Lo: 39.8, Hi: 43.2}, "capacity 41.5 req/s, between 39.8 and 43.2"},
		{result.Capacity{Unit: "VUs", Capacity: 64, Lo: 64, AtLeast: true}, "capacity at least 64 VUs (held at the search's max)"},
		{result.Capacity{Unit: "req/s", Hi: 1}, "capacity below 1 req/s (the lowest load probed broke)"},
		{result.Capacity{Unit: "req/s"}, "capacity unknown: no probe was decided"},
	}
	for _, tt := range tests {
		if got := tt.c.Answer(); got != tt.want {
			t.Errorf("Answer() = %q, want %q", got, tt.want)
		}
	}
}

func TestCapacityStoppedWarns(t *testing.T) {
	r := result.New(singleFixture())
	r.AddCapacity(result.Capacity{Scenario: "cap", Unit: "req/s", Capacity: 30, Lo: 20, Hi: 40,
		Stopped: "llmload was the bottleneck (CLIENT-BOUND): CPU at 195%"})
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[len(r.Warnings)-1], "capacity search cap stopped before it converged: llmload was the bottleneck") {
		t.Errorf("warnings = %q", r.Warnings)
	}
	if text := string(render(t, Text(r))); !strings.Contains(text, "stopped: llmload was the bottleneck") {
		t.Errorf("text lacks the stop:\n%s", text)
	}
}
