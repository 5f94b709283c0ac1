package luabind

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

// lifecycleRunner compiles path and returns its runner as a Lifecycle.
func lifecycleRunner(t *testing.T, path string, cfg api.RunnerConfig) (engine.Runner, engine.Lifecycle) {
	t.Helper()
	r := mustCompile(t, path, Options{}).NewRunner(cfg)
	lc, ok := r.(engine.Lifecycle)
	if !ok {
		t.Fatal("the Runner does not implement engine.Lifecycle")
	}
	return r, lc
}

func TestSetupData(t *testing.T) {
	client := &fakeClient{result: engine.Result{Status: 200}}
	sink := &fakeSink{}
	r, lc := lifecycleRunner(t, "testdata/lifecycle.lua", api.RunnerConfig{Client: client, Sink: sink, Model: "m"})
	v, err := r.NewVU(testContext(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := lc.Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(client.requests()), 1; got != want {
		t.Fatalf("setup sent %d requests, want %d", got, want)
	}
	if n := len(sink.all()) + len(sink.allMetrics()); n != 0 {
		t.Errorf("setup recorded %d samples, want none", n)
	}
	vv := v.(*vm.VU)
	mustRun(t, vv, "iteration")
	want := map[string]lua.LValue{
		"keys": lua.LString("limits,model,nested,prompts,status"), "prompts": lua.LString("alpha,beta,gamma"),
		"len": lua.LNumber(3), "concat": lua.LString("alpha+beta+gamma"), "ten": lua.LString("ten"),
		"flag": lua.LTrue, "status": lua.LNumber(200), "unpacked": lua.LNumber(3), "raw": lua.LString("m1"),
		"first": lua.LNumber(1),
	}
	for k, w := range want {
		if got := out(t, vv, k); got != w {
			t.Errorf("out.%s = %v, want %v", k, got, w)
		}
	}
	reqs := client.requests()
	if got, want := reqs[len(reqs)-1].MaxTokens, 16; got != want {
		t.Errorf("max_tokens from setup data = %d, want %d", got, want)
	}
	if got, want := len(sink.all()), 1; got != want {
		t.Errorf("iteration recorded %d samples, want %d", got, want)
	}
}

func TestSetupDataReadOnly(t *testing.T) {
	client := &fakeClient{result: engine.Result{Status: 200}}
	r, lc := lifecycleRunner(t, "testdata/lifecycle.lua", api.RunnerConfig{Client: client})
	if err := lc.Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	v, err := r.NewVU(testContext(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	vv := v.(*vm.VU)
	for _, exec := range []string{"write_field", "write_new", "write_nested", "write_insert", "write_rawset",
		"write_sort", "write_remove"} {
		err := run(t, vv, exec)
		if err == nil || !strings.Contains(err.Error(), "setup data is read-only") ||
			!strings.HasPrefix(err.Error(), "testdata/lifecycle.lua:") {
			t.Errorf("%s: error = %v, want testdata/lifecycle.lua:<line>: setup data is read-only", exec, err)
		}
	}
	if err := run(t, vv, "write_metatable"); err == nil || !strings.Contains(err.Error(), "cannot change a protected metatable") {
		t.Errorf("setmetatable: error = %v, want a protected metatable", err)
	}
	mustRun(t, vv, "iteration")
	if got, want := out(t, vv, "raw"), lua.LString("m1"); got != want {
		t.Errorf("after attempted writes, data.model = %v, want %v", got, want)
	}
	mustRun(t, vv, "pass_on")
	reqs := client.requests()
	want := map[string]any{"deep": map[string]any{"flag": true}}
	if got := reqs[len(reqs)-1].Extra; !reflect.DeepEqual(got, want) {
		t.Errorf("extra = data.nested sent %v, want %v", got, want)
	}
}

func TestTeardown(t *testing.T) {
	client := &fakeClient{result: engine.Result{Status: 200}}
	sink := &fakeSink{}
	r, lc := lifecycleRunner(t, "testdata/lifecycle.lua", api.RunnerConfig{Client: client, Sink: sink})
	if err := lc.Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := lc.Teardown(testContext(t)); err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if got, want := reqs[len(reqs)-1].Messages[0].Content, "teardown m1"; got != want {
		t.Errorf("teardown sent %q, want %q", got, want)
	}
	if got := len(sink.all()); got != 0 {
		t.Errorf("teardown recorded %d samples, want none", got)
	}
	if rr := r.(*vm.Runner); rr.SetupStateOpen() {
		t.Errorf("the lifecycle LState is still open after Teardown")
	}
}

func TestSetupErrors(t *testing.T) {
	tests := []struct {
		name, setup, want string
	}{
		{"function", `return { handler = function() end }`, `setup() returned data.handler: a function cannot be handed to iterations`},
		{"nested userdata", `return { pools = { llm.pool { "a" } } }`, `setup() returned data.pools[1]: a userdata cannot be handed to iterations`},
		{"cycle", `local t = {}; t.self = t; return { t = t }`, `setup() returned data.t.self: a table cannot contain itself`},
		{"float key", `return { [1.5] = "x" }`, `setup() returned data[1.5]: keys must be strings or integers, got 1.5`},
		{"table key", `return { [{}] = "x" }`, `setup() returned data[table: `},
		{"runtime error", `error("no token")`, `s.lua:3: no token`},
		{"chat error", `llm.chat { messages = {} }`, `s.lua:3: llm.chat.messages: needs at least one message`},
		{"declare metric", `llm.metric.trend("late")`, `declare metrics at the top level`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "s.lua", "local llm = require('llmload')\nfunction setup()\n  "+tt.setup+
				"\nend\noptions = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n")
			_, lc := lifecycleRunner(t, path, api.RunnerConfig{Client: &fakeClient{}})
			err := lc.Setup(testContext(t))
			if err == nil {
				t.Fatalf("Setup succeeded, want error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) || !strings.HasPrefix(got, path+":") {
				t.Errorf("error = %q, want %s:...%s", got, path, tt.want)
			}
			if rr := lc.(*vm.Runner); rr.SetupStateOpen() {
				t.Errorf("the lifecycle LState is still open after a failed Setup")
			}
		})
	}
}

func TestNoSetup(t *testing.T) {
	path := writeScript(t, "s.lua", "options = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu, data) got = data == nil end\n")
	r, lc := lifecycleRunner(t, path, api.RunnerConfig{})
	if err := lc.Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if rr := r.(*vm.Runner); rr.SetupStateOpen() {
		t.Errorf("Setup made an LState for a script without setup()")
	}
	v, err := r.NewVU(testContext(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	mustRun(t, v.(*vm.VU), "iteration")
	if got := v.(*vm.VU).L.GetGlobal("got"); got != lua.LTrue {
		t.Errorf("data == nil is %v, want true", got)
	}
	if err := lc.Teardown(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

func TestTeardownWithoutSetup(t *testing.T) {
	client := &fakeClient{result: engine.Result{Status: 200}}
	path := writeScript(t, "s.lua", "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu) end\n"+
		"function teardown(data)\n  llm.chat { messages = { { role = 'user', content = tostring(data) } } }\nend\n")
	_, lc := lifecycleRunner(t, path, api.RunnerConfig{Client: client})
	if err := lc.Teardown(testContext(t)); err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 1 || reqs[0].Messages[0].Content != "nil" {
		t.Errorf("teardown requests = %+v, want one with content nil", reqs)
	}
}

func TestTeardownError(t *testing.T) {
	path := writeScript(t, "s.lua", "options = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n"+
		"function teardown(data)\n  error('cleanup failed')\nend\n")
	r, lc := lifecycleRunner(t, path, api.RunnerConfig{})
	err := lc.Teardown(testContext(t))
	if got, want := errString(err), path+":4: cleanup failed"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if rr := r.(*vm.Runner); rr.SetupStateOpen() {
		t.Errorf("the lifecycle LState is still open after a failed Teardown")
	}
}

func TestSetupInterrupted(t *testing.T) {
	path := writeScript(t, "s.lua", "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu) end\nfunction setup() llm.sleep('1h') end\n")
	_, lc := lifecycleRunner(t, path, api.RunnerConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := lc.Setup(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want one wrapping context.DeadlineExceeded", err)
	}
}

func TestLifecycleNotFunctions(t *testing.T) {
	path := writeScript(t, "s.lua", "options = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\nsetup = { a = 1 }\n")
	_, err := Compile(path, Options{})
	if got, want := errString(err), path+": setup: is a table; define it as a function"; !strings.HasPrefix(got, want) {
		t.Errorf("error = %q, want prefix %q", got, want)
	}
}

func TestLuaToGo(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	tests := []struct {
		src  string
		want any
	}{
		{`return nil`, nil},
		{`return true`, true},
		{`return 1.5`, 1.5},
		{`return "s"`, "s"},
		{`return {}`, map[string]any{}},
		{`return { 1, "two", { x = 3 } }`, []any{1.0, "two", map[string]any{"x": 3.0}}},
		{`return { [1] = "a", [3] = "c" }`, map[any]any{int64(1): "a", int64(3): "c"}},
		{`return { "a", k = "v" }`, map[any]any{int64(1): "a", "k": "v"}},
		{`return { [-2] = true }`, map[any]any{int64(-2): true}},
	}
	for _, tt := range tests {
		if err := L.DoString(tt.src); err != nil {
			t.Fatal(err)
		}
		got, err := luaval.LuaToGo(L.Get(-1))
		L.Pop(1)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

// TestSetupDataRoundTrip checks that the views rebuild exactly what
// luaToGo read, mixed and sparse keys included.
func TestSetupDataRoundTrip(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	views := luaval.GuardReadOnly(L)
	in := map[any]any{int64(1): "a", int64(5): []any{1.0, true}, "k": map[string]any{"x": "y"}}
	got, err := luaval.LuaToGo(views.Value(L, in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip = %#v, want %#v", got, in)
	}
}

const sleepyLifecycle = `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1s", exec = "run" } } }
function run() end
function setup()
  llm.sleep("30s")
end
function teardown()
  llm.sleep("30s")
end
`

// TestStopCutsSetupAndTeardown: RunnerConfig.Stop ends setup() and
// teardown() even when the context they were given lives on, as the
// executor's fresh teardown context after an interrupted load does.
func TestStopCutsSetupAndTeardown(t *testing.T) {
	for _, phase := range []string{"setup", "teardown"} {
		t.Run(phase, func(t *testing.T) {
			stop, cancel := context.WithCancelCause(context.Background())
			_, lc := lifecycleRunner(t, writeScript(t, "s.lua", sleepyLifecycle), api.RunnerConfig{Stop: stop})
			call := lc.Setup
			if phase == "teardown" {
				call = lc.Teardown
			}
			time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("interrupt")) })
			start := time.Now()
			err := call(context.Background())
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s() took %v after Stop ended, want it cut", phase, took)
			}
			if err == nil || !strings.Contains(err.Error(), phase+"() interrupted") {
				t.Errorf("err = %v, want %s() interrupted", err, phase)
			}
		})
	}
}

// TestStopCutsCompileAtTheLine: a top level that never ends is cut by
// Options.Stop in Compile, and the error names its line.
func TestStopCutsCompileAtTheLine(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	path := writeScript(t, "s.lua", "local t = {}\nlocal i = 0\nwhile true do i = i + 1; t[i % 100] = i end\n")
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("memory limit 1 MB exceeded")) })
	_, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }, Stop: ctx})
	if err == nil {
		t.Fatal("Compile returned no error")
	}
	if got, want := err.Error(), path+":3: init interrupted"; !strings.HasPrefix(got, want) {
		t.Errorf("err = %q, want it to start %q", got, want)
	}
	if !strings.Contains(err.Error(), "memory limit 1 MB exceeded") {
		t.Errorf("err = %q, want the cause", err)
	}
}
