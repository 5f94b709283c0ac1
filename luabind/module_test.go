package luabind

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

func moduleVU(t *testing.T, opts Options, id int) (*Script, *vm.VU) {
	t.Helper()
	s := mustCompile(t, "testdata/module.lua", opts)
	return s, newVU(t, s, api.RunnerConfig{}, id)
}

// wantError runs each exec and checks its error mentions want.
func wantErrors(t *testing.T, v *vm.VU, cases map[string]string) {
	t.Helper()
	for exec, want := range cases {
		err := run(t, v, exec)
		if err == nil {
			t.Errorf("%s: no error, want one containing %q", exec, want)
			continue
		}
		if got := err.Error(); !strings.Contains(got, want) || !strings.HasPrefix(got, "testdata/module.lua:") {
			t.Errorf("%s: error = %q, want testdata/module.lua:<line>: ...%s...", exec, got, want)
		}
	}
}

func TestEnv(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "LLMLOAD_TEST_SET" {
			return "value", true
		}
		return "", false
	}
	_, v := moduleVU(t, Options{Env: env}, 1)
	mustRun(t, v, "env")
	want := map[string]lua.LValue{"set": lua.LString("value"), "unset": lua.LNil,
		"default": lua.LString("fallback"), "set_default": lua.LString("value")}
	for k, w := range want {
		if got := out(t, v, k); got != w {
			t.Errorf("out.%s = %v, want %v", k, got, w)
		}
	}
}

func TestParam(t *testing.T) {
	params := map[string]string{"name": "alice", "rate": " 2.5 ", "ratio": "3", "stream": "true"}
	_, v := moduleVU(t, Options{Params: params}, 1)
	mustRun(t, v, "params")
	want := map[string]lua.LValue{
		"name": lua.LString("alice"), "rate": lua.LNumber(2.5), "ratio": lua.LNumber(3),
		"stream": lua.LTrue, "missing": lua.LNil, "missing_default": lua.LNumber(7),
		"name_default": lua.LString("alice"), "rate_plus": lua.LNumber(3.5),
	}
	for k, w := range want {
		if got := out(t, v, k); got != w {
			t.Errorf("out.%s = %v (%s), want %v (%s)", k, got, got.Type(), w, w.Type())
		}
	}
	wantErrors(t, v, map[string]string{
		"param_not_number":  `llm.param("name"): --set name="alice" is not a number`,
		"param_not_bool":    `llm.param("name"): --set name="alice" is not true or false`,
		"param_bad_default": "default must be a string, number or boolean, got table",
	})
}

func TestPoolNext(t *testing.T) {
	tests := []struct {
		id   int
		want string
	}{{1, "abca"}, {2, "bcab"}, {3, "cabc"}, {4, "abca"}}
	s := mustCompile(t, "testdata/module.lua", Options{})
	for _, tt := range tests {
		v := newVU(t, s, api.RunnerConfig{}, tt.id)
		mustRun(t, v, "pool_next")
		outTbl := v.L.GetGlobal("out").(*lua.LTable)
		var got string
		for i := 1; i <= 4; i++ {
			got += outTbl.RawGetInt(i).String()
		}
		if got != tt.want {
			t.Errorf("VU %d: next() gave %q, want %q (round robin from an offset by VU id)", tt.id, got, tt.want)
		}
		if got, want := out(t, v, "len"), lua.LNumber(3); got != want {
			t.Errorf("len() = %v, want %v", got, want)
		}
		if got, want := out(t, v, "hash"), lua.LNumber(3); got != want {
			t.Errorf("#pool = %v, want %v", got, want)
		}
	}
}

func TestPoolRandom(t *testing.T) {
	_, v := moduleVU(t, Options{Seed: 1}, 1)
	mustRun(t, v, "pool_random")
	total := 0
	for _, k := range []string{"a", "b", "c"} {
		n, _ := out(t, v, k).(lua.LNumber)
		if n < 50 {
			t.Errorf("%q drawn %v times of 300, want about 100", k, n)
		}
		total += int(n)
	}
	if got, want := total, 300; got != want {
		t.Errorf("%d draws from the pool's items, want %d", got, want)
	}
}

func TestPoolErrors(t *testing.T) {
	_, v := moduleVU(t, Options{}, 1)
	wantErrors(t, v, map[string]string{
		"pool_empty":      "llm.pool needs at least one string",
		"pool_not_string": "llm.pool: item [2] must be a string, got number",
		"pool_map":        "llm.pool: unexpected key x",
		"pool_dot_call":   "pool expected (call methods with a colon: pool:next())",
	})
}

