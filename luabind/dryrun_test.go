package luabind

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
)

// TestDryRunSendsNothingAndTakesNoTime: sleeps and think times return at
// once (their time is noted), every request gets a canned success that
// the script reads on, and setup() runs first against the same answers,
// its data reaching the iterations.
func TestDryRunSendsNothingAndTakesNoTime(t *testing.T) {
	path := writeScript(t, "s.lua", `
local llm = require("llmload")
local think = llm.think.constant("2s")
options = { scenarios = { sweep = { executor = "ramping-vus", exec = "chat",
  stages = { { name = "c1", target = 1, duration = "1m" }, { name = "c4", target = 4, duration = "1m" } } } } }
function setup()
  local r = llm.chat { messages = { { role = "user", content = "which city?" } }, max_tokens = 4 }
  return { city = r.ok and "Paris" or "?" }
end
function chat(vu, data)
  local res = llm.chat { messages = { { role = "user", content = ("[req_%d] %s in %s"):format(vu.request_id, vu.stage, data.city) } },
                         max_tokens = 32, temperature = 0.7 }
  if res.status ~= 200 or res.text == "" or res.output_tokens ~= 32 then error("unexpected canned answer") end
  llm.sleep("1s")
  think()
end
`)
	s := mustCompile(t, path, Options{})
	start := time.Now()
	d, err := s.DryRun(testContext(t), 10)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("dry run took %v: sleeps must not wait", took)
	}
	if d.SetupError != "" || len(d.Profiles) != 1 {
		t.Fatalf("dry run = %+v", d)
	}
	if p := d.Profiles[0]; p.Iterations != 10 || p.Requests != 10 || p.Think != 30*time.Second || p.Error != "" {
		t.Errorf("profile = %+v, want 10 iterations, 10 requests, 30s of think time", p)
	}
	if len(d.Requests) != 11 || !d.Requests[0].Setup || d.Requests[0].Scenario != "" {
		t.Fatalf("requests: %d, first %+v; want setup's, then 10", len(d.Requests), d.Requests[0])
	}
	for i, r := range d.Requests[1:] {
		stage := "c1"
		if i >= 5 {
			stage = "c4"
		}
		want := "] " + stage + " in Paris"
		if r.Scenario != "sweep" || r.Stage != stage || r.VU != 1 || r.Iteration != int64(i) || r.Dirty != "" ||
			!strings.HasSuffix(r.Request.Messages[0].Content, want) {
			t.Errorf("request %d = %+v %q, want stage %s, iteration %d, content ending %q", i, r, r.Request.Messages[0].Content, stage, i, want)
		}
	}
	if got, err := s.SampleRequests(testContext(t), 2); err != nil || len(got) != 3 {
		t.Errorf("SampleRequests = %d requests, %v", len(got), err)
	}
}

