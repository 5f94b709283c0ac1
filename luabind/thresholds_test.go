package luabind

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

func TestThresholds(t *testing.T) {
	path := writeScript(t, "x.lua", `local llm = require("llmload")
local ms = llm.metric.trend("think_ms")
options = {
  scenarios = { sweep = { executor = "ramping-vus", exec = "chat",
                          stages = { { name = "c8", target = 8, duration = "1m" } } } },
  thresholds = {
    ["ttft.p99"] = "< 1s",
    ["errors.rate"] = "< 1%",
    ["ttft{stage:c8}.p99"] = { "< 800ms", abort_on_fail = true, delay_abort_eval = "30s" },
    ["e2e"] = { "p95 < 2s", "max < 10s" },
    checks = "rate > 0.99",
    dropped_iterations = "count < 10",
    ["think_ms.avg"] = "< 100",
  },
}
function chat(vu) end
`)
	got := mustCompile(t, path, Options{}).Plan().Thresholds
	want := []plan.ThresholdSpec{
		{Expr: "checks", Conditions: []string{"rate > 0.99"}},
		{Expr: "dropped_iterations", Conditions: []string{"count < 10"}},
		{Expr: "e2e", Conditions: []string{"p95 < 2s", "max < 10s"}},
		{Expr: "errors.rate", Conditions: []string{"< 1%"}},
		{Expr: "think_ms.avg", Conditions: []string{"< 100"}},
		{Expr: "ttft.p99", Conditions: []string{"< 1s"}},
		{Expr: "ttft{stage:c8}.p99", Conditions: []string{"< 800ms"}, AbortOnFail: true, DelayAbortEval: 30 * time.Second},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("thresholds =\n%+v\nwant\n%+v", got, want)
	}
}

func TestThresholdErrors(t *testing.T) {
	const p = "options.thresholds"
	tests := []struct {
		name, thresholds, want string
	}{
		{"not a table", `"fast"`, p + ": expected table, got string"},
		{"number key", `{ "< 1s" }`, p + "[1]: keys must be metric expressions"},
		{"value number", `{ ["ttft.p99"] = 1 }`, p + `["ttft.p99"]: expected a condition string such as "< 1s", or a table of them, got number`},
		{"empty condition", `{ ["ttft.p99"] = "" }`, p + `["ttft.p99"]: must not be empty`},
		{"no conditions", `{ ["ttft.p99"] = { abort_on_fail = true } }`, p + `["ttft.p99"]: needs at least one condition`},
		{"condition not string", `{ ["ttft.p99"] = { "< 1s", 5 } }`, p + `["ttft.p99"][2]: expected string, got number`},
		{"option typo", `{ ["ttft.p99"] = { "< 1s", abort_on_fial = true } }`,
			p + `["ttft.p99"].abort_on_fial: unknown key (did you mean abort_on_fail?)`},
		{"abort not bool", `{ ["ttft.p99"] = { "< 1s", abort_on_fail = "yes" } }`, p + `["ttft.p99"].abort_on_fail: expected boolean, got string`},
		{"delay not duration", `{ ["ttft.p99"] = { "< 1s", abort_on_fail = true, delay_abort_eval = 30 } }`,
			p + `["ttft.p99"].delay_abort_eval: 30 is not a duration`},
		{"delay without abort", `{ ["ttft.p99"] = { "< 1s", delay_abort_eval = "30s" } }`,
			p + `["ttft.p99"].delay_abort_eval: only valid with abort_on_fail = true`},
		{"sparse list", `{ ["ttft.p99"] = { "< 1s", [3] = "< 2s" } }`, p + `["ttft.p99"][3]: unexpected key`},
		{"unknown metric", `{ ["ttfx.p99"] = "< 1s" }`, p + `["ttfx.p99"]: unknown metric "ttfx"`},
		{"unknown stage", `{ ["ttft{stage:c9}.p99"] = "< 1s" }`, p + `["ttft{stage:c9}.p99"]: tag filter: no stage "c9"`},
		{"bad condition", `{ ["ttft.p99"] = "fast" }`, p + `["ttft.p99"]: "fast": `},
		{"custom metric unknown", `{ ["queue_ms.avg"] = "< 1" }`, p + `["queue_ms.avg"]: unknown metric "queue_ms"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(`{ stages = { { name = "c8", target = 1, duration = "1s" } }, thresholds = `+tt.thresholds+` }`))
			_, err := Compile(path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestThresholdsOnNewBuiltins checks that thresholds may name the built-in
// metrics the metrics package adds for token timing and goodput; a metric
// it does not define yet is skipped, so the test turns on as they land.
func TestThresholdsOnNewBuiltins(t *testing.T) {
	conditions := map[string]string{
		engine.MetricTrend: "p99 < 1s", engine.MetricCounter: "count > 0", engine.MetricRate: "rate > 0.9",
	}
	builtin := metrics.Builtin()
	for _, name := range []string{"ttfc", "itl_token", "reasoning_tokens", "goodput", "good_share"} {
		t.Run(name, func(t *testing.T) {
			kind, ok := builtin[name]
			if !ok {
				t.Skipf("metrics.Builtin has no %q yet", name)
			}
			th := fmt.Sprintf(`{ [%q] = %q }`, name, conditions[kind])
			path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", thresholds = `+th+` }`))
			got := mustCompile(t, path, Options{}).Plan().Thresholds
			want := []plan.ThresholdSpec{{Expr: name, Conditions: []string{conditions[kind]}}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("thresholds = %+v, want %+v", got, want)
			}
		})
	}
}
