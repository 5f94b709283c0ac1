package threshold

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

var known = Known{
	Metrics: map[string]string{
		"ttft": engine.MetricTrend, "e2e": engine.MetricTrend, "errors": engine.MetricRate,
		"checks": engine.MetricRate, "dropped_iterations": engine.MetricCounter,
		"requests": engine.MetricCounter, "dirty.defects": engine.MetricCounter,
		"judge_score": engine.MetricTrend,
	},
	Stages: map[string][]string{"chat": {"c1", "c8"}, "rag": {"steady"}},
}

func parse(t *testing.T, expr string, conds ...string) (*Threshold, error) {
	t.Helper()
	return Parse(plan.ThresholdSpec{Expr: expr, Conditions: conds}, known)
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		expr, cond string
		metric     string
		filter     string
		agg        string
		p, value   float64
	}{
		{"ttft.p99", "< 1s", "ttft", "map[]", metrics.AggP, 99, 1000},
		{"ttft.p99.9", "<= 250ms", "ttft", "map[]", metrics.AggP, 99.9, 250},
		{"ttft", "p(95) < 800", "ttft", "map[]", metrics.AggP, 95, 800},
		{"ttft{stage:c8}.p99", "< 800ms", "ttft", "map[stage:c8]", metrics.AggP, 99, 800},
		{"ttft{ stage: c8 , prompt:short }.avg", "< 1.5s", "ttft", "map[prompt:short stage:c8]", metrics.AggAvg, 0, 1500},
		{"e2e.med", "< 2m", "e2e", "map[]", metrics.AggMed, 0, 120000},
		{"errors.rate", "< 1%", "errors", "map[]", metrics.AggRate, 0, 0.01},
		{"errors", "rate < 0.05", "errors", "map[]", metrics.AggRate, 0, 0.05},
		{"checks", "rate > 0.99", "checks", "map[]", metrics.AggRate, 0, 0.99},
		{"checks{check:status 200}", "rate > 0.9", "checks", "map[check:status 200]", metrics.AggRate, 0, 0.9},
		{"dropped_iterations", "count < 10", "dropped_iterations", "map[]", metrics.AggCount, 0, 10},
		{"dropped_iterations", "< 10", "dropped_iterations", "map[]", metrics.AggCount, 0, 10},
		{"requests.rate", ">= 4.5", "requests", "map[]", metrics.AggRate, 0, 4.5},
		{"dirty.defects", "count == 0", "dirty.defects", "map[]", metrics.AggCount, 0, 0},
		{"ttft{scenario:rag,stage:steady}.max", "< 3s", "ttft", "map[scenario:rag stage:steady]", metrics.AggMax, 0, 3000},
		{"judge_score.avg", "> 0.5", "judge_score", "map[]", metrics.AggAvg, 0, 0.5},
		{"ttft.count", ">= 1000", "ttft", "map[]", metrics.AggCount, 0, 1000},
	}
	for _, tt := range tests {
		th, err := parse(t, tt.expr, tt.cond)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", tt.expr, tt.cond, err)
			continue
		}
		c := th.Conditions[0]
		if th.Metric != tt.metric || fmtMap(th.Filter) != tt.filter || c.Agg != tt.agg || c.P != tt.p || c.Value != tt.value {
			t.Errorf("Parse(%q, %q) = metric %q filter %v agg %q p %v value %v", tt.expr, tt.cond, th.Metric, th.Filter, c.Agg, c.P, c.Value)
		}
	}
}

func fmtMap(f metrics.Filter) string {
	if f == nil {
		return "map[]"
	}
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range sortedFilterKeys(f) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + ":" + f[k])
	}
	return b.String() + "]"
}

