package report

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/llmload/llmload/engine/golden"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/threshold"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// dist is a plausible distribution scaled from a median of p50 ms, with
// confidence intervals that narrow as 1/√n and the percentiles flagged as
// engine/metrics flags them.
func dist(n int64, p50 float64) metrics.Dist {
	if n == 0 {
		return metrics.Dist{}
	}
	d := metrics.Dist{
		Count: n, Min: p50 * 0.4, Mean: p50 * 1.1, Stddev: p50 * 0.3,
		P50: p50, P90: p50 * 1.8, P95: p50 * 2.2, P99: p50 * 3.5, P999: p50 * 5, Max: p50 * 6,
		LowSamples: n < 1000,
	}
	values := []float64{d.P50, d.P90, d.P95, d.P99, d.P999}
	spread := []float64{1, 1.5, 2, 3, 6}       // relative half-width × √n
	need := []int64{20, 100, 200, 1000, 10000} // metrics' minimum counts
	names := []string{"p50", "p90", "p95", "p99", "p99.9"}
	var iv [5]metrics.Interval
	for i, v := range values {
		h := v * spread[i] / math.Sqrt(float64(n))
		iv[i] = metrics.Interval{math.Max(v-h, d.Min), math.Min(v+h, d.Max)}
		if n < need[i] || iv[i][1]-iv[i][0] > 0.25*v {
			d.Unreliable = append(d.Unreliable, names[i])
		}
	}
	d.CI = metrics.Intervals{P50: iv[0], P90: iv[1], P95: iv[2], P99: iv[3], P999: iv[4]}
	return d
}

// bucketEdgesMS are engine/metrics' histogram edges: 1, 1.5, 2, 3, 5, 7
// per decade, from 1 µs.
var bucketEdgesMS = func() []float64 {
	var out []float64
	for scale := 0.001; scale < 4e6; scale *= 10 {
		for _, m := range []float64{1, 1.5, 2, 3, 5, 7} {
			out = append(out, math.Round(m*scale*1e6)/1e6)
		}
	}
	return out
}()

// histDist is dist with a histogram of n values around each of the
// medians (two make it bimodal), spread over three buckets each.
func histDist(n int64, p50 float64, modes ...float64) metrics.Dist {
	d := dist(n, p50)
	if n == 0 {
		return d
	}
	counts := map[int]int64{}
	per := n / int64(len(modes))
	for k, m := range modes {
		share := per
		if k == len(modes)-1 {
			share = n - per*int64(len(modes)-1)
		}
		i, _ := slices.BinarySearch(bucketEdgesMS, m)
		counts[i-1] += share / 5
		counts[i+1] += share / 5
		counts[i] += share - 2*(share/5)
	}
	lo, hi := slices.Min(slices.Collect(maps.Keys(counts))), slices.Max(slices.Collect(maps.Keys(counts)))
	for i := lo; i <= hi; i++ {
		d.Histogram = append(d.Histogram, metrics.Bucket{LeMS: bucketEdgesMS[i], Count: counts[i]})
	}
	return d
}

func stage(scenario, name string, idx, vus int, startS, durS float64, ok, failed int64, ttft float64) metrics.StageSummary {
	out := ok * 180
	return metrics.StageSummary{
		Scenario: scenario, Stage: name, Index: idx, VUs: vus,
		Start:     t0.Add(time.Duration(startS * float64(time.Second))),
		End:       t0.Add(time.Duration((startS + durS) * float64(time.Second))),
		DurationS: durS, Complete: true,
		Requests: ok + failed, OK: ok, Failed: failed,
		ReqPerSec: float64(ok+failed) / durS, OutputTokPerSec: float64(out) / durS,
		InputTokPerSec: float64(ok*42) / durS, OutputTokens: out, InputTokens: ok * 42,
		TokensSource: map[string]int64{"usage": ok}, Errors: map[string]int64{},
		TTFB: dist(ok, ttft*0.8), TTFT: histDist(ok, ttft, ttft), TTFC: dist(ok, ttft), TPOT: dist(ok, 0.021*ttft),
		ITL: dist(ok*179, 0.02*ttft), E2E: histDist(ok, ttft*40, ttft*40),
	}
}

