package metrics

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// closeTo compares with a relative tolerance for HDR's three significant
// digits and an absolute one for float noise.
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= math.Abs(want)/1000+1e-9
}

func TestSnapshotValue(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	snap := c.Snapshot()
	c.Close()
	for _, tc := range []struct {
		metric string
		f      Filter
		agg    string
		p      float64
		want   float64
		n      int64
	}{
		// Trends, in ms, over the whole run and by stage or scenario.
		{"ttft", nil, AggAvg, 0, 450, 8},
		{"ttft", nil, AggMin, 0, 100, 8},
		{"ttft", nil, AggMax, 0, 800, 8},
		{"ttft", nil, AggMed, 0, 400, 8},
		{"ttft", nil, AggP, 99, 800, 8},
		{"ttft", nil, AggP, 25, 200, 8},
		{"ttft", nil, AggCount, 0, 8, 8},
		{"ttft", Filter{"stage": "s1"}, AggAvg, 0, 250, 4},
		{"ttft", Filter{"scenario": "open"}, AggAvg, 0, 350, 6},
		{"ttft", Filter{"scenario": "open", "stage": "s2"}, AggMax, 0, 600, 2},
		{"ttft", Filter{"stage": "nope"}, AggP, 99, 0, 0},
		{"ttfb", nil, AggMax, 0, 400, 8},
		{"e2e", Filter{"stage": "c1"}, AggMin, 0, 7000, 2},
		{"tpot", nil, AggAvg, 0, 10, 8},
		{"itl", nil, AggAvg, 0, 15, 16},
		{"itl", Filter{"stage": "s2"}, AggCount, 0, 4, 4},
		{"schedule_lag", nil, AggAvg, 0, 15.714, 7},
		{"schedule_lag", Filter{"stage": "s2"}, AggMax, 0, 30, 2},
		{"schedule_lag", Filter{"scenario": "closed"}, AggAvg, 0, 0, 0},
		{"ttft_sched", nil, AggAvg, 0, 416.667, 6},
		{"ttft_sched", Filter{"stage": "s1"}, AggMin, 0, 150, 4},
		{"ttft_sched", Filter{"stage": "s2"}, AggMax, 0, 700, 2},
		{"e2e_sched", nil, AggMax, 0, 6100, 6},
		{"e2e_sched", Filter{"stage": "s1"}, AggMed, 0, 2050, 4},
		// Tracked tag filters.
		{"ttft", Filter{"prompt": "short"}, AggAvg, 0, 450, 4},
		{"ttft", Filter{"prompt": "short"}, AggMin, 0, 100, 4},
		{"ttft", Filter{"prompt": "long", "scenario": "open"}, AggAvg, 0, 450, 4},
		{"requests", Filter{"prompt": "short"}, AggCount, 0, 5, 5},
		{"requests", Filter{"prompt": "short"}, AggRate, 0, 0.25, 5},
		{"errors", Filter{"prompt": "short"}, AggRate, 0, 0.2, 5},
		{"errors", Filter{"prompt": "short"}, AggCount, 0, 1, 5},
		{"ratio", Filter{"region": "eu"}, AggAvg, 0, 0.5, 3},
		{"checks", Filter{"check": "status 200", "prompt": "short"}, AggRate, 0, 0, 0},
		// Counters: count is the sum, rate per second of the window.
		{"requests", nil, AggCount, 0, 9, 9},
		{"requests", nil, AggRate, 0, 0.45, 9},
		{"requests", Filter{"stage": "s1"}, AggRate, 0, 0.5, 5},
		{"iterations", nil, AggCount, 0, 9, 9},
		{"iterations", Filter{"stage": "s2"}, AggRate, 0, 0.2, 2},
		{"dropped_iterations", nil, AggCount, 0, 4, 4},
		{"dropped_iterations", Filter{"stage": "s1"}, AggRate, 0, 0.3, 3},
		{"dropped_iterations", Filter{"scenario": "closed"}, AggCount, 0, 0, 0},
		{"iteration_errors", nil, AggCount, 0, 1, 1},
		{"output_tokens", nil, AggCount, 0, 40, 8},
		{"output_tokens", Filter{"scenario": "open"}, AggRate, 0, 1.5, 6},
		{"input_tokens", nil, AggRate, 0, 4, 8},
		// Rates: rate is the share of non-zero values, count their number.
		{"errors", nil, AggRate, 0, 1.0 / 9, 9},
		{"errors", nil, AggCount, 0, 1, 9},
		{"errors", Filter{"stage": "c1"}, AggRate, 0, 0, 2},
		{"checks", nil, AggRate, 0, 0.75, 8},
		{"checks", nil, AggCount, 0, 6, 8},
		{"checks", Filter{"check": "status 200"}, AggRate, 0, 5.0 / 6, 6},
		{"checks", Filter{"check": "has text", "stage": "s2"}, AggRate, 0, 0.5, 2},
		{"checks", Filter{"check": "has text", "stage": "s1"}, AggRate, 0, 0, 0},
		// Custom metrics in the script's units.
		{"ratio", nil, AggAvg, 0, 2.90625, 4},
		{"ratio", nil, AggMin, 0, -1.5, 4},
		{"ratio", nil, AggMax, 0, 10.125, 4},
		{"ratio", nil, AggMed, 0, 0.25, 4},
		{"ratio", nil, AggP, 25, -1.5, 4},
		{"ratio", nil, AggP, 100, 10.125, 4},
		{"ratio", Filter{"stage": "s1"}, AggP, 90, 2.75, 3},
		{"ratio", Filter{"stage": "s1"}, AggP, 75, 0.25, 3}, // HDR ranks round: 0.75×3+0.5 → 2nd
		{"ratio", nil, AggCount, 0, 4, 4},
		{"bytes", nil, AggCount, 0, 175, 3},
		{"bytes", nil, AggRate, 0, 8.75, 3},
		{"bytes", Filter{"stage": "c1"}, AggRate, 0, 1.25, 1},
		{"cache_hit", nil, AggRate, 0, 0.5, 4},
		{"cache_hit", nil, AggCount, 0, 2, 4},
		{"unused", nil, AggCount, 0, 0, 0},
	} {
		name := fmt.Sprintf("%s%v.%s%v", tc.metric, tc.f, tc.agg, tc.p)
		t.Run(name, func(t *testing.T) {
			for _, s := range []*Snapshot{snap, c.Snapshot()} {
				v, n, err := s.Value(Query{Metric: tc.metric, Filter: tc.f, Agg: tc.agg, P: tc.p})
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(v, tc.want) {
					t.Errorf("value = %v, want %v", v, tc.want)
				}
				if got, want := n, tc.n; got != want {
					t.Errorf("n = %d, want %d", got, want)
				}
			}
		})
	}
}