func sortedFilterKeys(f metrics.Filter) []string {
	m := map[string][]string{}
	for k := range f {
		m[k] = nil
	}
	return sortedKeys(m)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		expr string
		cond []string
		want string
	}{
		{"ttfb2.p99", []string{"< 1s"}, `unknown metric "ttfb2"`},
		{"latency{stage:c8}.p99", []string{"< 1s"}, `unknown metric "latency"`},
		{"ttft", []string{"< 1s"}, "needs an aggregation"},
		{"ttft.p99", []string{"1s"}, "want [aggregation] operator value"},
		{"ttft.p99", []string{"< 5 minutes"}, "not a duration"},
		{"ttft.p99", []string{"< 1%"}, "percentage only applies to a rate"},
		{"ttft.p100", []string{"< 1s"}, "percentile"},
		{"ttft.p99", []string{"p95 < 1s"}, "aggregation p95 here and p99"},
		{"ttft.rate", []string{"< 1"}, `"rate" does not apply to a trend`},
		{"errors.p99", []string{"< 1"}, "does not apply to a rate"},
		{"dropped_iterations", []string{"count < ten"}, "not a number"},
		{"ttft{stage:c9}.p99", []string{"< 1s"}, `no stage "c9" (stages: c1, c8, steady)`},
		{"ttft{scenario:chat,stage:steady}.p99", []string{"< 1s"}, `no stage "steady" (stages: c1, c8)`},
		{"ttft{scenario:nope}.p99", []string{"< 1s"}, `no scenario "nope"`},
		{"ttft{stage}.p99", []string{"< 1s"}, "want {tag:value, ...}"},
		{"ttft{stage:c1.p99", []string{"< 1s"}, "unclosed"},
		{"ttft.p99", nil, "no condition"},
		{"ttft{stage:c1}p99", []string{"< 1s"}, "expected .aggregation"},
	}
	for _, tt := range tests {
		_, err := parse(t, tt.expr, tt.cond...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q, %q) err = %v, want it to contain %q", tt.expr, tt.cond, err, tt.want)
		}
	}
}

// fakeSource answers queries from a table keyed by metric and aggregation.
type fakeSource map[string]struct {
	v float64
	n int64
}

func (f fakeSource) Value(q metrics.Query) (float64, int64, error) {
	key := q.Metric + "." + q.Agg
	if q.Agg == metrics.AggP {
		key = q.Metric + ".p"
	}
	if q.Filter["stage"] != "" {
		key += "@" + q.Filter["stage"]
	}
	r, ok := f[key]
	if !ok && q.Metric == "bad" {
		return 0, 0, errors.New("not tracked")
	}
	return r.v, r.n, nil
}

func TestEvaluate(t *testing.T) {
	src := fakeSource{
		"ttft.p":                   {1420, 2000},
		"ttft.p@c8":                {700, 500},
		"errors.rate":              {0.002, 1000},
		"checks.rate":              {0.995, 300},
		"dropped_iterations.count": {0, 0},
	}
	tests := []struct {
		expr, cond   string
		pass, noData bool
	}{
		{"ttft.p99", "< 1s", false, false},
		{"ttft.p99", "< 2s", true, false},
		{"ttft{stage:c8}.p99", "< 800ms", true, false},
		{"ttft{stage:c1}.p99", "< 800ms", false, true},
		{"errors.rate", "< 1%", true, false},
		{"checks", "rate > 0.99", true, false},
		{"dropped_iterations", "count < 10", true, false},
		{"e2e.avg", "< 1s", false, true},
	}
	for _, tt := range tests {
		th, err := parse(t, tt.expr, tt.cond)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Evaluate(src)
		if r.Passed != tt.pass || r.Outcomes[0].NoData != tt.noData {
			t.Errorf("%s %s: passed %v noData %v, want %v %v", tt.expr, tt.cond, r.Passed, r.Outcomes[0].NoData, tt.pass, tt.noData)
		}
	}
}