func singleFixture() (result.Meta, *metrics.Summary) {
	meta := result.Meta{Scenario: "scenarios/sweep.lua", Model: "sim-7b", Simulator: true,
		Start: t0, End: t0.Add(120 * time.Second), Version: "v0.1.0", Complete: true, Seed: 42}
	return meta, &metrics.Summary{
		Stages: []metrics.StageSummary{
			stage("sweep", "c1", 0, 1, 0, 60, 1200, 0, 31.26),
			stage("sweep", "c16", 1, 16, 60, 60, 9800, 0, 412.7),
		},
		ScriptErrors: []metrics.ScriptError{},
	}
}

func fullFixture() (result.Meta, *metrics.Summary) {
	meta := result.Meta{Scenario: "scenarios/mixed.lua", Target: "https://user:hunter2@llm.internal:8443/v1?api_key=sk-live-123&api-version=2024",
		Model: "Qwen/Qwen2.5-7B-Instruct", Start: t0, End: t0.Add(95*time.Second + 420*time.Millisecond),
		Version: "v0.1.0", Complete: false, Seed: -7, SLO: result.SLOFrom(plan.SLO{TTFT: 500 * time.Millisecond, E2E: 20 * time.Second})}
	c1 := chatC1()
	c8 := stage("chat", "c8", 1, 8, 60, 35.42, 0, 40, 0)
	c8.Complete = false
	c8.Errors = map[string]int64{"conn_refused": 25, "http_5xx:502": 15}
	c8.TokensSource = map[string]int64{}
	rag := ragSteady()
	stages := []metrics.StageSummary{c1, c8, rag}
	return meta, &metrics.Summary{
		Robustness: metrics.MergeRobustness(stages),
		Checks:     []metrics.CheckSummary{{Name: "has text", Passes: 100}, {Name: "status 200", Passes: 98, Fails: 2}},
		Metrics: map[string]metrics.MetricSummary{
			"judge_score": {Kind: engine.MetricTrend, Trend: dist(50, 0.8)},
			"retries":     {Kind: engine.MetricCounter, Count: 9, Sum: 12, PerSec: 0.126},
			"cache_hit":   {Kind: engine.MetricRate, Passes: 30, Total: 40, Rate: 0.75},
		},
		MetricErrors: []metrics.MetricError{{Message: `metric "retries": value NaN is not a finite number`, Count: 1}},
		Stages:       stages,
		ScriptErrors: []metrics.ScriptError{
			{Message: "scenarios/mixed.lua:41: attempt to index a nil value (field 'choices')", Count: 3},
			{Message: "scenarios/mixed.lua:12: bad pool\nstack traceback:\n\t[G]: ?", Count: 1},
		},
		Warmup: metrics.WarmupSummary{Requests: 5, Failed: 1},
		SLOSet: true,
		TimeSeries: []metrics.Point{
			{T: 0, Starts: 3, Completions: 1, InFlight: 2, OutputTokPerSec: 140, TTFTP50: ptr(0.4), TTFTP99: ptr(4.1)},
			{T: 1, Starts: 4, Completions: 5, Errors: 1, InFlight: 1, OutputTokPerSec: 610.5, TTFTP50: ptr(0.38), TTFTP99: ptr(4.4)},
		},
	}
}

