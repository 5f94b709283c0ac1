package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	"github.com/llmload/llmload/luabind/sandbox"
	lua "github.com/yuin/gopher-lua"
)

// How llm.parallel is made safe with one LState per VU: each branch is a
// coroutine of the VU's own LState, and every piece of Lua — the
// branches, the scheduler, the API's own code — runs on the VU's
// goroutine, one at a time. Only the waiting is concurrent: a branch that
// sends a request or sleeps yields, its request goes out on a goroutine of
// its own (through the shared, concurrency-safe client, on a connection
// of its own), and the scheduler resumes the branch with the answer once
// it is in. Branches therefore share what Lua closures share (upvalues,
// tables they are handed) exactly as sequential code would, and never see
// a value change under them mid-statement.

// fanout is one running llm.parallel.
type fanout struct {
	ctx     context.Context
	timeout time.Duration // 0: none but the iteration's own
	done    chan awaited  // one slot per branch: a finished wait never blocks
}

// branch is one function of an llm.parallel, running as a coroutine.
type branch struct {
	index int // 1-based, as the script counts them
	co    *lua.LState
	fan   *fanout
	// inherited is the task the branch was started in; tasks it opens
	// itself hang below it.
	inherited *taskState
	err       string // why it failed; "" while running or when it returned
	// tail is set when the branch's function tail-called the API call
	// that waits (return llm.chat{...}): its coroutine is already done,
	// and the call's results are the branch's.
	tail bool
}

// awaited is a branch's finished wait: the value op returned and how to
// turn it into the Lua results the branch resumes with.
type awaited struct {
	b    *branch
	v    any
	done func(L *lua.LState, v any) int
}

// await runs op and then done, the two halves of an API call that waits
// (a request, a sleep). Outside llm.parallel both run here, in turn. In a
// branch, op runs on a goroutine of its own while the branch yields, so
// the other branches go on; done runs on the VU's goroutine when the
// scheduler resumes the branch, and what it pushes are the call's
// results. op must not touch Lua; done must not raise. name is the
// calling function, for errors.
func (m *Module) await(L *lua.LState, name string, op func(ctx context.Context) any, done func(L *lua.LState, v any) int) int {
	b := m.branches[L]
	if b == nil {
		return done(L, op(m.Ctx))
	}
	if err := b.fan.ctx.Err(); err != nil {
		L.RaiseError("%s: %s", name, b.fan.ended(err))
	}
	if via := goCaller(L); via != "" {
		L.RaiseError("%s: called through %s inside an llm.parallel branch, where it cannot wait beside the other branches "+
			"(a branch can wait only from Lua code: call it outside %s; a failed request is a result, not an error, so it needs no pcall)",
			name, via, via)
	}
	fan := b.fan
	go func() { fan.done <- awaited{b: b, v: op(fan.ctx), done: done} }()
	return L.Yield(m.awaitMark)
}

// goCaller names the first Go function between the caller of the running
// Go function and the bottom of L's stack ("" when there is none): a
// coroutine cannot yield across one, and gopher-lua would not say so —
// pcall would return at once with nothing.
func goCaller(L *lua.LState) string {
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return ""
		}
		if _, err := L.GetInfo("Sn", dbg, lua.LNil); err != nil {
			return ""
		}
		if dbg.What == "G" {
			if dbg.Name != "" && dbg.Name != "?" {
				return dbg.Name
			}
			return "a Go function (pcall, xpcall, a check function, a sort comparator)"
		}
	}
}

// ended says why a fan-out's time is over.
func (f *fanout) ended(err error) string {
	if errors.Is(err, context.DeadlineExceeded) && f.timeout > 0 {
		return "the branches' time is up (timeout = " + f.timeout.String() + ")"
	}
	return "the iteration ended: " + err.Error()
}

var parallelKeys = []string{"max", "timeout"}

