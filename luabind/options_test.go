package luabind

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/llmload/llmload/engine/golden"
	"github.com/llmload/llmload/engine/plan"
)

// script wraps an options table in a scenario that defines chat and
// iteration.
func script(options string) string {
	return "local llm = require('llmload')\noptions = " + options +
		"\nfunction chat(vu) end\nfunction iteration(vu) end\n"
}

func TestOptionsErrors(t *testing.T) {
	const sc = `{ s = { executor = "ramping-vus", exec = "chat", stages = { %s } } }`
	stages := func(s string) string { return "{ scenarios = " + strings.Replace(sc, "%s", s, 1) + " }" }
	tests := []struct {
		name, options, want string
	}{
		{"unknown top key", `{ scenarois = {} }`, "options.scenarois: unknown key (did you mean scenarios?)"},
		{"far unknown key", `{ zzzzzzzzzz = 1, vus = 1, duration = "1s" }`, "options.zzzzzzzzzz: unknown key (valid keys: balance, cost, dirty, duration, export, lints, scenarios, seed, slo, stages, target, targets, thresholds, vus, warmup)"},
		{"stage typo", stages(`{ target = 1, duration = "1m" }, { target = 2, durtion = "1m" }`),
			"options.scenarios.s.stages[2].durtion: unknown key (did you mean duration?)"},
		{"target typo", `{ target = { base_ur = "x" }, vus = 1, duration = "1s" }`, "options.target.base_ur: unknown key (did you mean base_url?)"},
		{"warmup typo", `{ warmup = { request = 1 }, vus = 1, duration = "1s" }`, "options.warmup.request: unknown key (did you mean requests?)"},
		{"scenario typo", `{ scenarios = { s = { executor = "constant-vus", exce = "chat", vus = 1, duration = "1s" } } }`,
			"options.scenarios.s.exce: unknown key (did you mean exec?)"},
		{"dirty without ratio", `{ vus = 1, duration = "1s", dirty = {} }`, "options.dirty.ratio: required"},
		{"dirty ratio above 1", `{ vus = 1, duration = "1s", dirty = { ratio = 1.5 } }`, "options.dirty.ratio: must be in [0, 1], got 1.5"},
		{"dirty ratio negative", `{ vus = 1, duration = "1s", dirty = { ratio = -0.1 } }`, "options.dirty.ratio: must be ≥ 0, got -0.1"},
		{"dirty unknown kind", `{ vus = 1, duration = "1s", dirty = { ratio = 0.1, kinds = { emtpy = 1 } } }`,
			`options.dirty.kinds.emtpy: unknown dirty-data kind "emtpy" (did you mean empty?) (valid: `},
		{"dirty zero weight", `{ vus = 1, duration = "1s", dirty = { ratio = 0.1, kinds = { empty = 0 } } }`,
			"options.dirty.kinds.empty: must be > 0, got 0"},
		{"dirty unknown key", `{ vus = 1, duration = "1s", dirty = { ratio = 0.1, kind = {} } }`,
			"options.dirty.kind: unknown key (did you mean kinds?)"},
		{"slo not a table", `{ vus = 1, duration = "1s", slo = "fast" }`, "options.slo: expected table, got string"},
		{"slo typo", `{ vus = 1, duration = "1s", slo = { ttf = "1s" } }`, "options.slo.ttf: unknown key (did you mean ttft?)"},
		{"slo far key", `{ vus = 1, duration = "1s", slo = { latency = "1s" } }`,
			"options.slo.latency: unknown key (valid keys: e2e, task, tpot, ttft)"},
		{"slo zero", `{ vus = 1, duration = "1s", slo = { ttft = "0s" } }`, "options.slo.ttft: must be > 0, got 0s"},
		{"slo negative", `{ vus = 1, duration = "1s", slo = { e2e = "-1s" } }`, "options.slo.e2e: must not be negative, got -1s"},
		{"slo number", `{ vus = 1, duration = "1s", slo = { tpot = 50 } }`, `options.slo.tpot: 50 is not a duration (use a string such as "50s")`},
		{"tokenizer unknown", `{ vus = 1, duration = "1s", target = { tokenizer = "gpt2" } }`,
			`options.target.tokenizer: unknown tokenizer "gpt2" (valid: cl100k_base, o200k_base, p50k_base, r50k_base, none)`},
		{"tokenizer typo", `{ vus = 1, duration = "1s", target = { tokenizer = "o200k_bse" } }`,
			`options.target.tokenizer: unknown tokenizer "o200k_bse" (did you mean o200k_base?) (valid: `},
		{"tokenizer empty", `{ vus = 1, duration = "1s", target = { tokenizer = "" } }`, `options.target.tokenizer: unknown tokenizer ""`},
		{"tokenizer not a string", `{ vus = 1, duration = "1s", target = { tokenizer = true } }`,
			"options.target.tokenizer: expected string, got boolean"},
		{"tokenizer key typo", `{ vus = 1, duration = "1s", target = { tokeniser = "none" } }`,
			"options.target.tokeniser: unknown key (did you mean tokenizer?)"},
		{"metrics_url not a string", `{ vus = 1, duration = "1s", target = { metrics_url = 9 } }`,
			"options.target.metrics_url: expected a URL (string) or false, got number"},
		{"metrics_every bad", `{ vus = 1, duration = "1s", target = { metrics_every = "soon" } }`,
			"options.target.metrics_every"},
		{"continuous_usage not a bool", `{ vus = 1, duration = "1s", target = { continuous_usage = "yes" } }`,
			"options.target.continuous_usage: expected boolean, got string"},
		{"trace_context not a bool", `{ vus = 1, duration = "1s", target = { trace_context = "off" } }`,
			"options.target.trace_context: expected boolean, got string"},
		{"options absent", `nil`, "options: not defined"},
		{"options not a table", `"fast"`, "options: expected table, got string"},
		{"no scenarios at all", `{ seed = 1 }`, "options: no scenarios"},
		{"empty scenarios", `{ scenarios = {} }`, "options.scenarios: no scenarios defined"},
		{"vus string", `{ vus = "2", duration = "1s" }`, "options.vus: expected integer, got string"},
		{"vus fraction", `{ vus = 2.5, duration = "1s" }`, "options.vus: expected integer, got 2.5"},
		{"vus zero", `{ vus = 0, duration = "1s" }`, "options.vus: must be ≥ 1, got 0"},
		{"vus negative", `{ scenarios = { s = { executor = "constant-vus", exec = "chat", vus = -1, duration = "1s" } } }`,
			"options.scenarios.s.vus: must be ≥ 1, got -1"},
		{"duration words", stages(`{ target = 1, duration = "1m" }, { target = 1, duration = "5 minutes" }`),
			`options.scenarios.s.stages[2].duration: "5 minutes" is not a duration (use e.g. "5m")`},
		{"duration number", `{ vus = 1, duration = 300 }`, `options.duration: 300 is not a duration (use a string such as "300s")`},
		{"duration zero", `{ vus = 1, duration = "0s" }`, "options.duration: must be > 0, got 0s"},
		{"duration negative", `{ vus = 1, duration = "-1s" }`, "options.duration: must not be negative, got -1s"},
		{"duration missing", stages(`{ target = 1 }`), "options.scenarios.s.stages[1].duration: required"},
		{"shorthand duration missing", `{ vus = 1 }`, "options.duration: required"},
		{"target zero", stages(`{ target = 1, duration = "1m" }, { target = 0, duration = "1m" }`),
			"options.scenarios.s.stages[2].target: must be ≥ 1, got 0"},
		{"target negative", stages(`{ target = -1, duration = "1m", ramp = "1s" }`), "options.scenarios.s.stages[1].target: must be ≥ 0, got -1"},
		{"target missing", stages(`{ duration = "1m" }`), "options.scenarios.s.stages[1].target: required"},
		{"ramp too long", stages(`{ target = 1, duration = "1m", ramp = "2m" }`),
			"options.scenarios.s.stages[1].ramp: 2m0s is longer than the stage's duration 1m0s"},
		{"duplicate stage", stages(`{ name = "a", target = 1, duration = "1m" }, { name = "a", target = 2, duration = "1m" }`),
			`options.scenarios.s.stages[2].name: stage name "a" is used twice`},
		{"no stages", stages(``), "options.scenarios.s.stages: needs at least one stage"},
		{"stages not a list", stages(`x = { target = 1, duration = "1m" }`), "options.scenarios.s.stages.x: unexpected key in a list"},
		{"stage not a table", stages(`"c1"`), "options.scenarios.s.stages[1]: expected table, got string"},
		{"unknown executor", `{ scenarios = { s = { executor = "shared-iteration", exec = "chat" } } }`,
			`options.scenarios.s.executor: unknown executor "shared-iteration" (valid: constant-vus, ramping-vus, constant-arrival-rate, ramping-arrival-rate, shared-iterations, per-vu-iterations, trace, capacity)`},
		{"missing executor", `{ scenarios = { s = { exec = "chat", vus = 1, duration = "1s" } } }`, "options.scenarios.s.executor: required"},
		{"missing exec", `{ scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1s" } } }`, "options.scenarios.s.exec: required"},
		{"exec undefined", `{ scenarios = { s = { executor = "constant-vus", exec = "chta", vus = 1, duration = "1s" } } }`,
			`options.scenarios.s.exec: no global function "chta" in the script (did you mean chat?)`},
		{"stages in constant-vus", `{ scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s", stages = {} } } }`,
			"options.scenarios.s.stages: not valid for executor constant-vus"},
		{"vus in ramping-vus", `{ scenarios = { s = { executor = "ramping-vus", exec = "chat", vus = 1, stages = { { target = 1, duration = "1s" } } } } }`,
			"options.scenarios.s.vus: not valid for executor ramping-vus"},
		{"missing stages", `{ scenarios = { s = { executor = "ramping-vus", exec = "chat" } } }`, "options.scenarios.s.stages: required"},
		{"shorthand and scenarios", `{ vus = 1, scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s" } } }`,
			"options.vus: cannot be combined with options.scenarios"},
		{"stages and vus", `{ vus = 1, stages = { { target = 1, duration = "1s" } } }`, "options.vus: cannot be combined with options.stages"},
		{"warmup both", `{ vus = 1, duration = "1s", warmup = { requests = 1, duration = "1s" } }`, "options.warmup: set requests or duration, not both"},
		{"warmup negative", `{ vus = 1, duration = "1s", warmup = { requests = -1 } }`, "options.warmup.requests: must be ≥ 0, got -1"},
		{"seed fraction", `{ vus = 1, duration = "1s", seed = 1.5 }`, "options.seed: expected integer, got 1.5"},
		{"tag value table", `{ scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s", tags = { a = {} } } } }`,
			"options.scenarios.s.tags.a: expected string, got table"},
		{"timeout number", `{ vus = 1, duration = "1s", target = { timeout = 5 } }`, `options.target.timeout: 5 is not a duration`},
		{"graceful_stop type", `{ scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s", graceful_stop = true } } }`,
			"options.scenarios.s.graceful_stop: expected duration string, got boolean"},
		{"start_vus negative", `{ scenarios = { s = { executor = "ramping-vus", exec = "chat", start_vus = -2, stages = { { target = 1, duration = "1s" } } } } }`,
			"options.scenarios.s.start_vus: must be ≥ 0, got -2"},
		{"scenario name number", `{ scenarios = { { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s" } } }`,
			"options.scenarios[1]: scenario names must be non-empty strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(tt.options))
			_, err := Compile(path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
			if got, want := err.Error(), path+": "; !strings.HasPrefix(got, want) {
				t.Errorf("error = %q, want prefix %q", got, want)
			}
		})
	}
}