// chatC1 is a closed-model stage of a reasoning model, with dirty
// requests, goodput, a token mismatch, a healthy client and a tag split.
func chatC1() metrics.StageSummary {
	c1 := stage("chat", "c1", 0, 1, 0, 60, 58, 2, 120.4)
	c1.Errors = map[string]int64{"http_5xx:503": 1, "timeout_ttft": 1}
	c1.IterationErrors = 3
	c1.DirtyRequests = 10
	// Dirty kinds of every verdict.
	c1.Robustness = map[string]metrics.RobustnessSummary{
		"empty": {Count: 3, Statuses: map[int]int64{400: 3}, Errors: map[string]int64{"http_4xx:400": 3},
			Handled: 3, Verdict: engine.VerdictHandled},
		"overlong": {Count: 4, Statuses: map[int]int64{400: 2, 500: 1, 0: 1},
			Errors:  map[string]int64{"http_4xx:400": 2, "http_5xx:500": 1, "timeout_ttft": 1},
			Handled: 2, Defects: 2, Verdict: engine.VerdictDefect},
		"invisible": {Count: 2, Statuses: map[int]int64{200: 2}, Errors: map[string]int64{},
			Accepted: 2, Verdict: engine.VerdictAccepted},
		"malformed_json": {Count: 1, Statuses: map[int]int64{0: 1}, Errors: map[string]int64{"canceled": 1},
			Canceled: 1, Verdict: engine.VerdictCanceled},
	}
	// A reasoning model: the answer starts well after the first (thinking) text.
	c1.ReasoningTokens = 3100
	c1.TTFC = dist(58, 900)
	c1.TokenCheck = metrics.TokenCheck{Compared: 58, Mismatched: 3, MeanRelDiff: 0.021}
	c1.GoodRequests, c1.Goodput, c1.GoodShare = 51, 0.85, 0.85
	c1.Client = &engine.ClientCheck{CPUPercent: 23, Cores: 2, SchedLatencyP99MS: 0.2, GCPauseP99MS: 0.1, GCPauseTotalMS: 3,
		MachineMeasured: true, MachineCores: 2, MachineCPUPercent: 31, OwnSharePercent: 74, RunQueue: 1.4, Samples: 60}
	// Later turns of iterations begun in the window, sent in the graceful stop.
	c1.PlannedS = c1.DurationS
	c1.TailRequests, c1.TailOK, c1.TailOutputTokens, c1.TailInputTokens = 4, 4, 310, 1200
	c1.ByTag = map[string]map[string]metrics.TagSummary{
		"prompt": {
			"short": {Requests: 31, OK: 30, Failed: 1, TTFT: dist(30, 45), TPOT: dist(30, 2.4), E2E: dist(30, 900)},
			"long":  {Requests: 29, OK: 28, Failed: 1, TTFT: dist(28, 310), TPOT: dist(28, 2.6), E2E: dist(28, 9800)},
		},
		"team": {"search": {Requests: 60, OK: 58, Failed: 2, TTFT: dist(58, 120.4), E2E: dist(58, 4816)}},
	}
	return c1
}

// ragSteady is an open-model stage with a bimodal tail (cache hits and
// misses), per-token ITL, approximate token counts and a client-bound
// load generator.
func ragSteady() metrics.StageSummary {
	rag := stage("rag", "steady", 0, 4, 0, 90, 350, 1, 0.42)
	rag.Errors = map[string]int64{"stream_truncated": 1}
	rag.TokensSource = map[string]int64{"usage": 300, "events": 50}
	rag.TargetRate, rag.ScheduledRate, rag.AchievedRate, rag.DroppedIterations = 4, 3.98, 3.9, 7
	rag.Iterations = 351
	rag.ScheduleLag = dist(351, 0.3)
	rag.TTFTSched, rag.E2ESched = dist(350, 0.5), dist(350, 17)
	rag.ITLToken = dist(350*190, 0.009)
	// Cache hits and misses: two humps.
	rag.TTFT, rag.E2E = histDist(350, 0.42, 0.3, 4.2), histDist(350, 16.8, 12, 140)
	rag.E2E.Clamped = 2
	rag.GoodRequests, rag.Goodput, rag.GoodShare = 349, 3.88, 0.994
	rag.Client = &engine.ClientCheck{CPUPercent: 196, Cores: 2, SchedLatencyP99MS: 8.4, GCPauseP99MS: 0.35, GCPauseTotalMS: 40,
		Bound: true, Reasons: []string{"CPU at 196% of 2 cores",
			"runnable goroutines waited 8.40 ms (p99) to run, so chunk timestamps may be that late"}}
	rag.ByTag = map[string]map[string]metrics.TagSummary{
		"doc": {
			"manual": {Requests: 200, OK: 200, TTFT: dist(200, 0.3), E2E: dist(200, 12)},
			"a-very-long-document-name-that-would-not-fit": {Requests: 100, OK: 99, Failed: 1, TTFT: dist(99, 4.2), E2E: dist(99, 140)},
			metrics.OtherTagValue:                          {Requests: 51, OK: 51, TTFT: dist(51, 0.5), E2E: dist(51, 20)},
		},
	}
	rag.TagKeysOverflow = 12
	rag.DirtyRequests = 2
	rag.Robustness = map[string]metrics.RobustnessSummary{
		"bad_role": {Count: 2, Statuses: map[int]int64{400: 2}, Errors: map[string]int64{"http_4xx:400": 2},
			Handled: 1, Defects: 1, Verdict: engine.VerdictDefect},
	}
	return rag
}

