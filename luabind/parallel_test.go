package luabind

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
)

// slowClient answers every request after delay (per prompt when named in
// delays), noting when each started; a canceled request ends at once.
type slowClient struct {
	mu     sync.Mutex
	delay  time.Duration
	delays map[string]time.Duration
	starts []time.Time
	sent   []string
}

func (c *slowClient) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	start := time.Now()
	prompt := ""
	if n := len(req.Messages); n > 0 {
		prompt = req.Messages[n-1].Content
	}
	c.mu.Lock()
	c.starts = append(c.starts, start)
	c.sent = append(c.sent, prompt)
	d, ok := c.delays[prompt]
	if !ok {
		d = c.delay
	}
	c.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return &engine.Result{Start: start, Status: 200, Text: "ok " + prompt, InputTokens: 5, OutputTokens: 3, E2E: time.Since(start)}
	case <-ctx.Done():
		return &engine.Result{Start: start, Err: &engine.Error{Class: engine.ErrCanceled, Message: ctx.Err().Error()}}
	}
}

func (c *slowClient) startTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.starts...)
}

func (s *fakeSink) allTasks() []engine.TaskSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]engine.TaskSample(nil), s.tasks...)
}

const parallelHeader = "local llm = require(\"llmload\")\noptions = { vus = 1, duration = \"1s\" }\nout = {}\n"

// parallelVU compiles src (after parallelHeader, so its line n is the
// file's line n+3) with client and a recording sink.
func parallelVU(t *testing.T, src string, client engine.Client) (*vm.VU, *fakeSink) {
	t.Helper()
	sink := &fakeSink{}
	s := mustCompile(t, writeScript(t, "s.lua", parallelHeader+src), Options{})
	return newVU(t, s, api.RunnerConfig{Client: client, Sink: sink, Model: "m"}, 1), sink
}

// Sixteen branches' requests leave at one instant, and llm.parallel
// returns when the slowest is in: each branch's result at its index.
func TestParallelFanOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &slowClient{delay: 100 * time.Millisecond, delays: map[string]time.Duration{"b16": 300 * time.Millisecond}}
		v, sink := parallelVU(t, `
function iteration()
  local fns = {}
  for i = 1, 16 do
    fns[i] = function() return llm.chat{ messages = { { role = "user", content = "b" .. i } } } end
  end
  local t0 = os.clock()
  local results = llm.parallel(fns)
  out.n = #results
  out.ok = 0
  for i, r in ipairs(results) do
    if r.status == 200 and r.text == "ok b" .. i then out.ok = out.ok + 1 end
  end
end
`, client)
		start := time.Now()
		mustRun(t, v, "iteration")
		if took := time.Since(start); took != 300*time.Millisecond {
			t.Errorf("the fan-out took %v, want the slowest branch's 300ms", took)
		}
		starts := client.startTimes()
		if len(starts) != 16 {
			t.Fatalf("%d requests, want 16", len(starts))
		}
		for i, s := range starts {
			if !s.Equal(start) {
				t.Errorf("request %d left at +%v, want every one at once", i+1, s.Sub(start))
			}
		}
		if n, ok := out(t, v, "n").String(), out(t, v, "ok").String(); n != "16" || ok != "16" {
			t.Errorf("results: %s, %s of them each branch's own answer; want 16, 16", n, ok)
		}
		if got := len(sink.all()); got != 16 {
			t.Errorf("%d samples, want 16", got)
		}
	})
}