func TestSnapshotValueErrors(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	snap := c.Snapshot()
	for _, tc := range []struct {
		q    Query
		want string // in the error
	}{
		{Query{Metric: "nope", Agg: AggAvg}, `unknown metric "nope"`},
		{Query{Metric: "ttft", Agg: AggRate}, "ttft is a trend: aggregation \"rate\" does not apply (valid: avg, min, max, med, p, count)"},
		{Query{Metric: "requests", Agg: AggP, P: 99}, "requests is a counter"},
		{Query{Metric: "errors", Agg: AggAvg}, "errors is a rate"},
		{Query{Metric: "checks", Agg: AggMed}, "checks is a rate"},
		{Query{Metric: "bytes", Agg: AggMax}, "bytes is a counter"},
		{Query{Metric: "ttft", Agg: ""}, `aggregation ""`},
		{Query{Metric: "ttft", Agg: AggP, P: 101}, "percentile 101 is outside 0..100"},
		{Query{Metric: "ttft", Agg: AggP, P: math.NaN()}, "percentile NaN"},
		{Query{Metric: "ttft", Filter: Filter{"prompt": "medium"}, Agg: AggAvg}, `ttft{"prompt":"medium"} was not tracked`},
		{Query{Metric: "e2e", Filter: Filter{"prompt": "short"}, Agg: AggAvg}, "was not tracked"},
		{Query{Metric: "ttft", Filter: Filter{"prompt": "long"}, Agg: AggAvg}, "was not tracked"}, // tracked with scenario only
		{Query{Metric: "checks", Filter: Filter{"prompt": "short"}, Agg: AggRate}, "was not tracked"},
	} {
		_, n, err := snap.Value(tc.q)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Value(%+v) error = %v, want one containing %q", tc.q, err, tc.want)
		}
		if n != 0 {
			t.Errorf("Value(%+v) n = %d with an error, want 0", tc.q, n)
		}
	}
	c.Close()
}

