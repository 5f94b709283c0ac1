package vm

import (
	"context"
	"fmt"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// VU is one virtual user: its own LState, used by one goroutine at a time.
type VU struct {
	prog   *api.Program
	L      *lua.LState
	Module *api.Module
	life   *lifecycle
	closed bool
	// dataFrom is the setup result data was built from; data is rebuilt
	// only when setup produced a new one.
	dataFrom *setupData
	data     lua.LValue
}

// RunIteration calls the global function it.Exec with a vu table and
// setup's data (nil without setup), read-only. A Lua
// error comes back as "file:line: message"; once ctx is done it returns an
// error wrapping ctx.Err() instead, even from inside an endless loop.
func (v *VU) RunIteration(ctx context.Context, it engine.Iteration) error {
	if v.closed {
		return fmt.Errorf("%s: VU %d is closed", v.prog.Path, v.Module.VUID)
	}
	if ctx.Err() != nil {
		return api.Interrupted(ctx, "iteration")
	}
	fn, ok := v.L.GetGlobal(it.Exec).(*lua.LFunction)
	if !ok {
		return fmt.Errorf("%s: no global function %q to run", v.prog.Path, it.Exec)
	}
	v.Module.Begin(ctx, &it)
	defer v.Module.End()
	ctx = memlimit.Guard(ctx)
	v.L.SetContext(ctx)
	defer v.L.RemoveContext()
	err := v.L.CallByParam(lua.P{Fn: fn, NRet: 0, Protect: true}, v.iterationTable(&it), v.setupData())
	if ctx.Err() != nil {
		err = v.prog.At(err, api.Interrupted(ctx, "iteration"))
	} else if err != nil {
		err = v.prog.ScriptError(err)
	}
	// Tasks the error left open end with it (a task cut by the end of the
	// iteration is not recorded, as a check of it would not be).
	v.Module.AbortTasks(v.L, err)
	return err
}

// iterationTable is the vu argument of the exec function. It is new for
// every iteration so a script may keep it without seeing it change.
func (v *VU) iterationTable(it *engine.Iteration) *lua.LTable {
	t := v.L.CreateTable(0, 5)
	t.RawSetString("id", lua.LNumber(it.VUID))
	t.RawSetString("iteration", lua.LNumber(it.Iteration))
	t.RawSetString("request_id", lua.LNumber(it.RequestID))
	t.RawSetString("scenario", lua.LString(it.Scenario))
	t.RawSetString("stage", lua.LString(it.Stage))
	if it.Trace != nil {
		if st := v.prog.ScenarioTraces[it.Scenario]; st != nil && st.Prompter != nil {
			t.RawSetString("record", v.recordTable(it.Trace, st))
		}
	}
	return t
}

// setupData is the VU's read-only view of setup's data, built once.
func (v *VU) setupData() lua.LValue {
	d := v.life.data.Load()
	if d == nil {
		return lua.LNil
	}
	if d != v.dataFrom {
		v.dataFrom, v.data = d, v.Module.Views.Value(v.L, d.value)
	}
	return v.data
}

// Close releases the LState; later calls do nothing.
func (v *VU) Close() error {
	if !v.closed {
		v.closed = true
		v.L.Close()
	}
	return nil
}