func TestOptionsTokenizerAndSLO(t *testing.T) {
	tests := []struct {
		name, options string
		tokenizer     string
		continuous    bool
		slo           plan.SLO
	}{
		{"defaults", `{ vus = 1, duration = "1s" }`, plan.DefaultTokenizer, false, plan.SLO{}},
		{"target without tokenizer", `{ vus = 1, duration = "1s", target = { model = "m" } }`, plan.DefaultTokenizer, false, plan.SLO{}},
		{"none", `{ vus = 1, duration = "1s", target = { tokenizer = "none" } }`, "none", false, plan.SLO{}},
		{"p50k", `{ vus = 1, duration = "1s", target = { tokenizer = "p50k_base", continuous_usage = true } }`, "p50k_base", true, plan.SLO{}},
		{"continuous off", `{ vus = 1, duration = "1s", target = { continuous_usage = false } }`, plan.DefaultTokenizer, false, plan.SLO{}},
		{"every objective", `{ vus = 1, duration = "1s", slo = { ttft = "500ms", tpot = "50ms", e2e = "10s" } }`,
			plan.DefaultTokenizer, false, plan.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}},
		{"one objective", `{ vus = 1, duration = "1s", slo = { tpot = "80ms" } }`,
			plan.DefaultTokenizer, false, plan.SLO{TPOT: 80 * time.Millisecond}},
		{"empty slo", `{ vus = 1, duration = "1s", slo = {} }`, plan.DefaultTokenizer, false, plan.SLO{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, writeScript(t, "x.lua", script(tt.options)), Options{}).Plan()
			if got, want := p.Target.Tokenizer, tt.tokenizer; got != want {
				t.Errorf("Tokenizer = %q, want %q", got, want)
			}
			if got, want := p.Target.ContinuousUsage, tt.continuous; got != want {
				t.Errorf("ContinuousUsage = %v, want %v", got, want)
			}
			if got, want := p.SLO, tt.slo; got != want {
				t.Errorf("SLO = %+v, want %+v", got, want)
			}
		})
	}
}

