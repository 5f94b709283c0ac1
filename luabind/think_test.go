package luabind

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

const thinkScript = `local llm = require("llmload")
options = { vus = 1, duration = "1s" }
local pace = llm.think.constant_pacing("60ms")
local jitter = llm.think.normal("1ms", "50ms")
function iteration(vu) end
function paced(vu) pace() end
hourly = llm.think.constant_pacing("1h")
function normal(vu) for i = 1, 20 do jitter() end end
function normal_bad(vu) llm.think.normal("1s", "-1s") end
function pacing_zero(vu) llm.think.constant_pacing(0) end
`

func TestConstantPacing(t *testing.T) {
	s := mustCompile(t, writeScript(t, "t.lua", thinkScript), Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	start := time.Now()
	for range 3 {
		mustRun(t, v, "paced")
	}
	// Three paced iterations that do nothing else take three paces.
	if took := time.Since(start); took < 180*time.Millisecond || took > 10*time.Second {
		t.Errorf("3 iterations paced at 60ms took %v, want ≥ 180ms", took)
	}
	// An iteration already past its pace does not sleep: pretend this one
	// began an hour ago and pace it at an hour.
	v.Module.Begin(testContext(t), &engine.Iteration{Exec: "iteration", VUID: 1})
	defer v.Module.End()
	v.Module.IterStart = time.Now().Add(-time.Hour)
	start = time.Now()
	if err := v.L.CallByParam(lua.P{Fn: v.L.GetGlobal("hourly"), Protect: true}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("pacer past its pace slept %v, want no sleep", took)
	}
}

func TestThinkNormal(t *testing.T) {
	s := mustCompile(t, writeScript(t, "t.lua", thinkScript), Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	start := time.Now()
	mustRun(t, v, "normal") // 20 draws of N(1ms, 50ms), about half clamped to 0
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("20 normal think times took %v", took)
	}
	for exec, want := range map[string]string{
		"normal_bad":  "duration must not be negative, got -1s",
		"pacing_zero": "pace must be > 0",
	} {
		err := run(t, v, exec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", exec, err, want)
		}
	}
}

func TestConstantPacingAtInit(t *testing.T) {
	path := writeScript(t, "t.lua", "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu) end\nllm.think.constant_pacing('1s')()\n")
	_, err := Compile(path, Options{})
	if got, want := errString(err), path+":4: llm.think.constant_pacing: the pacer can only be called inside an iteration"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}