// parallel implements llm.parallel({ fn1, fn2, ... } [, { max = 16,
// timeout = "60s" }]) -> { r1, r2, ... }: runs the functions as
// branches of one iteration at once and returns when all have, each
// branch's first result at its index. A branch waits (and the others
// run) in every request and sleep of the API; its requests go out
// concurrently, each on its own connection. max bounds the branches
// (plan.DefaultMaxBranches); after timeout the branches still running are
// ended, their requests canceled. A branch that raises an error lets
// the others finish; then llm.parallel raises one error naming every
// failed branch. A branch cannot start an llm.parallel of its own.
func (m *Module) parallel(L *lua.LState) int {
	const name = "llm.parallel"
	if m.Phase != phaseIteration && m.Phase != PhaseLifecycle {
		L.RaiseError("%s can only be called inside an iteration, setup() or teardown()", name)
	}
	if b := m.branches[L]; b != nil {
		L.RaiseError("%s: called inside branch %d of another llm.parallel: give the outer llm.parallel all the branches instead", name, b.index)
	}
	fns := m.branchFunctions(L, name)
	limit, timeout := m.parallelOptions(L, name)
	if len(fns) > limit {
		L.RaiseError("%s: %d branches, more than the bound of %d (pass { max = %d } as the second argument to allow them)",
			name, len(fns), limit, len(fns))
	}
	results := L.CreateTable(len(fns), 0)
	if len(fns) == 0 {
		L.Push(results)
		return 1
	}
	ctx, cancel := context.WithCancel(m.Ctx)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(m.Ctx, timeout)
	}
	defer cancel()
	fan := &fanout{ctx: ctx, timeout: timeout, done: make(chan awaited, len(fns))}
	if m.branches == nil {
		m.branches = map[*lua.LState]*branch{}
	}
	parent := m.tasks[L]
	branches := make([]*branch, len(fns))
	defer func() {
		for _, b := range branches {
			if b != nil {
				delete(m.branches, b.co)
				delete(m.tasks, b.co)
				m.release(b.co)
			}
		}
	}()
	running := 0
	for i, fn := range fns {
		co := m.thread(L)
		co.SetContext(memlimit.Guard(ctx)) // an endless loop in a branch ends with the fan-out
		b := &branch{index: i + 1, co: co, fan: fan, inherited: parent}
		branches[i] = b
		m.branches[co] = b
		m.setTask(co, parent)
		st, err, vals := L.Resume(co, fn)
		if !m.settle(b, st, err, vals, results) {
			running++
		}
	}
	for running > 0 {
		a := <-fan.done
		vals, err := m.resumeValues(L, a)
		if err != nil {
			m.fail(a.b, err.Error())
			running--
			continue
		}
		if a.b.tail {
			m.settle(a.b, lua.ResumeOK, nil, vals, results)
			running--
			continue
		}
		st, rerr, rv := L.Resume(a.b.co, nil, vals...)
		if m.settle(a.b, st, rerr, rv, results) {
			running--
		}
	}
	if msg := failures(branches); msg != "" {
		L.RaiseError("%s: %s", name, msg)
	}
	L.Push(results)
	return 1
}

// branchFunctions reads llm.parallel's first argument: a list of
// functions.
func (m *Module) branchFunctions(L *lua.LState, name string) []*lua.LFunction {
	tbl, ok := L.Get(1).(*lua.LTable)
	if !ok {
		L.RaiseError("%s: expected a list of functions, got %s", name, L.Get(1).Type())
	}
	n := tbl.Len()
	count := 0
	tbl.ForEach(func(lua.LValue, lua.LValue) { count++ })
	if count != n {
		L.RaiseError("%s: expected a list of functions (keys 1 to n), got a table with other keys", name)
	}
	fns := make([]*lua.LFunction, n)
	for i := range n {
		fn, ok := tbl.RawGetInt(i + 1).(*lua.LFunction)
		if !ok {
			L.RaiseError("%s: branch %d is a %s, want a function", name, i+1, tbl.RawGetInt(i+1).Type())
		}
		fns[i] = fn
	}
	return fns
}

// parallelOptions reads llm.parallel's options: the branch bound and the
// timeout (0: none).
func (m *Module) parallelOptions(L *lua.LState, name string) (int, time.Duration) {
	limit := plan.DefaultMaxBranches
	if L.GetTop() < 2 || L.Get(2) == lua.LNil {
		return limit, 0
	}
	d := &ArgDecoder{m: m}
	f := d.Record(name+".options", L.Get(2), parallelKeys)
	if v := f["max"]; v != nil {
		limit = d.Count(luaval.Child(name+".options", "max"), v, 1)
	}
	var timeout time.Duration
	if v := f["timeout"]; v != nil {
		timeout = d.PositiveDuration(luaval.Child(name+".options", "timeout"), v)
	}
	if len(d.Errs) > 0 {
		L.RaiseError("%s", strings.Join(d.Errs, "; "))
	}
	return limit, timeout
}

