package luabind

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestCapacityScenario(t *testing.T) {
	tests := []struct {
		name, scenario, slo string
		want                plan.CapacitySearch
		pre, maxVUs         int
	}{
		{name: "defaults", scenario: `conditions = { "ttft.p99 < 1s" }`,
			want: plan.CapacitySearch{Load: "rate", Start: 1, Max: 1024, Growth: 2, Precision: 0.05,
				Warmup: 10 * time.Second, Window: 30 * time.Second, MaxWindow: 5 * time.Minute,
				Conditions: []string{"ttft.p99 < 1s"}, MinSamples: 30, IdleTimeout: 2 * time.Minute},
			pre: 1, maxVUs: 1000},
		{name: "rate search", slo: `{ ttft = "1s" }`,
			scenario: `start = 4, max = 200, growth = 1.5, precision = "2%", warmup = "5s", window = "20s",
				max_window = "1m", good_share = "95%", min_samples = 100, idle_timeout = "30s", pre_allocated_vus = 8, max_vus = 64`,
			want: plan.CapacitySearch{Load: "rate", Start: 4, Max: 200, Growth: 1.5, Precision: 0.02,
				Warmup: 5 * time.Second, Window: 20 * time.Second, MaxWindow: time.Minute, GoodShare: 0.95, MinSamples: 100,
				IdleTimeout: 30 * time.Second},
			pre: 8, maxVUs: 64},
		{name: "vus search", slo: `{ e2e = "5s" }`,
			scenario: `load = "vus", start = 2, max = 64, good_share = 0.9, window = "10s"`,
			want: plan.CapacitySearch{Load: "vus", Start: 2, Max: 64, Growth: 2, Precision: 0.05,
				Warmup: 10 * time.Second, Window: 10 * time.Second, MaxWindow: 5 * time.Minute, GoodShare: 0.9, MinSamples: 30,
				IdleTimeout: 2 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slo := ""
			if tt.slo != "" {
				slo = ", slo = " + tt.slo
			}
			path := writeScript(t, "cap.lua", script(`{ scenarios = { cap = { executor = "capacity", exec = "chat", `+tt.scenario+` } }`+slo+` }`))
			s := mustCompile(t, path, Options{})
			sc := s.Plan().Scenarios[0]
			if sc.Capacity == nil {
				t.Fatal("no capacity search in the plan")
			}
			got := *sc.Capacity
			if got.Load != tt.want.Load || got.Start != tt.want.Start || got.Max != tt.want.Max || got.Growth != tt.want.Growth ||
				got.Precision != tt.want.Precision || got.Warmup != tt.want.Warmup || got.Window != tt.want.Window ||
				got.MaxWindow != tt.want.MaxWindow || got.GoodShare != tt.want.GoodShare || got.MinSamples != tt.want.MinSamples ||
				got.IdleTimeout != tt.want.IdleTimeout ||
				strings.Join(got.Conditions, ";") != strings.Join(tt.want.Conditions, ";") {
				t.Errorf("search = %+v\nwant     %+v", got, tt.want)
			}
			if sc.PreAllocatedVUs != tt.pre || sc.MaxVUsCap != tt.maxVUs {
				t.Errorf("VUs = %d pre-allocated, %d max; want %d, %d", sc.PreAllocatedVUs, sc.MaxVUsCap, tt.pre, tt.maxVUs)
			}
		})
	}
}

func TestCapacityScenarioErrors(t *testing.T) {
	const cond = `conditions = { "ttft.p99 < 1s" }, `
	tests := []struct{ name, scenario, want string }{
		{"no judge", ``, "options.scenarios.cap: a capacity search needs good_share (with options.slo) or conditions"},
		{"good share without slo", `good_share = 0.95`, "options.scenarios.cap.good_share: counts the requests that meet options.slo, which is not set"},
		{"unknown load", cond + `load = "qps"`, `options.scenarios.cap.load: unknown load "qps"`},
		{"growth 1", cond + `growth = 1`, "options.scenarios.cap.growth: must be > 1"},
		{"max below start", cond + `start = 10, max = 5`, "options.scenarios.cap.max: 5 is below start 10"},
		{"precision 0", cond + `precision = 0`, "options.scenarios.cap.precision: must be above 0%"},
		{"precision text", cond + `precision = "five"`, `options.scenarios.cap.precision: expected a fraction (0.05) or a percentage ("5%"), got "five"`},
		{"good share above 1", `good_share = 1.5, conditions = { "ttft.p99 < 1s" }`, "options.scenarios.cap.good_share: must be above 0 and at most 1"},
		{"bad condition", `conditions = { "ttft.p99 1s" }`, `options.scenarios.cap.conditions[1]: "ttft.p99 1s": expected a metric, an operator and a bound`},
		{"unknown metric", `conditions = { "latency.p99 < 1s" }`, `options.scenarios.cap.conditions[1]: "latency.p99 < 1s"`},
		{"condition not a string", `conditions = { 5 }`, "options.scenarios.cap.conditions[1]: expected a condition string"},
		{"idle_timeout not positive", cond + `idle_timeout = "0s"`, "options.scenarios.cap.idle_timeout"},
		{"max_window short", cond + `window = "30s", max_window = "10s"`, "options.scenarios.cap.max_window: 10s is shorter than window 30s"},
		{"vus with arrival", cond + `load = "vus", arrival = "constant"`, `options.scenarios.cap.arrival: only valid with load = "rate"`},
		{"vus fractional", cond + `load = "vus", start = 1.5`, "options.scenarios.cap.start"},
		{"rate too high", cond + `max = 1e9`, "beyond the 100000/s one llmload process can start"},
		{"stages refused", cond + `stages = {}`, "options.scenarios.cap.stages: not valid for executor capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "cap.lua", script(`{ scenarios = { cap = { executor = "capacity", exec = "chat", `+tt.scenario+` } } }`))
			_, err := Compile(path, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestCapacityThresholds(t *testing.T) {
	const sc = `{ scenarios = { cap = { executor = "capacity", exec = "chat", conditions = { "ttft.p99 < 1s" } } }, thresholds = %s }`
	tests := []struct{ thresholds, want string }{
		{`{ ["capacity.rate"] = "> 5", ["ttft{scenario:cap}.p99"] = "< 1s" }`, ""},
		{`{ ["capacity.vus"] = "> 5" }`, "capacity.vus"},
		{`{ ["capacity.rate"] = { "> 5", abort_on_fail = true } }`, "abort_on_fail"},
	}
	for _, tt := range tests {
		t.Run(tt.thresholds, func(t *testing.T) {
			_, err := Compile(writeScript(t, "cap.lua", script(strings.Replace(sc, "%s", tt.thresholds, 1))), Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