var fixtures = []struct {
	name string
	make func() (result.Meta, *metrics.Summary)
}{
	{"single", singleFixture},
	{"full", fullFixture},
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func render(t *testing.T, rep Reporter) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := rep(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := result.New(f.make())
			if f.name == "full" {
				r.Thresholds = fullThresholds()
			}
			golden(t, f.name+".txt.golden", render(t, Text(r)))
			golden(t, f.name+".json.golden", render(t, JSON(r)))
		})
	}
}

func TestTextContent(t *testing.T) {
	for _, tc := range []struct {
		fixture      string
		want, absent []string
	}{
		{"single",
			[]string{"target  built-in simulator, model sim-7b", "c16", "2m0s", "p99 95% CI", "tail:"},
			[]string{"sweep/c1", "*", "errors", "script errors", "incomplete", "cut", "TTFC", "ITL/tok",
				"goodput", "dirty", "robustness", "by tag", "client", "tokens", "!", "WARNING"}},
		{"full",
			[]string{"chat/c1", "rag/steady", "* not reliable: too few samples", "wider than 25% of the value",
				"conn_refused", "62.5%", "3  scenarios/mixed.lua:41:", "bad pool ...",
				"run incomplete (interrupted)", "35.4s cut", "warmup: 5 requests", "2 latency values",
				"TTFC", "ITL/tok", "ITL = gap between chunks as a user sees them",
				"goodput/s  good %", "85.0%", "TTFT ≤ 500ms, E2E ≤ 20s",
				"rag/steady !", "dirty", "by tag prompt", "by tag doc", "a-very-long-document-na…",
				"client: CPU 23% (of 200% for 2 cores), scheduling p99 0.2 ms, GC pauses p99 0.1 ms",
				"rag/steady: llmload itself was the bottleneck (CPU at 196% of 2 cores;",
				"the offline tokenizer cl100k_base differs from the server's usage by 2.1% on average (3 of 58 requests compared",
				"Set options.target.tokenizer to the model's tokenizer.json",
				"output tokens of 50 of 408 requests are counts of text events",
				"robustness: how the server answered", "✓ handled", "✗ DEFECT", "· accepted", "- canceled",
				"400×2 500×1 none×1", "dirty data: 12 requests, 3 defects in 2 kinds: bad_role, overlong",
				"! dirty data: 3 of 12 malformed requests"},
			[]string{"hunter2", "sk-live-123", "traceback", "by tag team"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			for _, f := range fixtures {
				if f.name != tc.fixture {
					continue
				}
				text := string(render(t, Text(result.New(f.make()))))
				assertText(t, text, tc.want, tc.absent)
			}
		})
	}
}

