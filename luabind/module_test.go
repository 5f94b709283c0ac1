package luabind

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	lua "github.com/yuin/gopher-lua"
)

func moduleVU(t *testing.T, opts Options, id int) (*Script, *vu) {
	t.Helper()
	s := mustCompile(t, "testdata/module.lua", opts)
	return s, newVU(t, s, RunnerConfig{}, id)
}

// wantError runs each exec and checks its error mentions want.
func wantErrors(t *testing.T, v *vu, cases map[string]string) {
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
		v := newVU(t, s, RunnerConfig{}, tt.id)
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
	m := v.m
	m.begin(ctx, &engine.Iteration{})
	m.pause(time.Hour)
	m.end()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("pause(1h) took %v after its context ended", took)
	}
}

func TestCheck(t *testing.T) {
	s, v := moduleVU(t, Options{}, 1)
	mustRun(t, v, "checks")
	if got, want := out(t, v, "all"), lua.LFalse; got != want {
		t.Errorf("llm.check with failures = %v, want %v", got, want)
	}
	if got, want := out(t, v, "passing"), lua.LTrue; got != want {
		t.Errorf("llm.check with all passing = %v, want %v", got, want)
	}
	// A warmup iteration counts nothing.
	err := v.RunIteration(testContext(t), engine.Iteration{Exec: "checks", VUID: 1, Warmup: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"is 200": {2, 0}, "fn ok": {1, 0}, "fn fails": {0, 1},
		"fn errors": {0, 1}, "truthy": {1, 0}}
	got := s.Checks()
	if len(got) != len(want) {
		t.Errorf("Checks() = %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("Checks()[%q] = %v, want %v (passes, fails)", name, got[name], w)
		}
	}
	wantErrors(t, v, map[string]string{"check_not_table": "bad argument #2 to check (table expected, got boolean)"})
}
