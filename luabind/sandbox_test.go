package luabind

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/sandbox"
	lua "github.com/yuin/gopher-lua"
)

func TestSandboxDenies(t *testing.T) {
	s := mustCompile(t, "testdata/sandbox.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	probes := []string{"os_execute", "os_exit", "os_getenv", "os_remove", "io", "load", "loadstring",
		"loadfile", "dofile", "require_file", "require_module", "loadlib", "debug", "channel",
		"coroutine", "collectgarbage"}
	for _, p := range probes {
		t.Run(p, func(t *testing.T) {
			err := run(t, v, "probe_"+p)
			if err == nil {
				t.Fatalf("probe_%s succeeded; the sandbox must not offer it", p)
			}
			if !strings.HasPrefix(err.Error(), "testdata/sandbox.lua:") {
				t.Errorf("error = %q, want it to point into the script", err)
			}
		})
	}
	if got := v.L.GetGlobal("evil_ran"); got != lua.LNil {
		t.Errorf("testdata/evil.lua ran (evil_ran = %v)", got)
	}
	if _, err := os.Stat("testdata/evil.lua"); err != nil {
		t.Errorf("testdata/evil.lua is gone: %v", err)
	}
}

func TestRequireFileMessage(t *testing.T) {
	s := mustCompile(t, "testdata/sandbox.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	err := run(t, v, "probe_require_file")
	want := `testdata/sandbox.lua:14: module "testdata.evil" not found: llmload scripts can require only llmload (the sandbox leaves out`
	if got := errString(err); !strings.HasPrefix(got, want) {
		t.Errorf("error = %q, want it to start with %q", got, want)
	}
}

func TestSandboxAllows(t *testing.T) {
	s := mustCompile(t, "testdata/sandbox.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	mustRun(t, v, "allowed")
	want := map[string]lua.LValue{
		"time": lua.LString("number"), "clock": lua.LString("number"), "date": lua.LString("1970"),
		"upper": lua.LString("X"), "floor": lua.LNumber(1), "concat": lua.LString("a,b"),
		"pcall": lua.LFalse, "format": lua.LString("3"), "random": lua.LString("number"),
		"required": lua.LString("table"), "required_string": lua.LTrue,
	}
	for k, w := range want {
		if got := out(t, v, k); got != w {
			t.Errorf("out.%s = %v, want %v", k, got, w)
		}
	}
}

func TestRequireOtherModule(t *testing.T) {
	path := writeScript(t, "req.lua", "require('json')\n")
	_, err := Compile(path, Options{})
	if err == nil || !strings.Contains(err.Error(), `module "json" not found`) {
		t.Errorf("error = %v, want module \"json\" not found", err)
	}
}

func TestStringRepIsBounded(t *testing.T) {
	L := sandbox.New(rand.NewPCG(1, 2), 1)
	defer L.Close()
	if err := L.DoString(`assert(string.rep("ab", 3) == "ababab"); assert(("x"):rep(2) == "xx")`); err != nil {
		t.Fatalf("ordinary string.rep: %v", err)
	}
	err := L.DoString(`local s = string.rep("x", 1e10)`)
	if err == nil || !strings.Contains(err.Error(), "beyond llmload's 64 MB limit") {
		t.Errorf("err = %v", err)
	}
}