// An agent's task: a planner, four workers in parallel (each a call, a
// tool delay and a call), a join. The task's time is the planner plus the
// slowest worker plus the join; its calls, tokens and tool time add up
// every branch's, and each worker's own task hangs below it.
func TestParallelTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &slowClient{delay: 100 * time.Millisecond, delays: map[string]time.Duration{"w3 first": 400 * time.Millisecond}}
		v, sink := parallelVU(t, `
local function ask(text) return llm.chat{ messages = { { role = "user", content = text } } } end
function iteration()
  out.answer = llm.task("swarm", function(goal)
    ask("plan " .. goal)
    local workers = {}
    for i = 1, 4 do
      workers[i] = function()
        return llm.task("worker", function()
          ask("w" .. i .. " first")
          llm.tool_delay("1s")
          return ask("w" .. i .. " second").text
        end)
      end
    end
    local answers = llm.parallel(workers)
    ask("join")
    return answers[3]
  end, "g")
end
`, client)
		mustRun(t, v, "iteration")
		if got := out(t, v, "answer").String(); got != "ok w3 second" {
			t.Errorf("llm.task returned %q, want the function's result", got)
		}
		tasks := sink.allTasks()
		if len(tasks) != 5 {
			t.Fatalf("%d tasks recorded, want 4 workers and the swarm: %+v", len(tasks), tasks)
		}
		swarm := tasks[4]
		if swarm.Name != "swarm" || swarm.Err != "" || swarm.Scenario != "s" || swarm.Stage != "st" || swarm.Tags["task"] != "swarm" {
			t.Errorf("last task %+v, want the swarm, ended well", swarm)
		}
		// plan 100ms + worker 3 (400 + 1000 + 100) + join 100.
		if want := 1700 * time.Millisecond; swarm.Duration != want {
			t.Errorf("swarm took %v, want %v", swarm.Duration, want)
		}
		if swarm.Calls != 10 || swarm.Failed != 0 || swarm.InputTokens != 50 || swarm.OutputTokens != 30 || swarm.Tool != 4*time.Second {
			t.Errorf("swarm counted calls %d (failed %d), tokens %d in %d out, tool %v; want 10 (0), 50, 30, 4s",
				swarm.Calls, swarm.Failed, swarm.InputTokens, swarm.OutputTokens, swarm.Tool)
		}
		for _, w := range tasks[:4] {
			if w.Name != "worker" || w.Calls != 2 || w.Tool != time.Second || w.Err != "" {
				t.Errorf("worker task %+v, want 2 calls and 1s of tool time", w)
			}
		}
	})
}

// A branch that raises lets the others finish; llm.parallel then raises
// naming the branch and its line, and the task around it fails with that.
func TestParallelBranchError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &slowClient{delay: 100 * time.Millisecond}
		v, sink := parallelVU(t, `
local function ask(text) return llm.chat{ messages = { { role = "user", content = text } } } end
function iteration()
  llm.task("t", function()
    llm.parallel {
      function() ask("a1"); ask("a2") end,
      function() ask("b1"); error("boom") end,
      function() ask("c1"); ask("c2"); ask("c3") end,
    }
  end)
end
`, client)
		err := run(t, v, "iteration")
		if err == nil || !strings.Contains(err.Error(), "llm.parallel: branch 2 failed: ") || !strings.Contains(err.Error(), "s.lua:10: boom") {
			t.Fatalf("err = %v, want branch 2 named with its line", err)
		}
		if got := len(sink.all()); got != 6 {
			t.Errorf("%d samples, want the other branches' 5 and the failed one's first", got)
		}
		tasks := sink.allTasks()
		if len(tasks) != 1 || !strings.Contains(tasks[0].Err, "s.lua:10: boom") || tasks[0].Calls != 6 {
			t.Errorf("tasks %+v, want the one task failed with the branch's line after its 6 calls", tasks)
		}
	})
}

// After its timeout the branches still waiting are ended, named, and the
// request in flight is canceled.
func TestParallelTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &slowClient{delay: 100 * time.Millisecond, delays: map[string]time.Duration{"stuck": time.Hour}}
		v, sink := parallelVU(t, `
local function ask(text) return llm.chat{ messages = { { role = "user", content = text } } } end
function iteration()
  llm.parallel({
    function() ask("quick") end,
    function() local r = ask("stuck"); out.class = r.error_class; ask("never") end,
  }, { timeout = "2s" })
end
`, client)
		start := time.Now()
		err := run(t, v, "iteration")
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("took %v, want the 2s timeout", took)
		}
		if err == nil || !strings.Contains(err.Error(), "branch 2 failed: ") || !strings.Contains(err.Error(), "timeout = 2s") {
			t.Fatalf("err = %v, want branch 2 ended by the timeout", err)
		}
		if n := len(client.startTimes()); n != 2 {
			t.Errorf("%d requests sent, want 2: none after the time was up", n)
		}
		if got := len(sink.all()); got != 2 {
			t.Errorf("%d samples, want 2 (the canceled one recorded as such)", got)
		}
	})
}

