package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/llmload/llmload/engine/golden"
	"github.com/llmload/llmload/engine/plan"

	"github.com/llmload/llmload/engine"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func TestSummaryJSONGolden(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	sum := c.Close()
	got, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", append(got, '\n'))

	var back Summary
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.MarshalIndent(&back, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Errorf("summary JSON does not survive a round trip:\n%s", again)
	}
}

func TestSummaryChecksAndMetrics(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	sum := c.Close()
	s1, s2, c1 := findStage(t, sum, "s1"), findStage(t, sum, "s2"), findStage(t, sum, "c1")
	for _, tc := range []struct {
		name      string
		got, want []CheckSummary
	}{
		{"s1", s1.Checks, []CheckSummary{{"status 200", 3, 1}}},
		{"s2", s2.Checks, []CheckSummary{{"has text", 1, 1}}},
		{"c1", c1.Checks, []CheckSummary{{"status 200", 2, 0}}},
		{"run", sum.Checks, []CheckSummary{{"has text", 1, 1}, {"status 200", 5, 1}}},
	} {
		if g, w := jsonOf(t, tc.got), jsonOf(t, tc.want); g != w {
			t.Errorf("%s checks = %s, want %s", tc.name, g, w)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want MetricSummary
	}{
		{"s1 bytes", s1.Metrics["bytes"], MetricSummary{Kind: "counter", Count: 2, Sum: 150, PerSec: 15}},
		{"run bytes", sum.Metrics["bytes"], MetricSummary{Kind: "counter", Count: 3, Sum: 175, PerSec: 8.75}},
		{"s2 cache_hit", s2.Metrics["cache_hit"], MetricSummary{Kind: "rate", Passes: 0, Total: 1}},
		{"run cache_hit", sum.Metrics["cache_hit"], MetricSummary{Kind: "rate", Passes: 2, Total: 4, Rate: 0.5}},
		{"run unused", sum.Metrics["unused"], MetricSummary{Kind: "counter"}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	if _, ok := c1.Metrics["ratio"]; ok {
		t.Error("c1 lists ratio, which had no value in c1")
	}
	r := sum.Metrics["ratio"].Trend
	if r.Count != 4 || r.Min != -1.5 || r.Max != 10.125 || r.Mean != 2.90625 {
		t.Errorf("run ratio = %+v, want count 4, min -1.5, max 10.125, mean 2.90625", r)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMetricSummaryJSON(t *testing.T) {
	for _, tc := range []struct {
		m    MetricSummary
		want string
	}{
		{MetricSummary{Kind: "counter", Count: 3, Sum: 1.5, PerSec: 0.25},
			`{"kind":"counter","count":3,"sum":1.5,"rate":0.25}`},
		{MetricSummary{Kind: "rate", Passes: 1, Total: 4, Rate: 0.25},
			`{"kind":"rate","passes":1,"total":4,"rate":0.25}`},
		{MetricSummary{Kind: "trend", Trend: Dist{Count: 2, Min: -1, Max: 1, P50: -1}},
			`{"kind":"trend","count":2,"min":-1,"mean":0,"stddev":0,"p50":-1,"p90":0,"p95":0,"p99":0,"p999":0,"max":1,"low_samples":false,"clamped":0}`},
	} {
		got := jsonOf(t, tc.m)
		if got != tc.want {
			t.Errorf("JSON = %s, want %s", got, tc.want)
		}
		var back MetricSummary
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tc.m) {
			t.Errorf("round trip = %+v, want %+v", back, tc.m)
		}
	}
	if _, err := json.Marshal(MetricSummary{Kind: "gauge"}); err == nil {
		t.Error("Marshal of kind gauge: no error")
	}
	var m MetricSummary
	if err := json.Unmarshal([]byte(`{"kind":"gauge"}`), &m); err == nil || !strings.Contains(err.Error(), "gauge") {
		t.Errorf("Unmarshal of kind gauge: error %v, want one naming it", err)
	}
}

func TestCustomTrendFractionalAndNegative(t *testing.T) {
	c := NewCollector()
	// -5.000 .. 4.990 in steps of 0.01, shuffled by a stride coprime to 1000.
	for i := range 1000 {
		v := float64((i*617)%1000-500) / 100
		c.Metric(metricSample("sc", "st", "delta", engine.MetricTrend, v, nil))
	}
	c.Metric(metricSample("sc", "st", "tiny", engine.MetricTrend, 0.0001, nil))
	c.Metric(metricSample("sc", "st", "tiny", engine.MetricTrend, 0.0003, nil))
	c.Metric(metricSample("sc", "st", "huge", engine.MetricTrend, 5e12, nil))
	c.Metric(metricSample("sc", "st", "huge", engine.MetricTrend, -5e12, nil))
	c.Metric(metricSample("sc", "st", "huge", engine.MetricTrend, 1, nil))
	c.Metric(metricSample("sc", "st", "max", engine.MetricTrend, math.MaxFloat64, nil))
	c.Metric(metricSample("sc", "st", "max", engine.MetricTrend, math.MaxFloat64, nil))
	sum := c.Close()
	d := sum.Metrics["delta"].Trend
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"count", float64(d.Count), 1000},
		{"min", d.Min, -5},
		{"max", d.Max, 4.99},
		{"mean", d.Mean, -0.005},
		{"p50", d.P50, -0.01},
		{"p90", d.P90, 3.99},
		{"p99", d.P99, 4.89},
		{"p999", d.P999, 4.98},
	} {
		if math.Abs(tc.got-tc.want) > math.Abs(tc.want)/1000+1e-9 {
			t.Errorf("delta %s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if want := 2.8868; math.Abs(d.Stddev-want) > want/100 {
		t.Errorf("delta stddev = %v, want about %v", d.Stddev, want)
	}
	tiny := sum.Metrics["tiny"].Trend
	if tiny.Min != 0.0001 || tiny.Max != 0.0003 || math.Abs(tiny.Mean-0.0002) > 1e-12 {
		t.Errorf("tiny = %+v, want exact min 0.0001, max 0.0003, mean 0.0002", tiny)
	}
	if tiny.P50 < tiny.Min || tiny.P50 > tiny.Max {
		t.Errorf("tiny p50 = %v outside [min, max]", tiny.P50)
	}
	if _, err := json.Marshal(sum); err != nil {
		t.Errorf("summary with extreme values does not encode: %v", err)
	}
	huge := sum.Metrics["huge"].Trend
	if got, want := huge.Clamped, int64(2); got != want {
		t.Errorf("huge clamped = %d, want %d", got, want)
	}
	if huge.Count != 3 || huge.Min != -1e12 || huge.Max != 1e12 || huge.P99 != 1e12 {
		t.Errorf("huge = %+v, want count 3, extremes and p99 at the bounds ±1e12", huge)
	}
}

func TestMetricErrors(t *testing.T) {
	c := NewCollector()
	c.Metric(metricSample("sc", "st", "lat", engine.MetricTrend, 1, nil))
	c.Metric(metricSample("sc", "st", "lat", engine.MetricCounter, 2, nil))
	c.Metric(metricSample("sc", "st", "lat", engine.MetricCounter, 3, nil))
	c.Metric(metricSample("sc", "st", "lat", engine.MetricTrend, math.NaN(), nil))
	c.Metric(metricSample("sc", "st", "n", "gauge", 1, nil))
	c.Metric(metricSample("sc", "st", "ttft", engine.MetricTrend, 1, nil))
	c.Metric(metricSample("sc", "st", "", engine.MetricTrend, 1, nil))
	c.Metric(metricSample("sc", "st", checksName, engine.MetricTrend, 1, map[string]string{"check": "x"}))
	c.Metric(metricSample("sc", "st", "inf", engine.MetricCounter, math.Inf(1), nil))
	c.Metric(metricSample("sc", "st", "big", engine.MetricCounter, -2e15, nil))
	sum := c.Close()
	want := []MetricError{
		{`metric "lat": used as counter, but it is a trend`, 2},
		{`metric "": empty name`, 1},
		{`metric "big": value -2e+15 is beyond ±1e+15`, 1},
		{`metric "checks": kind "trend", but checks is a rate`, 1},
		{`metric "inf": value +Inf is not a finite number`, 1},
		{`metric "lat": value NaN is not a finite number`, 1},
		{`metric "n": unknown kind "gauge"`, 1},
		{`metric "ttft": the name of a built-in metric`, 1},
	}
	if g, w := jsonOf(t, sum.MetricErrors), jsonOf(t, want); g != w {
		t.Errorf("metric errors =\n%s\nwant\n%s", g, w)
	}
	if got, want := sum.Metrics["lat"].Trend.Count, int64(1); got != want {
		t.Errorf("lat count = %d, want %d (conflicting samples must stay out)", got, want)
	}
	if _, ok := sum.Metrics["n"]; ok {
		t.Error("metric of unknown kind listed")
	}
	if got := len(findStage(t, sum, "st").Checks); got != 0 {
		t.Errorf("%d checks, want 0", got)
	}
}

// TestSummaryNewFiguresGolden pins the JSON of the figures the fixture
// leaves at zero: goodput under an SLO, dirty requests, reasoning and
// token-level figures, the token check and the client self-check.
func TestSummaryNewFiguresGolden(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{TTFT: 300 * time.Millisecond}))
	c.StageStarted(mark("sweep", "c1", 0, 2, 0))
	for i, ttft := range []float64{100, 200, 400} {
		s := req("sweep", "c1", float64(i), ttft, 1000, 0, map[string]string{"prompt": "short"})
		s.Streamed, s.TTFC, s.ReasoningTokens = true, msD(ttft+50), 2
		s.TokenITL = []time.Duration{5 * time.Millisecond, 5 * time.Millisecond}
		s.InputTokensSource, s.ClientOutputTokens = engine.TokensFromTokenizer, 6
		c.Sample(s)
	}
	d := failSample("c1", 1, "http_4xx:400")
	d.Dirty, d.Status = "malformed_json", 400
	c.Sample(d)
	c.StageEnded(mark("sweep", "c1", 0, 2, 3))
	sum := c.Close()
	sum.Stages[0].Client = &engine.ClientCheck{CPUPercent: 12.5, Cores: 2, SchedLatencyP99MS: 0.25}
	got, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_new_figures.json", append(got, '\n'))
	var back Summary
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, sum) {
		t.Errorf("summary does not survive a JSON round trip:\n%+v\nwant\n%+v", back, *sum)
	}
}
