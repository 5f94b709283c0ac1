package vm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// lifecycle runs a script's setup() and teardown() in one LState of their
// own, made on the first of the two calls and closed by Teardown.
type lifecycle struct {
	mu   sync.Mutex // Setup and Teardown may come from different goroutines
	L    *lua.LState
	m    *api.Module
	data atomic.Pointer[setupData] // read by every VU
}

// setupData is what setup() returned, as plain Go data; value is nil when
// there is no setup or it returned nil.
type setupData struct {
	value any
}

// Setup implements engine.Lifecycle: it calls the script's global setup()
// once, in a dedicated LState with the same sandbox and module, and keeps
// its return value as plain data that every iteration then receives,
// read-only, as the second argument of its exec function. llm.chat and
// llm.complete work in setup but their samples are not recorded, nor are
// checks or custom metrics: setup prepares the load, it is not part of it.
// Without a setup function it does nothing. Call it once, before any iteration; when it
// fails, its LState is closed (a later Teardown makes a new one). It ends
// early when ctx or RunnerConfig.Stop ends.
func (r *Runner) Setup(ctx context.Context) error {
	ctx, release := api.StopWith(ctx, r.cfg.Stop)
	defer release()
	lc := &r.life
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if !r.prog.HasSetup {
		return nil
	}
	if err := r.lifecycleState(ctx); err != nil {
		return err
	}
	ret, err := r.callLifecycle(ctx, "setup", 1)
	if err == nil {
		var value any
		if value, err = luaval.LuaToGo(ret); err == nil {
			lc.data.Store(&setupData{value: value})
			return nil
		}
		err = fmt.Errorf("%s: setup() returned %w", r.prog.Path, err)
	}
	// A run whose setup failed ends without teardown; nothing else would
	// close the LState.
	lc.close()
	return err
}

// Teardown implements engine.Lifecycle: it calls the script's global
// teardown(data) once, in setup's LState (a new one when Setup made none)
// with the same read-only data the iterations saw, then closes that
// LState. Without a teardown function it only releases setup's LState.
// It ends early when ctx or RunnerConfig.Stop ends: an interrupt cuts a
// teardown the executor runs after an interrupted load, as it cuts setup.
func (r *Runner) Teardown(ctx context.Context) error {
	ctx, release := api.StopWith(ctx, r.cfg.Stop)
	defer release()
	lc := &r.life
	lc.mu.Lock()
	defer lc.mu.Unlock()
	defer lc.close()
	if !r.prog.HasTeardown {
		return nil
	}
	if err := r.lifecycleState(ctx); err != nil {
		return err
	}
	var data lua.LValue = lua.LNil
	if d := lc.data.Load(); d != nil {
		data = lc.m.Views.Value(lc.L, d.value)
	}
	_, err := r.callLifecycle(ctx, "teardown", 0, data)
	return err
}

// lifecycleState makes the lifecycle LState and runs the script's top
// level in it, unless that was done already. Its module has no sink, so
// nothing it sends is recorded; VU id 0 gives it a random stream of its
// own.
func (r *Runner) lifecycleState(ctx context.Context) error {
	lc := &r.life
	if lc.L != nil {
		return nil
	}
	cfg := r.cfg
	cfg.Sink = nil
	m := api.NewModule(r.prog, &cfg, 0, r.prog.Seed)
	L := m.NewState()
	if err := r.prog.RunInit(ctx, L, m); err != nil {
		L.Close()
		return err
	}
	lc.L, lc.m = L, m
	return nil
}

// LifecycleTimeout bounds setup() and teardown().
const LifecycleTimeout = 60 * time.Second

// callLifecycle calls the global function name with args and returns its
// first result when nret is 1.
func (r *Runner) callLifecycle(ctx context.Context, name string, nret int, args ...lua.LValue) (lua.LValue, error) {
	lc := &r.life
	fn, ok := lc.L.GetGlobal(name).(*lua.LFunction)
	if !ok {
		return nil, fmt.Errorf("%s: no global function %s to run", r.prog.Path, name)
	}
	// Like k6's setupTimeout: a setup or teardown that never returns must
	// not hang a CI job.
	ctx, cancel := context.WithTimeoutCause(ctx, LifecycleTimeout,
		fmt.Errorf("%s() did not return within %v", name, LifecycleTimeout))
	defer cancel()
	lc.m.Ctx, lc.m.Phase = ctx, api.PhaseLifecycle
	defer func() { lc.m.Ctx, lc.m.Phase = context.Background(), api.PhaseIdle }()
	ctx = memlimit.Guard(ctx)
	lc.L.SetContext(ctx)
	defer lc.L.RemoveContext()
	err := lc.L.CallByParam(lua.P{Fn: fn, NRet: nret, Protect: true}, args...)
	if ctx.Err() != nil {
		return nil, r.prog.At(err, api.Interrupted(ctx, name+"()"))
	}
	if err != nil {
		return nil, r.prog.ScriptError(err)
	}
	if nret == 0 {
		return nil, nil
	}
	ret := lc.L.Get(-1)
	lc.L.Pop(1)
	return ret, nil
}

// CloseLifecycle releases the LState that setup() ran in, for a runner
// whose teardown will not run (the dry run's).
func (r *Runner) CloseLifecycle() {
	r.life.mu.Lock()
	defer r.life.mu.Unlock()
	r.life.close()
}

func (lc *lifecycle) close() {
	if lc.L != nil {
		lc.L.Close()
		lc.L, lc.m = nil, nil
	}
}

// SetupStateOpen reports whether the LState setup() ran in is still held:
// from Setup until Teardown, or CloseLifecycle.
func (r *Runner) SetupStateOpen() bool {
	r.life.mu.Lock()
	defer r.life.mu.Unlock()
	return r.life.L != nil
}