// Every request carries a traceparent unless trace_context is false.
func TestOptionsTraceContext(t *testing.T) {
	for _, tt := range []struct {
		options string
		off     bool
	}{
		{`{ vus = 1, duration = "1s" }`, false},
		{`{ vus = 1, duration = "1s", target = { trace_context = true } }`, false},
		{`{ vus = 1, duration = "1s", target = { trace_context = false } }`, true},
	} {
		p := mustCompile(t, writeScript(t, "x.lua", script(tt.options)), Options{}).Plan()
		if p.Target.NoTraceContext != tt.off {
			t.Errorf("%s: NoTraceContext = %v, want %v", tt.options, p.Target.NoTraceContext, tt.off)
		}
	}
}

func TestOptionsShorthandWithoutIteration(t *testing.T) {
	path := writeScript(t, "x.lua", `options = { vus = 1, duration = "1s" }`)
	_, err := Compile(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "options: the shorthand calls a global function iteration(vu)") {
		t.Errorf("error = %v, want the missing iteration function named", err)
	}
}

func TestOptionsReportsEveryError(t *testing.T) {
	path := writeScript(t, "x.lua", script(`{ vus = 0, duration = "soon", dirty = {} }`))
	_, err := Compile(path, Options{})
	if err == nil {
		t.Fatal("Compile succeeded")
	}
	for _, want := range []string{"options.vus:", "options.duration:", "options.dirty.ratio:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error = %q, want it to mention %s", err, want)
		}
	}
	if got, want := strings.Count(err.Error(), "\n")+1, 3; got != want {
		t.Errorf("error has %d lines, want %d: %q", got, want, err)
	}
}

