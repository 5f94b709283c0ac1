package luabind

import (
	"context"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
)

// runner makes VUs of one script; safe for concurrent use because each VU
// gets its own LState and only reads the shared, compiled chunk and the
// setup data.
type runner struct {
	prog *Program
	cfg  RunnerConfig
	life lifecycle
}

// NewRunner returns a Runner whose VUs run this script. It also implements
// engine.Lifecycle, for the script's setup() and teardown().
func (s *Script) NewRunner(cfg RunnerConfig) engine.Runner {
	return &runner{prog: s.Program, cfg: cfg}
}

// NewVU creates VU id's sandbox and runs the script's top level in it; ctx
// bounds that init. An init error names the script's file and line.
func (r *runner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	m := newModule(r.prog, r.vuConfig(), id, r.prog.seed)
	L := m.newState()
	if err := r.prog.runInit(ctx, L, m); err != nil {
		L.Close()
		return nil, err
	}
	return &vu{prog: r.prog, L: L, m: m, life: &r.life}, nil
}

// vuConfig is one VU's copy of the config, its client wrapped in the VU's
// own back-off when one is asked for.
func (r *runner) vuConfig() *RunnerConfig {
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
