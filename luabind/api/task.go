package api

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/stopping"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// taskState is an open llm.task: what its calls, and those of the tasks
// and branches inside it, have added up to so far.
type taskState struct {
	name    string
	parent  *taskState
	start   time.Time
	calls   int
	failed  int
	in, out int
	tool    time.Duration
	closed  bool
}

// taskSource is llm.task, in Lua: the function runs as a plain Lua call
// between begin and finish, so that a branch of llm.parallel can wait
// inside it (a coroutine cannot yield across a Go call, which a Go
// llm.task calling fn would be). Arguments are evaluated left to right,
// so begin runs before fn. A task whose fn raises never reaches finish:
// the branch or the iteration that ends with the error closes it.
const taskSource = `local begin, finish = ...
return function(name, fn, ...)
  return finish(begin(name, fn), fn(...))
end`

var (
	taskOnce  sync.Once
	taskProto *lua.FunctionProto
)

// taskWrapper compiles taskSource once per process.
func taskWrapper() *lua.FunctionProto {
	taskOnce.Do(func() {
		chunk, err := parse.Parse(strings.NewReader(taskSource), "llm.task")
		if err != nil {
			panic("llm.task: " + err.Error())
		}
		taskProto, err = lua.Compile(chunk, "llm.task")
		if err != nil {
			panic("llm.task: " + err.Error())
		}
	})
	return taskProto
}

// taskFunction builds this VU's llm.task: taskSource's function closed
// over the module's begin and finish.
func (m *Module) taskFunction(L *lua.LState) lua.LValue {
	L.Push(L.NewFunctionFromProto(taskWrapper()))
	L.Push(L.NewFunction(m.taskBegin))
	L.Push(L.NewFunction(m.taskFinish))
	L.Call(2, 1)
	fn := L.Get(-1)
	L.Pop(1)
	return fn
}

// taskBegin opens a task named by argument 1 on L's thread, below the
// task open there (if any), and returns its handle. Its errors point at
// the script's call of llm.task (level 3: past begin and taskSource's
// function), not into taskSource.
func (m *Module) taskBegin(L *lua.LState) int {
	name, ok := L.Get(1).(lua.LString)
	if !ok || strings.TrimSpace(string(name)) == "" {
		L.Error(lua.LString("llm.task: the first argument is the task's name, a non-empty string; got "+describe(L.Get(1))), 3)
	}
	if _, ok := L.Get(2).(*lua.LFunction); !ok {
		L.Error(lua.LString("llm.task: the second argument is the task's function; got "+describe(L.Get(2))), 3)
	}
	if m.Phase != phaseIteration && m.Phase != PhaseLifecycle {
		L.Error(lua.LString("llm.task can only be called inside an iteration, setup() or teardown()"), 3)
	}
	t := &taskState{name: string(name), parent: m.tasks[L], start: time.Now()}
	m.setTask(L, t)
	ud := L.NewUserData()
	ud.Value = t
	L.Push(ud)
	return 1
}

// describe is a value's type for an error, with the string itself when
// it is an empty one.
func describe(v lua.LValue) string {
	if s, ok := v.(lua.LString); ok {
		return "the string " + `"` + string(s) + `"`
	}
	return v.Type().String()
}

// taskFinish closes the task of argument 1, which returned, and returns
// the rest of its arguments: the task function's results.
func (m *Module) taskFinish(L *lua.LState) int {
	t, ok := L.CheckUserData(1).Value.(*taskState)
	if !ok {
		L.ArgError(1, "a task handle expected")
	}
	m.closeTask(L, t, "")
	return L.GetTop() - 1
}

// setTask makes t the task open on thread L (none when t is nil).
func (m *Module) setTask(L *lua.LState, t *taskState) {
	if t == nil {
		delete(m.tasks, L)
		return
	}
	if m.tasks == nil {
		m.tasks = map[*lua.LState]*taskState{}
	}
	m.tasks[L] = t
}