func TestMultipleConditionsAllMustPass(t *testing.T) {
	th, err := parse(t, "ttft", "p99 < 2s", "avg < 100ms")
	if err != nil {
		t.Fatal(err)
	}
	r := th.Evaluate(fakeSource{"ttft.p": {1500, 2000}, "ttft.avg": {300, 2000}})
	if r.Passed || !r.Outcomes[0].Passed || r.Outcomes[1].Passed {
		t.Errorf("result = %+v", r)
	}
	if got, want := Describe(r, r.Outcomes[1]), "ttft avg < 100ms: observed 300ms"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

func TestShouldAbortHonoursDelayAndIgnoresNoData(t *testing.T) {
	spec := plan.ThresholdSpec{Expr: "ttft.p99", Conditions: []string{"< 1s"}, AbortOnFail: true, DelayAbortEval: 30 * time.Second}
	th, err := Parse(spec, known)
	if err != nil {
		t.Fatal(err)
	}
	gated := Set{th}
	failing := fakeSource{"ttft.p": {1500, 100}}
	if _, abort := gated.ShouldAbort(failing, 10*time.Second); abort {
		t.Error("aborted before delay_abort_eval")
	}
	if got, abort := gated.ShouldAbort(failing, 31*time.Second); !abort || got != th {
		t.Error("did not abort after the delay on a failing threshold")
	}
	if _, abort := gated.ShouldAbort(fakeSource{}, time.Hour); abort {
		t.Error("aborted on no data")
	}
	plain, _ := parse(t, "ttft.p99", "< 1s")
	if _, abort := (Set{plain}).ShouldAbort(failing, time.Hour); abort {
		t.Error("a threshold without abort_on_fail aborted the run")
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		kind, agg string
		v         float64
		want      string
	}{
		{engine.MetricTrend, metrics.AggP, 1420, "1.42s"},
		{engine.MetricTrend, metrics.AggAvg, 12.5, "12.5ms"},
		{engine.MetricTrend, metrics.AggCount, 1000, "1000"},
		{engine.MetricRate, metrics.AggRate, 0.0123, "1.23%"},
		{engine.MetricCounter, metrics.AggCount, 7, "7"},
		{engine.MetricCounter, metrics.AggRate, 4.25, "4.25/s"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.kind, tt.agg, tt.v); got != tt.want {
			t.Errorf("FormatValue(%s, %s, %v) = %q, want %q", tt.kind, tt.agg, tt.v, got, tt.want)
		}
	}
}

func TestParseProbeCondition(t *testing.T) {
	tests := []struct {
		text, metric, agg, op string
		value                 float64
		err                   string
	}{
		{text: "ttft.p99 < 1s", metric: "ttft", agg: metrics.AggP, op: "<", value: 1000},
		{text: "tpot.p50<=50ms", metric: "tpot", agg: metrics.AggP, op: "<=", value: 50},
		{text: "errors.rate < 1%", metric: "errors", agg: metrics.AggRate, op: "<", value: 0.01},
		{text: "ttft p99", err: "expected a metric, an operator and a bound"},
		{text: "< 1s", err: "expected a metric"},
		{text: "ttft{stage:a}.p99 < 1s", err: "takes no filter"},
		{text: "ttfx.p99 < 1s", err: "ttfx"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			th, err := ParseProbeCondition(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := th.Conditions[0]
			if th.Metric != tt.metric || c.Agg != tt.agg || c.Op != tt.op || c.Value != tt.value {
				t.Errorf("got %s %s %s %v, want %s %s %s %v", th.Metric, c.Agg, c.Op, c.Value, tt.metric, tt.agg, tt.op, tt.value)
			}
		})
	}
}

// TestConnectAndTLSThresholds: the connection's set-up and its TLS
// handshake are gated like any latency, from a run's own figures.
func TestConnectAndTLSThresholds(t *testing.T) {
	col := metrics.NewCollector()
	col.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: time.Unix(0, 0)})
	for i, hs := range []time.Duration{30 * time.Millisecond, 0, 0, 0} {
		col.Sample(engine.Sample{Scenario: "s", Stage: "c1", Result: engine.Result{Start: time.Unix(int64(i), 0), Status: 200,
			TTFT: 100 * time.Millisecond, E2E: time.Second, Connect: hs + time.Millisecond, TLS: hs}})
	}
	col.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", At: time.Unix(10, 0)})
	snap := col.Snapshot()
	col.Close()
	tests := []struct {
		expr, cond string
		pass       bool
	}{
		{"tls.max", "< 50ms", true},
		{"tls.max", "< 10ms", false},
		{"tls.count", "== 1", true},
		{"connect.p50", "< 5ms", true},
		{"connect.max", "< 10ms", false},
	}
	for _, tt := range tests {
		th, err := Parse(plan.ThresholdSpec{Expr: tt.expr, Conditions: []string{tt.cond}}, KnownOf(plan.Plan{}))
		if err != nil {
			t.Fatalf("Parse(%q, %q): %v", tt.expr, tt.cond, err)
		}
		if r := th.Evaluate(snap); r.Passed != tt.pass || r.Outcomes[0].NoData {
			t.Errorf("%s %s: passed %v (no data %v), want %v", tt.expr, tt.cond, r.Passed, r.Outcomes[0].NoData, tt.pass)
		}
	}
}