func TestWeighted(t *testing.T) {
	_, v := moduleVU(t, Options{Seed: 1}, 1)
	mustRun(t, v, "weighted")
	short, _ := out(t, v, "short").(lua.LNumber)
	long, _ := out(t, v, "long").(lua.LNumber)
	if got, want := int(short+long), 4000; got != want {
		t.Fatalf("%d draws, want %d", got, want)
	}
	if ratio := float64(long) / float64(short); ratio < 2.4 || ratio > 3.7 {
		t.Errorf("long/short = %.2f, want about 3 (weights 3:1)", ratio)
	}
	wantErrors(t, v, map[string]string{
		"weighted_zero":   `llm.weighted: weight of "b" must be a number > 0, got 0`,
		"weighted_string": `llm.weighted: weight of "a" must be a number > 0, got 1`,
		"weighted_empty":  "llm.weighted needs at least one key",
	})
}

// draws runs the script's draws function in a fresh VU and returns what it
// drew from each random source, to compare sequences.
func draws(t *testing.T, seed int64, id int) string {
	t.Helper()
	_, v := moduleVU(t, Options{Seed: seed}, id)
	mustRun(t, v, "draws")
	d := v.L.GetGlobal("out").(*lua.LTable)
	var b strings.Builder
	for i := 1; i <= d.Len(); i++ {
		b.WriteString(d.RawGetInt(i).String() + " ")
	}
	return b.String()
}

func TestRandomIsSeededPerVU(t *testing.T) {
	if a, b := draws(t, 5, 1), draws(t, 5, 1); a != b {
		t.Errorf("same seed and VU drew differently:\n%s\n%s", a, b)
	}
	if a, b := draws(t, 5, 1), draws(t, 5, 2); a == b {
		t.Errorf("VUs 1 and 2 drew the same: %s", a)
	}
	if a, b := draws(t, 5, 1), draws(t, 6, 1); a == b {
		t.Errorf("seeds 5 and 6 drew the same: %s", a)
	}
}

func TestRandInt(t *testing.T) {
	_, v := moduleVU(t, Options{Seed: 3}, 1)
	mustRun(t, v, "rand_int")
	checks := []struct {
		key  string
		want lua.LValue
	}{{"min", lua.LNumber(1)}, {"max", lua.LNumber(6)}, {"whole", lua.LTrue}, {"same", lua.LNumber(4)}}
	for _, c := range checks {
		if got := out(t, v, c.key); got != c.want {
			t.Errorf("out.%s = %v, want %v", c.key, got, c.want)
		}
	}
	if d, ok := out(t, v, "default").(lua.LNumber); !ok || d < 0 || d > 1<<31-1 || float64(d) != float64(int64(d)) {
		t.Errorf("rand_int() = %v, want an integer in [0, 2^31-1]", out(t, v, "default"))
	}
	wantErrors(t, v, map[string]string{
		"rand_int_one_arg":  "llm.rand_int: pass no arguments or both lo and hi",
		"rand_int_reversed": "hi must be ≥ lo",
		"rand_int_fraction": "integer expected, got 2.5",
	})
}

func TestSleep(t *testing.T) {
	_, v := moduleVU(t, Options{}, 1)
	start := time.Now()
	mustRun(t, v, "sleep")
	if took := time.Since(start); took < 60*time.Millisecond {
		t.Errorf("llm.sleep(\"30ms\") and llm.sleep(0.03) took %v together, want ≥ 60ms", took)
	}
	wantErrors(t, v, map[string]string{
		"sleep_bad":      `"soon" is not a duration`,
		"sleep_negative": "duration must not be negative, got -1s",
	})
}

func TestThink(t *testing.T) {
	_, v := moduleVU(t, Options{}, 1)
	start := time.Now()
	mustRun(t, v, "think")
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("think functions took %v, want ≥ 30ms", took)
	}
	wantErrors(t, v, map[string]string{
		"think_reversed":  "upper bound 1s is below the lower bound 2s",
		"think_zero_mean": "mean must be > 0",
	})
}

