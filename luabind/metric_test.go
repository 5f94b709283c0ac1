package luabind

import (
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/api"
)

const metricScript = `local llm = require("llmload")
local lat = llm.metric.trend("queue_ms")
local n = llm.metric.counter("retries")
local ok = llm.metric.rate("cache_hit")
local again = llm.metric.trend("queue_ms")
options = { scenarios = { s = { executor = "constant-vus", exec = "add", vus = 1, duration = "1s",
                                tags = { suite = "m" } } } }
function add(vu)
  lat:add(12.5)
  again:add(1, { prompt = "short", suite = "override" })
  n:add(2)
  ok:add(true)
  ok:add(false)
  ok:add(0)
  ok:add(3)
  ok:add(nil)
end
function declare_late(vu) llm.metric.trend("late") end
function add_string(vu) lat:add("12") end
function add_nan(vu) n:add(0/0) end
function add_bad_tags(vu) lat:add(1, { x = {} }) end
function add_dot(vu) lat.add(1) end
`

func TestCustomMetrics(t *testing.T) {
	path := writeScript(t, "m.lua", metricScript)
	s := mustCompile(t, path, Options{})
	if got, want := s.Plan().Metrics, []plan.MetricDef{{Name: "cache_hit", Kind: engine.MetricRate},
		{Name: "queue_ms", Kind: engine.MetricTrend}, {Name: "retries", Kind: engine.MetricCounter}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Plan().Metrics = %v, want %v", got, want)
	}
	sink := &fakeSink{}
	v := newVU(t, s, api.RunnerConfig{Sink: sink}, 1)
	it := engine.Iteration{Scenario: "s", Stage: "st", Exec: "add", VUID: 1, Warmup: true}
	if err := v.RunIteration(testContext(t), it); err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"suite": "m"}
	sample := func(name, kind string, value float64, tags map[string]string) engine.MetricSample {
		return engine.MetricSample{Name: name, Kind: kind, Value: value, Scenario: "s", Stage: "st", Warmup: true, Tags: tags}
	}
	want := []engine.MetricSample{
		sample("queue_ms", engine.MetricTrend, 12.5, tags),
		sample("queue_ms", engine.MetricTrend, 1, map[string]string{"suite": "override", "prompt": "short"}),
		sample("retries", engine.MetricCounter, 2, tags),
		sample("cache_hit", engine.MetricRate, 1, tags),
		sample("cache_hit", engine.MetricRate, 0, tags),
		sample("cache_hit", engine.MetricRate, 0, tags),
		sample("cache_hit", engine.MetricRate, 1, tags),
		sample("cache_hit", engine.MetricRate, 0, tags),
	}
	if got := sink.allMetrics(); !reflect.DeepEqual(got, want) {
		t.Errorf("metric samples =\n%+v\nwant\n%+v", got, want)
	}
	for exec, want := range map[string]string{
		"declare_late": `llm.metric.trend("late"): declare metrics at the top level`,
		"add_string":   "bad argument #2 to add (trend queue_ms takes a number, got string)",
		"add_nan":      "counter retries takes a finite number, got NaN",
		"add_bad_tags": "tags.x: expected string, got table",
		"add_dot":      "metric expected (call methods with a colon: metric:add(value))",
	} {
		err := run(t, v, exec)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path+":") {
			t.Errorf("%s: error = %v, want %s:<line>: ...%s", exec, err, path, want)
		}
	}
}

func TestCustomMetricDeclarationErrors(t *testing.T) {
	tests := []struct {
		name, decl, want string
	}{
		{"upper case", `llm.metric.trend("Queue")`, `llm.metric.trend("Queue"): names are lower-case letters, digits and _`},
		{"dash", `llm.metric.counter("a-b")`, `llm.metric.counter("a-b"): names are lower-case`},
		{"leading digit", `llm.metric.rate("1x")`, `llm.metric.rate("1x"): names are lower-case`},
		{"empty", `llm.metric.rate("")`, `llm.metric.rate(""): names are lower-case`},
		{"built-in", `llm.metric.trend("ttft")`, `llm.metric.trend("ttft"): the name of a built-in metric`},
		{"checks", `llm.metric.rate("checks")`, `llm.metric.rate("checks"): the name of a built-in metric`},
		{"other kind", `llm.metric.trend("x"); llm.metric.counter("x")`, `llm.metric.counter("x"): already declared as a trend`},
		{"no name", `llm.metric.trend()`, "bad argument #1 to trend (string expected, got nil)"},
		{"add at init", `llm.metric.trend("x"):add(1)`, "x:add can only be called inside an iteration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "m.lua", "local llm = require('llmload')\n"+tt.decl+"\n"+
				"options = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n")
			_, err := Compile(path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tt.want)
			}
			if got, prefix := err.Error(), path+":2: "; !strings.HasPrefix(got, prefix) || !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want %s...%s", got, prefix, tt.want)
			}
		})
	}
}

// TestCustomMetricNotInPlan checks a VU whose top level declares a metric
// that Compile's run did not: the plan and the VU would disagree.
func TestCustomMetricNotInPlan(t *testing.T) {
	declare := false
	env := func(name string) (string, bool) { return "1", name == "DECLARE" && declare }
	path := writeScript(t, "m.lua", "local llm = require('llmload')\n"+
		"if llm.env('DECLARE') then llm.metric.trend('extra') end\n"+
		"options = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n")
	s := mustCompile(t, path, Options{Env: env})
	declare = true
	_, err := s.NewRunner(api.RunnerConfig{}).NewVU(testContext(t), 1)
	if err == nil || !strings.Contains(err.Error(), `llm.metric.trend("extra"): not declared when the script was compiled`) {
		t.Errorf("NewVU error = %v, want the undeclared metric named", err)
	}
}