func TestTrackErrors(t *testing.T) {
	c := NewCollector()
	if err := c.Declare(plan.MetricDef{Name: "mine", Kind: engine.MetricRate}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		metric string
		f      Filter
		want   string // in the error; "" for none
	}{
		{"ttft", Filter{"prompt": "short"}, ""},
		{"ttft", Filter{"prompt": "short"}, ""}, // twice: a no-op
		{"ttft", Filter{"stage": "c1"}, ""},     // needs no view
		{"checks", Filter{"check": "ok"}, ""},   // needs no view
		{"mine", Filter{"kind": "a"}, ""},
		{"nope", Filter{"prompt": "short"}, `unknown metric "nope"`},
		{"later", Filter{"prompt": "short"}, `unknown metric "later"`},
		{"iterations", Filter{"prompt": "short"}, "iterations carries no tags"},
		{"schedule_lag", Filter{"prompt": "short"}, "schedule_lag carries no tags"},
		{"dropped_iterations", Filter{"stage": "s1"}, ""},
		{"ttft", Filter{"": "x"}, "empty tag name"},
	} {
		err := c.Track(tc.metric, tc.f)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Track(%s, %v) = %v, want nil", tc.metric, tc.f, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Track(%s, %v) = %v, want an error containing %q", tc.metric, tc.f, err, tc.want)
		}
	}
	c.Close()
	if err := c.Track("ttft", Filter{"prompt": "long"}); err != ErrClosed {
		t.Errorf("Track after Close = %v, want ErrClosed", err)
	}
	if err := c.Declare(plan.MetricDef{Name: "x", Kind: engine.MetricRate}); err != ErrClosed {
		t.Errorf("Declare after Close = %v, want ErrClosed", err)
	}
}

// TestTrackMatchesTagsAndStage feeds one view by tag and stage together
// and checks that samples missing the tag or from another stage stay out.
func TestTrackMatchesTagsAndStage(t *testing.T) {
	c := NewCollector()
	f := Filter{"prompt": "short", "stage": "s1"}
	if err := c.Track("e2e", f); err != nil {
		t.Fatal(err)
	}
	c.Sample(req("open", "s1", 0, 10, 100, 0, short))
	c.Sample(req("open", "s1", 0, 10, 200, 0, long))
	c.Sample(req("open", "s1", 0, 10, 300, 0, nil))
	c.Sample(req("open", "s2", 0, 10, 400, 0, short))
	c.Sample(req("open", "s1", 0, 10, 500, 0, map[string]string{"prompt": "short", "x": "y"}))
	c.Close()
	v, n, err := c.Snapshot().Value(Query{Metric: "e2e", Filter: f, Agg: AggAvg})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, int64(2); got != want {
		t.Errorf("n = %d, want %d", got, want)
	}
	if got, want := v, 300.0; got != want {
		t.Errorf("avg = %v, want %v", got, want)
	}
}