func TestSleepInterrupted(t *testing.T) {
	_, v := moduleVU(t, Options{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	m := v.Module
	m.Begin(ctx, &engine.Iteration{})
	m.Pause(time.Hour)
	m.End()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("pause(1h) took %v after its context ended", took)
	}
}

func TestCheck(t *testing.T) {
	s := mustCompile(t, "testdata/module.lua", Options{})
	sink := &fakeSink{}
	v := newVU(t, s, api.RunnerConfig{Sink: sink}, 1)
	mustRun(t, v, "checks")
	if got, want := out(t, v, "all"), lua.LFalse; got != want {
		t.Errorf("llm.check with failures = %v, want %v", got, want)
	}
	if got, want := out(t, v, "passing"), lua.LTrue; got != want {
		t.Errorf("llm.check with all passing = %v, want %v", got, want)
	}
	want := map[string][2]int64{"is 200": {2, 0}, "fn ok": {1, 0}, "fn fails": {0, 1},
		"fn errors": {0, 1}, "truthy": {1, 0}}
	got := sink.checkCounts()
	if len(got) != len(want) {
		t.Errorf("checks = %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("checks[%q] = %v, want %v (passes, fails)", name, got[name], w)
		}
	}
	wantErrors(t, v, map[string]string{"check_not_table": "bad argument #2 to check (table expected, got boolean)"})
}

func TestCheckSamples(t *testing.T) {
	path := writeScript(t, "c.lua", `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s",
                                tags = { suite = "x", check = "scenario" } } } }
llm.check({}, { ["at init"] = true })
function chat(vu) llm.check({ status = 500 }, { ["is 200"] = function(r) return r.status == 200 end }) end
`)
	s := mustCompile(t, path, Options{})
	sink := &fakeSink{}
	v := newVU(t, s, api.RunnerConfig{Sink: sink}, 1)
	for _, warmup := range []bool{false, true} {
		it := engine.Iteration{Scenario: "s", Stage: "st", Exec: "chat", VUID: 1, Warmup: warmup}
		if err := v.RunIteration(testContext(t), it); err != nil {
			t.Fatal(err)
		}
	}
	got := sink.allMetrics()
	want := []engine.MetricSample{
		{Name: "checks", Kind: engine.MetricRate, Value: 0, Scenario: "s", Stage: "st",
			Tags: map[string]string{"suite": "x", "check": "is 200"}},
		{Name: "checks", Kind: engine.MetricRate, Value: 0, Scenario: "s", Stage: "st", Warmup: true,
			Tags: map[string]string{"suite": "x", "check": "is 200"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metric samples =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCheckNotRecordedWhenInterrupted(t *testing.T) {
	path := writeScript(t, "c.lua", `local llm = require("llmload")
options = { vus = 1, duration = "1s" }
function iteration(vu)
  llm.sleep("1h")
  llm.check({}, { late = true })
end
`)
	s := mustCompile(t, path, Options{})
	sink := &fakeSink{}
	v := newVU(t, s, api.RunnerConfig{Sink: sink}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := v.RunIteration(ctx, engine.Iteration{Scenario: "default", Exec: "iteration", VUID: 1}); err == nil {
		t.Fatal("interrupted iteration returned no error")
	}
	if got := sink.allMetrics(); len(got) != 0 {
		t.Errorf("an interrupted iteration recorded %v", got)
	}
}

func TestScenarioEnv(t *testing.T) {
	env := func(name string) (string, bool) {
		switch name {
		case "MODEL", "ONLY_PROCESS":
			return "process-" + name, true
		}
		return "", false
	}
	path := writeScript(t, "e.lua", `local llm = require("llmload")
at_init = llm.env("MODEL")
options = { scenarios = {
  a = { executor = "constant-vus", exec = "read", vus = 1, duration = "1s", env = { MODEL = "a-model", EXTRA = "x" } },
  b = { executor = "constant-vus", exec = "read", vus = 1, duration = "1s" },
} }
function read(vu)
  out = { model = llm.env("MODEL"), extra = llm.env("EXTRA", "none"), process = llm.env("ONLY_PROCESS") }
end
`)
	s := mustCompile(t, path, Options{Env: env})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	if got, want := v.L.GetGlobal("at_init"), lua.LString("process-MODEL"); got != want {
		t.Errorf("llm.env at init = %v, want %v (the process environment only)", got, want)
	}
	tests := []struct {
		scenario string
		want     map[string]lua.LValue
	}{
		{"a", map[string]lua.LValue{"model": lua.LString("a-model"), "extra": lua.LString("x"),
			"process": lua.LString("process-ONLY_PROCESS")}},
		{"b", map[string]lua.LValue{"model": lua.LString("process-MODEL"), "extra": lua.LString("none"),
			"process": lua.LString("process-ONLY_PROCESS")}},
	}
	for _, tt := range tests {
		if err := v.RunIteration(testContext(t), engine.Iteration{Scenario: tt.scenario, Exec: "read", VUID: 1}); err != nil {
			t.Fatal(err)
		}
		for k, w := range tt.want {
			if got := out(t, v, k); got != w {
				t.Errorf("scenario %s: llm.env → out.%s = %v, want %v", tt.scenario, k, got, w)
			}
		}
	}
}