// TestTaskThresholds: the task metrics are gated as any built-in, from a
// run's own tasks: the wall time of the ok tasks, their count and rate,
// the goodput of tasks under the SLO's Task objective, the share that
// failed, and one task name's through its tag.
func TestTaskThresholds(t *testing.T) {
	p := plan.Plan{Scenarios: []plan.Scenario{{Name: "agents", Stages: []plan.Stage{{Name: "c1"}}}}}
	col := metrics.NewCollector(metrics.WithSLO(plan.SLO{Task: 10 * time.Second}))
	specs := []struct {
		expr, cond string
		pass       bool
	}{
		{"task.p99", "< 30s", true},
		{"task.p99", "< 15s", false},
		{"task{task:plan}.max", "< 5s", true},
		{"task{stage:c1,task:review}.max", "< 5s", false},
		{"tasks.count", "== 4", true},
		{"tasks.rate", ">= 0.4", true},
		{"task_good.rate", ">= 0.2", true},   // 2 good in 10 s
		{"task_good.count", "== 2", true},    // the 20 s review missed 10 s
		{"task_failed.rate", "< 10%", false}, // 1 of 4
		{"task_failed", "rate <= 25%", true},
		{"task_calls.avg", "== 4", true},
		{"task_tokens.max", "< 1000", true},
		{"task_tool.p50", "< 2s", true},
	}
	var set Set
	for _, s := range specs {
		th, err := Parse(plan.ThresholdSpec{Expr: s.expr, Conditions: []string{s.cond}}, KnownOf(p))
		if err != nil {
			t.Fatalf("Parse(%q, %q): %v", s.expr, s.cond, err)
		}
		if th.NeedsTrack() {
			if err := col.Track(th.Metric, th.Filter); err != nil {
				t.Fatalf("Track %s: %v", s.expr, err)
			}
		}
		set = append(set, th)
	}
	col.StageStarted(engine.StageMark{Scenario: "agents", Stage: "c1", Target: 1, At: time.Unix(0, 0)})
	for i, x := range []struct {
		name          string
		secs          int
		calls, failed int
	}{{"plan", 2, 3, 0}, {"plan", 4, 5, 0}, {"review", 20, 4, 0}, {"review", 1, 1, 1}} {
		col.Task(engine.TaskSample{Name: x.name, Scenario: "agents", Stage: "c1", Tags: map[string]string{"task": x.name},
			Start: time.Unix(int64(i), 0), Duration: time.Duration(x.secs) * time.Second, Calls: x.calls, Failed: x.failed,
			OutputTokens: 100 * x.calls, Tool: time.Second})
	}
	col.StageEnded(engine.StageMark{Scenario: "agents", Stage: "c1", At: time.Unix(10, 0)})
	snap := col.Snapshot()
	col.Close()
	results, _ := set.Evaluate(snap)
	for i, r := range results {
		if r.Passed != specs[i].pass || r.Outcomes[0].NoData {
			t.Errorf("%s %s: passed %v (observed %v, no data %v), want %v", specs[i].expr, specs[i].cond, r.Passed,
				r.Outcomes[0].Observed, r.Outcomes[0].NoData, specs[i].pass)
		}
	}
}