// A branch stuck in Lua (no request, no sleep) is ended by the timeout
// too: the branch's coroutine runs with the fan-out's context. Real time:
// a spinning goroutine never lets a synctest bubble's clock move.
func TestParallelEndlessBranch(t *testing.T) {
	v, _ := parallelVU(t, `
function iteration()
  llm.parallel({ function() while true do end end }, { timeout = "50ms" })
end
`, &slowClient{})
	start := time.Now()
	err := run(t, v, "iteration")
	if err == nil || !strings.Contains(err.Error(), "branch 1 failed: ") || !strings.Contains(err.Error(), "timeout = 50ms") {
		t.Fatalf("err = %v, want branch 1 ended by the timeout", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

func TestParallelErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"more than the bound", `local fns = {} for i = 1, 17 do fns[i] = function() end end llm.parallel(fns)`,
			"llm.parallel: 17 branches, more than the bound of 16 (pass { max = 17 }"},
		{"a raised bound", `local fns = {} for i = 1, 17 do fns[i] = function() end end llm.parallel(fns, { max = 17 }) error("fine")`, "s.lua:5: fine"},
		{"not a function", `llm.parallel{ function() end, "two" }`, "llm.parallel: branch 2 is a string, want a function"},
		{"not a list", `llm.parallel{ a = function() end }`, "expected a list of functions (keys 1 to n)"},
		{"bad option", `llm.parallel({ function() end }, { max = 0 })`, "llm.parallel.options.max"},
		{"unknown option", `llm.parallel({ function() end }, { wait = "1s" })`, "llm.parallel.options.wait: unknown key"},
		{"bad timeout", `llm.parallel({ function() end }, { timeout = 5 })`, "llm.parallel.options.timeout"},
		{"nested", `llm.parallel{ function() llm.parallel{ function() end } end }`,
			"s.lua:5: llm.parallel: called inside branch 1 of another llm.parallel"},
		{"through pcall", `llm.parallel{ function() local ok, e = pcall(llm.chat, { messages = { { role = "user", content = "x" } } }); error(e, 0) end }`,
			"llm.chat: called through pcall inside an llm.parallel branch"},
		{"sleep through pcall", `llm.parallel{ function() local ok, e = pcall(llm.sleep, "1s"); if not ok then error(e, 0) end end }`,
			"llm.sleep: called through pcall inside an llm.parallel branch"},
		{"one conversation, two branches", `local c = llm.conversation{}
c:user("hi")
llm.parallel{ function() c:send() end, function() c:send() end }`,
			"conv:send: the conversation is already waiting for an answer"},
		{"task without a name", `llm.task(function() end)`, "s.lua:5: llm.task: the first argument is the task's name"},
		{"task without a function", `llm.task("t")`, "s.lua:5: llm.task: the second argument is the task's function; got nil"},
		{"tool delay", `llm.tool_delay("soon")`, `"soon" is not a duration`},
		{"tool delay dist of sizes", `llm.tool_delay(llm.dist.choice{ {1, 2} })`, "a duration or an llm.dist of seconds expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := parallelVU(t, "function iteration()\n"+tt.body+"\nend\n", &slowClient{delay: time.Millisecond})
			err := run(t, v, "iteration")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// llm.parallel outside an iteration, and llm.task at init, are errors
// naming the line.
func TestParallelAtInit(t *testing.T) {
	for _, body := range []string{`llm.parallel{ function() end }`, `llm.task("t", function() end)`} {
		_, err := Compile(writeScript(t, "s.lua", parallelHeader+body+"\nfunction iteration() end\n"), Options{})
		if err == nil || !strings.Contains(err.Error(), "s.lua:4:") || !strings.Contains(err.Error(), "inside an iteration") {
			t.Errorf("%s at init: err = %v, want it refused at line 4", body, err)
		}
	}
}

// An iteration that fails inside a task records the task failed with
// the error's line; a tool delay drawn from a distribution counts as tool
// time; a task cut short by the iteration's end is not recorded.
func TestTaskEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, sink := parallelVU(t, `
function failing()
  llm.task("outer", function()
    llm.task("inner", function()
      llm.tool_delay(llm.dist.uniform(2, 2))
      error("tool broke")
    end)
  end)
end
function cut()
  llm.task("cut", function() llm.sleep("1h") end)
end
function iteration() end
`, &slowClient{})
		err := run(t, v, "failing")
		if err == nil || !strings.Contains(err.Error(), "s.lua:9: tool broke") {
			t.Fatalf("err = %v", err)
		}
		tasks := sink.allTasks()
		if len(tasks) != 2 || tasks[0].Name != "inner" || tasks[1].Name != "outer" {
			t.Fatalf("tasks %+v, want inner then outer", tasks)
		}
		for _, tk := range tasks {
			if !strings.Contains(tk.Err, "s.lua:9: tool broke") || tk.Tool != 2*time.Second || tk.Duration != 2*time.Second {
				t.Errorf("task %s: err %q, tool %v, took %v; want the error's line, 2s of tool time, 2s", tk.Name, tk.Err, tk.Tool, tk.Duration)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := v.RunIteration(ctx, engine.Iteration{Scenario: "s", Stage: "st", Exec: "cut"}); err == nil {
			t.Fatal("the cut iteration returned no error")
		}
		if got := len(sink.allTasks()); got != 2 {
			t.Errorf("%d tasks, want the cut one left out", got)
		}
	})
}

// BenchmarkFanOut measures what a branch of llm.parallel costs beyond the
// request it sends: 16 requests an iteration, one after another or as 16
// branches, with a client that answers at once (so only llmload's own
// work is timed). The figure is per request.
func BenchmarkFanOut(b *testing.B) {
	for _, bc := range []struct{ name, exec string }{{"sequential", "sequential"}, {"branches", "branches"}} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "s.lua")
			if err := os.WriteFile(path, []byte(parallelHeader+`
local msgs = { { role = "user", content = "hello" } }
local function ask() return llm.chat{ messages = msgs, max_tokens = 8 } end
local fns = {}
for i = 1, 16 do fns[i] = ask end
function sequential() for i = 1, 16 do ask() end end
function branches() llm.parallel(fns) end
function iteration() end
`), 0o600); err != nil {
				b.Fatal(err)
			}
			s, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }})
			if err != nil {
				b.Fatal(err)
			}
			client := &fakeClient{result: engine.Result{Status: 200, TTFT: time.Millisecond}}
			v, err := s.NewRunner(api.RunnerConfig{Client: client, Sink: &fakeSink{}}).NewVU(context.Background(), 1)
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			it := engine.Iteration{Scenario: "s", Stage: "st", Exec: bc.exec, VUID: 1}
			b.ReportAllocs()
			for b.Loop() {
				client.mu.Lock()
				client.reqs = client.reqs[:0]
				client.mu.Unlock()
				if err := v.RunIteration(context.Background(), it); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/request")
		})
	}
}