// resumeValues runs a finished wait's done on the scheduler's thread and
// takes the values it pushed, for the branch to resume with. done is run
// protected: were it to raise, the branch fails instead of the fan-out.
func (m *Module) resumeValues(L *lua.LState, a awaited) ([]lua.LValue, error) {
	top := L.GetTop()
	L.Push(L.NewFunction(func(L *lua.LState) int { return a.done(L, a.v) }))
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		L.SetTop(top)
		return nil, err
	}
	vals := make([]lua.LValue, 0, L.GetTop()-top)
	for i := top + 1; i <= L.GetTop(); i++ {
		vals = append(vals, L.Get(i))
	}
	L.SetTop(top)
	return vals, nil
}

// settle books what a resume of b came back with and reports whether b
// has ended: returned (its first result is kept), raised, or yielded
// something other than an API wait.
func (m *Module) settle(b *branch, st lua.ResumeState, err error, vals []lua.LValue, results *lua.LTable) bool {
	switch st {
	case lua.ResumeYield:
		if len(vals) == 1 && vals[0] == m.awaitMark {
			return false
		}
		m.fail(b, "yielded outside an llm call (coroutine.yield in a branch): a branch waits only in the API's requests and sleeps")
	case lua.ResumeError:
		if ae, ok := err.(*lua.ApiError); ok && ae.Object == lua.LString(sandbox.Overflow) {
			// A coroutine's panic keeps no trace, but its frames are
			// still there: the deepest is the call that went too deep.
			ae.Object = lua.LString(b.co.Where(1) + " stack overflow")
		}
		m.fail(b, m.prog.ScriptError(err).Error())
		if ctxErr := b.fan.ctx.Err(); ctxErr != nil {
			b.err = b.fan.ended(ctxErr) + " (" + b.err + ")"
		}
	default:
		if !b.tail && len(vals) == 1 && vals[0] == m.awaitMark {
			// The coroutine ended in a tail call of a waiting API call:
			// gopher-lua reports its yield as the return. The wait goes
			// on; its results will be the branch's.
			b.tail = true
			return false
		}
		if len(vals) > 0 {
			results.RawSetInt(b.index, vals[0])
		}
		m.endTasks(b.co, b.inherited, "")
	}
	return true
}

// fail ends b with msg, closing the tasks it had opened as failed.
func (m *Module) fail(b *branch, msg string) {
	b.err = msg
	m.endTasks(b.co, b.inherited, "branch "+strconv.Itoa(b.index)+": "+msg)
}

// failures names the branches that failed, one error for all; "" when
// none did.
func failures(branches []*branch) string {
	var failed []string
	for _, b := range branches {
		if b.err != "" {
			failed = append(failed, fmt.Sprintf("branch %d failed: %s", b.index, b.err))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	if len(failed) > 1 {
		return fmt.Sprintf("%d of %d branches failed: %s", len(failed), len(branches), strings.Join(failed, "; "))
	}
	return failed[0]
}

// maxIdleThreads bounds the coroutines a VU keeps for its next fan-out.
const maxIdleThreads = 16

// thread is a coroutine for a branch: one the VU kept from an earlier
// fan-out, else a new one. Making one costs more than a request's own
// work in Lua (its call stack is allocated whole, see sandbox), so a VU
// keeps those that ended cleanly.
func (m *Module) thread(L *lua.LState) *lua.LState {
	if n := len(m.idleThreads); n > 0 {
		co := m.idleThreads[n-1]
		m.idleThreads = m.idleThreads[:n-1]
		co.Dead = false // ended cleanly: nothing left on its stack
		return co
	}
	co, _ := L.NewThread() // its context is set per fan-out, and canceled with it
	return co
}

// release keeps co for the next fan-out if its function ran to its end:
// a coroutine left suspended or stopped by an error still holds frames.
func (m *Module) release(co *lua.LState) {
	if _, busy := co.GetStack(0); busy || len(m.idleThreads) == maxIdleThreads {
		return
	}
	co.SetTop(0)
	m.idleThreads = append(m.idleThreads, co)
}