func TestOptionsErrorsKeepSecrets(t *testing.T) {
	path := writeScript(t, "x.lua", script(`{ target = { api_key = "sk-very-secret", timout = "1s" }, vus = 0 }`))
	_, err := Compile(path, Options{})
	if err == nil {
		t.Fatal("Compile succeeded")
	}
	if strings.Contains(err.Error(), "sk-very-secret") {
		t.Errorf("error leaks the API key: %q", err)
	}
}

func TestOptionsShorthand(t *testing.T) {
	tests := []struct {
		name, options string
		want          plan.Scenario
	}{
		{"constant", `{ vus = 3, duration = "10s" }`, plan.Scenario{
			Name: "default", Executor: plan.ExecutorConstantVUs, Exec: "iteration",
			Stages:       []plan.Stage{{Name: "default", Target: 3, Duration: 10 * time.Second}},
			GracefulStop: plan.DefaultGracefulStop, GracefulRampDown: plan.DefaultGracefulStop,
		}},
		{"ramping", `{ stages = { { target = 2, duration = "1m" }, { target = 0, duration = "10s", ramp = "10s" } } }`, plan.Scenario{
			Name: "default", Executor: plan.ExecutorRampingVUs, Exec: "iteration",
			Stages: []plan.Stage{{Name: "stage_1", Target: 2, Duration: time.Minute},
				{Name: "stage_2", Target: 0, Duration: 10 * time.Second, Ramp: 10 * time.Second}},
			GracefulStop: plan.DefaultGracefulStop, GracefulRampDown: plan.DefaultGracefulStop,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, writeScript(t, "x.lua", script(tt.options)), Options{})
			scs := s.Plan().Scenarios
			if got, want := len(scs), 1; got != want {
				t.Fatalf("%d scenarios, want %d", got, want)
			}
			got, _ := json.Marshal(scs[0])
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("scenario =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestPlanGolden checks the whole plan of testdata/basic.lua and of
// testdata/open.lua, which uses every executor, thresholds and custom
// metrics; run with -update to rewrite the golden files after a
// deliberate change.
func TestPlanGolden(t *testing.T) {
	for _, name := range []string{"basic", "open"} {
		t.Run(name, func(t *testing.T) {
			s := mustCompile(t, "testdata/"+name+".lua", Options{})
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // keep "< 1s" readable
			enc.SetIndent("", "  ")
			if err := enc.Encode(s.Plan()); err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, name+".plan.golden", buf.Bytes())
		})
	}
}

func TestPlanIsACopy(t *testing.T) {
	s := mustCompile(t, "testdata/basic.lua", Options{})
	p := s.Plan()
	p.Scenarios[0].Stages[0].Target = 99
	p.Scenarios[1].Tags["suite"] = "changed"
	if got, want := s.Plan().Scenarios[0].Stages[0].Target, 2; got != want {
		t.Errorf("after changing a copy, Target = %d, want %d", got, want)
	}
	if got, want := s.Plan().Scenarios[1].Tags["suite"], "basic"; got != want {
		t.Errorf("after changing a copy, tag = %q, want %q", got, want)
	}
}

func TestSeed(t *testing.T) {
	withSeed := writeScript(t, "a.lua", script(`{ vus = 1, duration = "1s", seed = 42 }`))
	without := writeScript(t, "b.lua", script(`{ vus = 1, duration = "1s" }`))
	tests := []struct {
		name string
		path string
		opt  int64
		want int64 // 0: any nonzero seed
	}{
		{"script seed", withSeed, 0, 42},
		{"caller wins", withSeed, 7, 7},
		{"caller only", without, 9, 9},
		{"derived", without, 0, 0},
		{"script seed 0 derives", writeScript(t, "c.lua", script(`{ vus = 1, duration = "1s", seed = 0 }`)), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.path, Options{Seed: tt.opt})
			got := s.Plan().Seed
			if s.SeedDerived() != (tt.want == 0) {
				t.Errorf("SeedDerived = %v, want %v", s.SeedDerived(), tt.want == 0)
			}
			if tt.want == 0 && (got <= 0 || got >= 1<<31) {
				t.Errorf("derived seed = %d, want in [1, 2^31)", got)
			}
			if tt.want != 0 && got != tt.want {
				t.Errorf("seed = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOptionsOnUnreachable(t *testing.T) {
	tests := []struct {
		target, want, wantErr string
	}{
		{"{}", "fail", ""},
		{`{ on_unreachable = "warn" }`, "warn", ""},
		{`{ on_unreachable = "fail" }`, "fail", ""},
		{`{ on_unreachable = "wran" }`, "", `options.target.on_unreachable: "wran": want fail or warn (did you mean warn?)`},
		{`{ on_unreachable = true }`, "", "options.target.on_unreachable: expected string, got boolean"},
		{`{ on_unreachabel = "warn" }`, "", "options.target.on_unreachabel: unknown key (did you mean on_unreachable?)"},
	}
	for _, tt := range tests {
		path := writeScript(t, "s.lua", "options = { vus = 1, duration = \"1s\", target = "+tt.target+" }\nfunction iteration() end")
		s, err := Compile(path, Options{})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.target, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.target, err)
		}
		if got := s.OnUnreachable(); got != tt.want {
			t.Errorf("%s: OnUnreachable = %q, want %q", tt.target, got, tt.want)
		}
	}
}