func TestTextWidth(t *testing.T) {
	for _, f := range fixtures {
		for i, line := range strings.Split(string(render(t, Text(result.New(f.make())))), "\n") {
			if n := len([]rune(line)); n > 120 {
				t.Errorf("%s line %d is %d columns, want <= 120: %q", f.name, i+1, n, line)
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			want := result.New(f.make())
			got, err := result.ReadJSON(bytes.NewReader(render(t, JSON(want))))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestReadJSONErrors(t *testing.T) {
	full := render(t, JSON(result.New(fullFixture())))
	for _, tc := range []struct {
		name  string
		input string
		want  error
		msg   string
	}{
		{"truncated", string(full[:len(full)/2]), result.ErrTruncated, "ends early"},
		{"empty", "  \n", result.ErrNotResult, "empty"},
		{"not JSON", "stage,vus\nc1,1\n", result.ErrNotResult, "invalid JSON"},
		{"no version", `{"run": {}}`, result.ErrNotResult, "schema_version"},
		{"future version", `{"schema_version": 2, "stages": []}`, result.ErrSchemaVersion, "2"},
		{"wrong type", `{"schema_version": 1, "stages": {}}`, result.ErrNotResult, "stages"},
		{"array", `[1, 2]`, result.ErrNotResult, "array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := result.ReadJSON(strings.NewReader(tc.input))
			if res != nil || !errors.Is(err, tc.want) {
				t.Fatalf("ReadJSON = %v, %v; want nil, %v", res, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

func TestNewWithoutSummary(t *testing.T) {
	r := result.New(result.Meta{Complete: true}, nil)
	if r.Stages == nil || r.ScriptErrors == nil {
		t.Error("New(nil) left nil slices; they would encode as null")
	}
	text := string(render(t, Text(r)))
	if !strings.Contains(text, "nothing was measured") {
		t.Errorf("text for an empty run:\n%s", text)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReportersReturnWriteErrors(t *testing.T) {
	r := result.New(singleFixture())
	for name, rep := range map[string]Reporter{"text": Text(r), "json": JSON(r)} {
		if err := rep(failWriter{}); err == nil {
			t.Errorf("%s reporter ignored a write error", name)
		}
	}
}

// TestFromCollector renders what a real Collector produced, with wall and
// monotonic clock readings, and reads it back unchanged.
func TestFromCollector(t *testing.T) {
	c := metrics.NewCollector()
	start := time.Now()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "only", Target: 2, At: start})
	for i := range 5 {
		c.Sample(engine.Sample{Scenario: "s", Stage: "only", Result: engine.Result{
			Start: start, TTFT: time.Duration(i+1) * time.Millisecond, E2E: time.Second,
			ITL: []time.Duration{time.Millisecond}, OutputTokens: 2, TokensSource: engine.TokensFromEvents,
		}})
	}
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "only", Target: 2, At: start.Add(2 * time.Second)})
	want := result.New(result.Meta{Scenario: "x.lua", Start: start, End: time.Now(), Complete: true}, c.Close())

	text := string(render(t, Text(want)))
	if got, want := fieldsOf(text, "only"), "[only 2 5 0 2.50 5.00 0.00 2.0s]"; got != want {
		t.Errorf("throughput row = %s, want %s in:\n%s", got, want, text)
	}
	got, err := result.ReadJSON(bytes.NewReader(render(t, JSON(want))))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, want)
	}
}

// fieldsOf returns the fields of the first line whose first field is first.
func fieldsOf(text, first string) string {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return fmt.Sprint(f)
		}
	}
	return ""
}

func fullThresholds() []threshold.Result {
	return []threshold.Result{
		{Expr: "ttft.p99", Kind: engine.MetricTrend, Passed: false, Outcomes: []threshold.Outcome{
			{Condition: "< 1s", Agg: metrics.AggP, Observed: 1420, Samples: 400}}},
		{Expr: "errors.rate", Kind: engine.MetricRate, Passed: true, Outcomes: []threshold.Outcome{
			{Condition: "< 50%", Agg: metrics.AggRate, Observed: 0.09, Samples: 451, Passed: true}}},
		{Expr: "ttft{stage:c8}.p99", Kind: engine.MetricTrend, Passed: false, Outcomes: []threshold.Outcome{
			{Condition: "< 800ms", Agg: metrics.AggP, NoData: true}}},
	}
}

func TestReadJSONNotAnObject(t *testing.T) {
	_, err := result.ReadJSON(strings.NewReader(`[1, 2]`))
	if err == nil || !strings.Contains(err.Error(), "the file holds a JSON array, not an object") {
		t.Errorf("err = %v", err)
	}
}