// The observer of outgoing requests sees a VU's branches one at a time,
// on the VU's goroutine, as the dry run's and the lints' recorders
// assume (a plain slice here: the race detector would catch a second
// goroutine).
func TestParallelObservedInTurn(t *testing.T) {
	var seen []string
	sink := &fakeSink{}
	s := mustCompile(t, writeScript(t, "s.lua", parallelHeader+`
function iteration()
  local fns = {}
  for i = 1, 8 do fns[i] = function() llm.chat{ messages = { { role = "user", content = "b" .. i } } } end end
  llm.parallel(fns)
end
`), Options{})
	v := newVU(t, s, api.RunnerConfig{Client: &slowClient{delay: time.Millisecond}, Sink: sink, Model: "m",
		Observe: func(_ *engine.Iteration, req *engine.ChatRequest, _ string) {
			seen = append(seen, req.Messages[0].Content)
		}}, 1)
	mustRun(t, v, "iteration")
	if len(seen) != 8 {
		t.Errorf("observed %v, want the 8 branches' requests", seen)
	}
}

// A branch that recurses without end fails with the line of the call that
// went too deep, as an iteration does, and the VU goes on.
func TestParallelBranchOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, _ := parallelVU(t, `
local function f(n) return 1 + f(n + 1) end
function iteration()
  llm.parallel {
    function() llm.chat{ messages = { { role = "user", content = "x" } } } end,
    function() f(1) end,
  }
end
`, &slowClient{delay: 100 * time.Millisecond})
		for i := range 2 {
			err := run(t, v, "iteration")
			if err == nil || !strings.Contains(err.Error(), "branch 2 failed: ") || !strings.Contains(err.Error(), "s.lua:5: stack overflow (recursion deeper than 200 calls)") {
				t.Errorf("run %d: err = %v, want branch 2 named with the recursing line", i+1, err)
			}
		}
	})
}