// TestDryRunFollowsToolCalls: a canned answer calls the first tool
// offered when the user spoke last, so an agent's second step is built.
func TestDryRunFollowsToolCalls(t *testing.T) {
	path := writeScript(t, "s.lua", `
local llm = require("llmload")
local tool = { type = "function", ["function"] = { name = "get_weather", parameters = { type = "object" } } }
options = { vus = 1, duration = "10s" }
function iteration(vu)
  local msgs = { { role = "user", content = "weather?" } }
  local call = llm.chat { messages = msgs, tools = { tool }, max_tokens = 8 }
  if call.tool_calls == nil then return end
  msgs[#msgs + 1] = { role = "assistant", tool_calls = call.tool_calls }
  msgs[#msgs + 1] = { role = "tool", tool_call_id = call.tool_calls[1].id, content = "sunny" }
  llm.chat { messages = msgs, tools = { tool }, max_tokens = 8 }
end
`)
	d, err := mustCompile(t, path, Options{}).DryRun(testContext(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Profiles[0]; got.Iterations != 3 || got.Requests != 6 {
		t.Errorf("profile = %+v, want 3 iterations of two requests", got)
	}
	if msgs := d.Requests[1].Request.Messages; len(msgs) != 3 || msgs[1].ToolCalls[0].Name != "get_weather" {
		t.Errorf("second request = %+v", msgs)
	}
}

// TestDryRunBounds: a script error stops a scenario's sampling (kept in
// its profile); an iteration that loops on requests is cut; the iteration
// executors sample no more than they run; pacing is noted, not slept;
// dirty kinds come with their requests.
func TestDryRunBounds(t *testing.T) {
	path := writeScript(t, "s.lua", `
local llm = require("llmload")
local pace = llm.think.constant_pacing("3s")
options = {
  dirty = { ratio = 1, kinds = { empty = 1 } },
  scenarios = {
    broken = { executor = "constant-vus", exec = "broken", vus = 1, duration = "1m" },
    counted = { executor = "shared-iterations", exec = "paced", vus = 2, iterations = 3 },
    loop = { executor = "constant-vus", exec = "loop", vus = 1, duration = "1m" },
  },
}
function broken(vu)
  llm.chat { messages = { { role = "user", content = "x" } }, max_tokens = 1 }
  if vu.iteration == 2 then error("broke at three") end
end
function paced(vu)
  llm.chat { messages = { { role = "user", content = "y" } }, max_tokens = 1 }
  pace()
end
function loop(vu)
  while true do llm.chat { messages = { { role = "user", content = "z" } }, max_tokens = 1 } end
end
`)
	d, err := mustCompile(t, path, Options{}).DryRun(testContext(t), 50)
	if err != nil {
		t.Fatal(err)
	}
	broken, counted, loop := d.Profiles[0], d.Profiles[1], d.Profiles[2]
	if broken.Iterations != 2 || !strings.Contains(broken.Error, "s.lua:14: broke at three") {
		t.Errorf("broken = %+v", broken)
	}
	if counted.Iterations != 3 || counted.Pace != 3*time.Second || counted.Think != 0 {
		t.Errorf("counted = %+v, want 3 iterations paced at 3s", counted)
	}
	if loop.Iterations != 0 || !strings.Contains(loop.Error, "more than 200 requests") {
		t.Errorf("loop = %+v", loop)
	}
	for _, r := range d.Requests {
		if r.Dirty != "empty" || r.Request.Messages[0].Content != "" {
			t.Fatalf("request %+v: want every one malformed as empty", r)
		}
	}
	if counted.Requests != 0 {
		t.Errorf("dirty requests counted as clean: %+v", counted)
	}
}

// TestDryRunTrace: a trace scenario's iterations replay its first records.
func TestDryRunTrace(t *testing.T) {
	s := mustCompile(t, "../scenarios/trace_replay.lua", Options{})
	d, err := s.DryRun(testContext(t), 5)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Profiles[0]; p.Iterations != 5 || p.Requests != 5 || p.Error != "" {
		t.Fatalf("profile = %+v", p)
	}
	tr := s.Plan().Scenarios[0].Trace
	for i, r := range d.Requests {
		if r.Request.Endpoint != engine.EndpointCompletions || r.Request.Prompt == "" || r.Request.MaxTokens <= 0 || r.Iteration != int64(i) {
			t.Errorf("request %d = %+v", i, r)
		}
	}
	if tr == nil || len(tr.Arrivals) < 5 {
		t.Fatalf("trace = %+v", tr)
	}
}

// TestObserveHook: a runner's Observe sees each request of an iteration
// before it is sent, with the iteration and its dirty kind, and setup's
// with no iteration.
func TestObserveHook(t *testing.T) {
	path := writeScript(t, "s.lua", `
local llm = require("llmload")
options = { vus = 1, duration = "1s" }
function setup() llm.chat { messages = { { role = "user", content = "setup" } } } end
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "clean" } }, max_tokens = 3 }
  llm.chat { messages = { { role = "user", content = "dirty" } }, dirty = "empty" }
end
`)
	s := mustCompile(t, path, Options{})
	type seen struct {
		it      *engine.Iteration
		content string
		dirty   string
	}
	var got []seen
	client := &fakeClient{result: engine.Result{Status: 200}}
	cfg := api.RunnerConfig{Client: client, Observe: func(it *engine.Iteration, req *engine.ChatRequest, dirty string) {
		if n := len(client.requests()); n != len(got) {
			t.Errorf("observed after the client got it (%d requests sent, %d observed)", n, len(got))
		}
		got = append(got, seen{it, req.Messages[0].Content, dirty})
	}}
	r := s.NewRunner(cfg)
	if err := r.(engine.Lifecycle).Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	v := newVU(t, s, cfg, 7)
	if err := v.RunIteration(testContext(t), engine.Iteration{Scenario: "default", Stage: "default", Exec: "iteration", VUID: 7}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].it != nil || got[0].content != "setup" || got[1].it == nil || got[1].it.VUID != 7 ||
		got[1].content != "clean" || got[1].dirty != "" || got[2].dirty != "empty" || got[2].content != "" {
		t.Errorf("observed %+v", got)
	}
}
