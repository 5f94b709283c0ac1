package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
)

func TestStatusAndClassCells(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"statuses by code, none last", statusCell(map[int]int64{500: 1, 0: 2, 400: 12}), "400×12 500×1 none×2"},
		{"statuses capped", statusCell(map[int]int64{400: 1, 401: 1, 413: 1, 422: 1, 500: 1, 0: 1}), "400×1 401×1 413×1 422×1 +2"},
		{"no status", statusCell(nil), "-"},
		{"classes by count, HTTP ones left out", classCell(map[string]int64{"http_4xx:400": 9, "conn_reset": 1, "timeout_ttft": 3}),
			"timeout_ttft×3 conn_reset×1"},
		{"classes capped", classCell(map[string]int64{"conn_reset": 3, "timeout_ttft": 2, "stream_truncated": 1}),
			"conn_reset×3 timeout_ttft×2 +1"},
		{"only HTTP classes", classCell(map[string]int64{"http_4xx:400": 2}), "-"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestRobustnessLine(t *testing.T) {
	rs := func(count, handled, defects, accepted int64) metrics.RobustnessSummary {
		return metrics.RobustnessSummary{Count: count, Handled: handled, Defects: defects, Accepted: accepted}
	}
	tests := []struct {
		name string
		run  map[string]metrics.RobustnessSummary
		want string
	}{
		{"defects", map[string]metrics.RobustnessSummary{"overlong": rs(100, 98, 2, 0), "bad_role": rs(15, 14, 1, 0),
			"empty": rs(5, 5, 0, 0)}, "dirty data: 120 requests, 3 defects in 2 kinds: bad_role, overlong"},
		{"one defect", map[string]metrics.RobustnessSummary{"empty": rs(1, 0, 1, 0)}, "dirty data: 1 request, 1 defect in 1 kind: empty"},
		{"none", map[string]metrics.RobustnessSummary{"empty": rs(4, 3, 0, 1), "invisible": rs(2, 0, 0, 2)},
			"dirty data: 6 requests in 2 kinds, no defects (3 handled, 3 accepted)"},
		{"many kinds", map[string]metrics.RobustnessSummary{"a": rs(1, 0, 1, 0), "b": rs(1, 0, 1, 0), "c": rs(1, 0, 1, 0),
			"d": rs(1, 0, 1, 0), "e": rs(1, 0, 1, 0), "f": rs(1, 0, 1, 0), "g": rs(1, 0, 1, 0), "h": rs(1, 0, 1, 0)},
			"dirty data: 8 requests, 8 defects in 8 kinds: a, b, c, d, e, f, 2 more"},
	}
	for _, tt := range tests {
		if got := robustnessLine(tt.run); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// dirty is a dirty request of kind answered with status; msg is the error
// body of a failed one.
func dirty(kind string, status int, class, msg string) engine.Sample {
	s := engine.Sample{Dirty: kind, Result: engine.Result{Status: status, TTFB: time.Millisecond, E2E: time.Millisecond}}
	if class != "" {
		s.Err = &engine.Error{Class: class, Message: msg}
	}
	return s
}

// TestRobustnessFromCollector renders what a real Collector made of dirty
// requests, and gates on it with thresholds as a scenario would.
func TestRobustnessFromCollector(t *testing.T) {
	text, r := collect(t, plan.SLO{},
		okSample(10*time.Millisecond, time.Second, nil),
		dirty("empty", 400, "http_4xx:400", "messages must not be empty"),
		dirty("overlong", 400, "http_4xx:400", "context length exceeded"),
		dirty("overlong", 500, "http_5xx:500", "internal error"),
		dirty("invisible", 200, "", ""),
	)
	assertText(t, text, []string{
		"robustness: how the server answered",
		"400×1 500×1",
		"1/1/0  ✗ DEFECT",
		"· accepted",
		"dirty data: 4 requests, 1 defect in 1 kind: overlong",
		"! dirty data: 1 of 4 malformed requests got a defective answer",
	}, []string{"canceled"})
	if got, want := fieldsOf(text[strings.Index(text, "\nrobustness"):], "only"), "[only empty 1 400×1 - 1/0/0 ✓ handled]"; got != want {
		t.Errorf("first robustness row = %s, want %s", got, want)
	}
	if got, want := r.Robustness["overlong"].Defects, int64(1); got != want {
		t.Errorf("run-wide overlong defects = %d, want %d", got, want)
	}

	c := metrics.NewCollector()
	for _, s := range []engine.Sample{dirty("overlong", 500, "http_5xx:500", "boom"), dirty("empty", 400, "http_4xx:400", "no")} {
		s.Scenario, s.Stage, s.Start = "s", "only", time.Now()
		c.Sample(s)
	}
	c.Close()
	known := threshold.Known{Metrics: metrics.Builtin(), Stages: map[string][]string{"s": {"only"}}}
	for _, tt := range []struct {
		expr, cond string
		pass       bool
	}{
		{"dirty.defects", "count == 0", false},
		{"dirty.defects{kind:empty}", "count == 0", true},
		{"dirty.defects{kind:overlong,stage:only}", "count == 1", true},
		{"dirty.handled", "count >= 1", true},
		{"dirty.accepted", "count == 0", true},
		{"dirty.requests", "count == 2", true},
	} {
		th, err := threshold.Parse(plan.ThresholdSpec{Expr: tt.expr, Conditions: []string{tt.cond}}, known)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if th.NeedsTrack() {
			if err := c.Track(th.Metric, th.Filter); err != nil && err != metrics.ErrClosed {
				t.Errorf("%s: Track: %v", tt.expr, err)
			}
		}
		if got := th.Evaluate(c.Snapshot()); got.Passed != tt.pass {
			t.Errorf("%s %s passed = %v, want %v (%+v)", tt.expr, tt.cond, got.Passed, tt.pass, got.Outcomes)
		}
	}
}
