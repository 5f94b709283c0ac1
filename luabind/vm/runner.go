// Package vm runs a compiled Program: a Runner makes each VU its own
// sandboxed LState that runs the script's top level and then its exec
// function once per iteration, and runs setup() and teardown() in an LState
// of their own, whose result every iteration reads as read-only data.
package vm

import (
	"context"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// Runner makes VUs of one script; safe for concurrent use because each VU
// gets its own LState and only reads the shared, compiled chunk and the
// setup data.
type Runner struct {
	prog *api.Program
	cfg  api.RunnerConfig
	life lifecycle
	// dropOptions: no function reads options, so a VU need not keep it.
	dropOptions bool
}

// NewRunner returns the runner of p's VUs.
func NewRunner(p *api.Program, cfg api.RunnerConfig) *Runner {
	return &Runner{prog: p, cfg: cfg, dropOptions: !p.ReadsOptions()}
}

// NewVU creates VU id's sandbox and runs the script's top level in it; ctx
// bounds that init. An init error names the script's file and line.
func (r *Runner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	m := api.NewModule(r.prog, r.vuConfig(), id, r.prog.Seed)
	L := m.NewState()
	if err := r.prog.RunInit(ctx, L, m); err != nil {
		L.Close()
		return nil, err
	}
	if r.dropOptions {
		L.G.Global.RawSetString("options", lua.LNil)
	}
	return &VU{prog: r.prog, L: L, Module: m, life: &r.life}, nil
}

// vuConfig is one VU's copy of the config, its client wrapped in the VU's
// own back-off when one is asked for.
func (r *Runner) vuConfig() *api.RunnerConfig {
	cfg := r.cfg
	if cfg.Client != nil && (cfg.Backoff != nil || cfg.Reach != nil) {
		var p backoff.Policy // zero: observe only, never wait
		if cfg.Backoff != nil {
			p = *cfg.Backoff
		}
		cfg.Client = backoff.New(cfg.Client, p, cfg.Reach)
	}
	return &cfg
}