// closeTask closes t, and any task still open inside it on L, recording
// each; errMsg is why t ended, "" when its function returned.
func (m *Module) closeTask(L *lua.LState, t *taskState, errMsg string) {
	for cur := m.tasks[L]; cur != nil && cur != t; cur = cur.parent {
		m.recordTask(cur, "the task ended before it returned")
	}
	m.recordTask(t, errMsg)
	m.setTask(L, t.parent)
}

// endTasks closes the tasks open on L above base (the task L was started
// in, nil for the iteration's own thread), as failed with errMsg when it
// is not "", and forgets L's tasks.
func (m *Module) endTasks(L *lua.LState, base *taskState, errMsg string) {
	if errMsg == "" {
		errMsg = "the task ended before it returned"
	}
	for t := m.tasks[L]; t != nil && t != base; t = t.parent {
		m.recordTask(t, errMsg)
	}
	delete(m.tasks, L)
}

// AbortTasks closes the tasks the iteration's error left open, as failed
// with err (nil: the iteration ended without returning from them).
func (m *Module) AbortTasks(L *lua.LState, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	m.endTasks(L, nil, msg)
	for co := range m.tasks {
		delete(m.tasks, co)
	}
}

// recordTask hands t's sample to the sink, once; only in iterations
// that are recording, like checks.
func (m *Module) recordTask(t *taskState, errMsg string) {
	if t.closed {
		return
	}
	t.closed = true
	if !m.recording() {
		return
	}
	m.cfg.Sink.Task(engine.TaskSample{
		Name: t.name, Scenario: m.it.Scenario, Stage: m.it.Stage, Warmup: m.it.Warmup,
		Tags:  mergeTags(m.prog.Tags[m.it.Scenario], map[string]string{"task": t.name}),
		Start: t.start, Duration: time.Since(t.start), Calls: t.calls, Failed: t.failed,
		InputTokens: t.in, OutputTokens: t.out, Tool: t.tool, Err: errMsg,
	})
}

// countRequest adds a request sent from thread L to every task open
// around it.
func (m *Module) countRequest(L *lua.LState, res *engine.Result) {
	for t := m.tasks[L]; t != nil; t = t.parent {
		t.calls++
		if !res.OK() {
			t.failed++
		}
		t.in += res.InputTokens
		t.out += res.OutputTokens
	}
}

// toolDelay implements llm.tool_delay(d): waits as a tool call would, d
// a duration ("1.5s" or seconds) or an llm.dist whose draws are seconds.
// The time waited counts as tool time in every task open around the call,
// not as think time. Inside llm.parallel the other branches run
// meanwhile.
func (m *Module) toolDelay(L *lua.LState) int {
	var d time.Duration
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		dv, ok := ud.Value.(*distValue)
		if !ok || dv.dist == nil {
			L.ArgError(1, "a duration or an llm.dist of seconds expected")
		}
		s := dv.dist.Draw(m.rng)
		d = time.Duration(math.Min(math.Max(s, 0)*float64(time.Second), maxThink))
	} else {
		d = checkDuration(L, 1)
	}
	if m.cfg != nil && m.cfg.Dry != nil {
		m.cfg.Dry.Think += d
		return 0
	}
	thread := L
	return m.await(L, "llm.tool_delay", func(ctx context.Context) any {
		start := time.Now()
		stopping.Sleep(ctx, d)
		return time.Since(start)
	}, func(L *lua.LState, v any) int {
		for t := m.tasks[thread]; t != nil; t = t.parent {
			t.tool += v.(time.Duration)
		}
		return 0
	})
}

// sleepFor waits d (or until the VU's context ends) as llm.sleep and the
// think times do; inside llm.parallel the other branches run meanwhile.
func (m *Module) sleepFor(L *lua.LState, name string, d time.Duration) int {
	if m.cfg != nil && m.cfg.Dry != nil {
		m.cfg.Dry.Think += max(d, 0)
		return 0
	}
	return m.await(L, name, func(ctx context.Context) any {
		stopping.Sleep(ctx, d)
		return nil
	}, func(*lua.LState, any) int { return 0 })
}