func TestDeclare(t *testing.T) {
	c := NewCollector()
	err := c.Declare(
		plan.MetricDef{Name: "good", Kind: engine.MetricTrend},
		plan.MetricDef{Name: "", Kind: engine.MetricTrend},
		plan.MetricDef{Name: "ttft", Kind: engine.MetricTrend},
		plan.MetricDef{Name: "odd", Kind: "gauge"},
		plan.MetricDef{Name: "good", Kind: engine.MetricRate},
		plan.MetricDef{Name: "good", Kind: engine.MetricTrend}, // again, same kind: fine
	)
	for _, want := range []string{"empty metric name", `"ttft": the name of a built-in metric`,
		`"odd": unknown kind "gauge"`, `"good" as rate: it is a trend`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Declare error = %v, want it to contain %q", err, want)
		}
	}
	if err := c.Declare(); err != nil {
		t.Errorf("Declare() = %v, want nil", err)
	}
	snap := c.Snapshot()
	if k, ok := snap.Kind("good"); !ok || k != engine.MetricTrend {
		t.Errorf("Kind(good) = %q, %v, want trend, true", k, ok)
	}
	if _, ok := snap.Kind("odd"); ok {
		t.Error("Kind(odd) known, want unknown")
	}
	if k, ok := snap.Kind("itl"); !ok || k != engine.MetricTrend {
		t.Errorf("Kind(itl) = %q, %v, want trend, true", k, ok)
	}
	if _, n, err := snap.Value(Query{Metric: "good", Agg: AggP, P: 95}); err != nil || n != 0 {
		t.Errorf("Value(good.p95) = n %d, err %v; want no data, no error", n, err)
	}
	sum := c.Close()
	if got, want := sum.Metrics["good"].Kind, engine.MetricTrend; got != want {
		t.Errorf("summary metric good kind = %q, want %q (declared metrics are listed)", got, want)
	}
}

func TestBuiltin(t *testing.T) {
	b := Builtin()
	for name, want := range map[string]string{
		"ttft": "trend", "tpot": "trend", "itl": "trend", "e2e": "trend", "ttfb": "trend", "connect": "trend", "tls": "trend",
		"schedule_lag": "trend", "ttft_sched": "trend", "e2e_sched": "trend",
		"requests": "counter", "iterations": "counter", "dropped_iterations": "counter",
		"dropped_max_vus": "counter", "dropped_growing": "counter",
		"iteration_errors": "counter", "output_tokens": "counter", "input_tokens": "counter",
		"errors": "rate", "checks": "rate",
		"ttfc": "trend", "itl_token": "trend", "reasoning_tokens": "counter",
		"goodput": "counter", "good_share": "rate", "inputs": "counter", "tool_calls": "counter",
		"dirty.requests": "counter", "dirty.defects": "counter", "dirty.handled": "counter", "dirty.accepted": "counter",
		"media_requests": "counter", "encode": "trend", "upload": "trend", "media_upload": "trend", "body_bytes": "counter",
		"images": "counter", "audios": "counter", "videos": "counter", "audio_in": "counter",
		"media_tokens": "counter", "image_tokens": "counter", "images_counted": "counter",
		"tokens_per_image": "trend", "audio_out": "counter", "audio_bytes": "counter",
		"rtf": "trend", "audio_bytes_per_s": "trend",
		"part.requests": "counter", "part.from_spans": "counter", "part.from_timings": "counter", "part.negative": "counter",
		"part.upload": "trend", "part.residual": "trend", "part.queue": "trend", "part.prefill": "trend",
		"part.decode": "trend", "part.tail": "trend",
		"task": "trend", "tasks": "counter", "task_good": "counter", "task_failed": "rate",
		"task_calls": "trend", "task_tokens": "trend", "task_tool": "trend",
	} {
		if got := b[name]; got != want {
			t.Errorf("Builtin()[%q] = %q, want %q", name, got, want)
		}
	}
	if got, want := len(b), 65; got != want {
		t.Errorf("%d built-in metrics, want %d", got, want)
	}
	b["ttft"] = "changed"
	if got := Builtin()["ttft"]; got != "trend" {
		t.Errorf("Builtin() shares its map: ttft = %q after a caller changed it", got)
	}
}
