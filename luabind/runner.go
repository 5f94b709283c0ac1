package luabind

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	lua "github.com/yuin/gopher-lua"
)

// RunnerConfig is what VUs need beyond the script.
type RunnerConfig struct {
	// Client sends llm.chat and llm.complete requests.
	Client engine.Client
	// Sink receives a sample per request, a "checks" metric sample per
	// llm.check entry and the custom metrics' values; nil drops them.
	Sink engine.Sink
	// Model is used when a request table names none.
	Model string
	// Backoff, when set, makes each VU wait after a request that got no
	// response at all before its next one (see engine/backoff), so VUs do
	// not loop hot against a target that stopped answering. Setup and
	// teardown do not back off: they send once.
	Backoff *backoff.Policy
	// Reach, when set, is told every VU request's outcome, e.g. a
	// backoff.Tracker that records the run's outages.
	Reach backoff.Observer
	// Stop, when set, also ends setup() and teardown() as it ends (an
	// interrupt, the memory bound), even a teardown the executor started
	// with a fresh context after the load ended.
	Stop context.Context
	// Observe, when set, is called with every request just before it is
	// sent: the iteration sending it (nil in setup() and teardown()), the
	// request as it goes out, and its dirty-data kind ("" for a clean
	// one). It is called from every VU's goroutine at once, so it must be
	// safe for concurrent use, and quick: it runs inside the iteration,
	// before t0. lint.Observer's Observe is one.
	Observe func(it *engine.Iteration, req *engine.ChatRequest, dirty string)

	// dry, set by DryRun, makes every sleep return at once, noting how
	// long it asked for.
	dry *dryState
}

// runner makes VUs of one script; safe for concurrent use because each VU
// gets its own LState and only reads the shared, compiled chunk and the
// setup data.
type runner struct {
	prog   *Program
	cfg    RunnerConfig
	life   lifecycle
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

// stopWith is ctx, also ended with stop's cause when stop ends; nil stop
// leaves ctx as it is.
func stopWith(ctx, stop context.Context) (context.Context, func()) {
	if stop == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(stop, func() { cancel(context.Cause(stop)) })
	return ctx, func() { unhook(); cancel(nil) }
}

// runInit runs the compiled chunk in L: the script's top level. Cut by
// ctx (or Options.Stop), its error names the line it stopped at.
func (s *Program) runInit(ctx context.Context, L *lua.LState, m *module) error {
	if s.stop != nil {
		var release func()
		ctx, release = stopWith(ctx, s.stop)
		defer release()
	}
	if ctx.Done() != nil {
		L.SetContext(ctx)
		defer L.RemoveContext()
	}
	m.ctx, m.phase = ctx, phaseInit
	defer func() { m.ctx, m.phase = context.Background(), phaseIdle }()
	L.Push(L.NewFunctionFromProto(s.proto))
	err := L.PCall(0, 0, nil)
	if ctx.Err() != nil {
		return s.at(err, interrupted(ctx, "init"))
	}
	if err != nil {
		return s.scriptError(err)
	}
	return nil
}

// scriptError keeps the "file:line: message" of a Lua error and drops
// gopher-lua's stack traceback, which points into Go more than into the
// script.
func (s *Program) scriptError(err error) error {
	msg := err.Error()
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Object != nil {
		msg = apiErr.Object.String()
		if _, isStr := apiErr.Object.(lua.LString); !isStr {
			// error({}) and friends: a table's address would make every
			// occurrence a distinct error in the summary.
			msg = fmt.Sprintf("error raised with a %s value (raise a string for a message)", apiErr.Object.Type())
			if m := s.linePos.FindString(apiErr.StackTrace); m != "" {
				msg = m + ": " + msg
			}
		}
	}
	msg = oneLine(msg)
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen] + "… (cut)"
	}
	if !strings.HasPrefix(msg, s.path+":") {
		msg = s.path + ": " + msg
	}
	return explainOverflow(errors.New(msg))
}

// maxErrorLen bounds a script error's message in summaries and files.
const maxErrorLen = 500

// oneLine folds a multi-line message (gopher-lua's require errors list
// one searcher per line) into one line, as error summaries need.
func oneLine(msg string) string {
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		if line = strings.TrimRight(strings.TrimSpace(line), ","); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

// linePrefix matches the "file:line:" that starts a Lua error message.
var linePrefix = regexp.MustCompile(`^(.+?:\d+):`)

// at prefixes err with the script line luaErr was raised at, if any, so an
// iteration canceled inside an endless loop points at the loop.
func (s *Program) at(luaErr, err error) error {
	if luaErr == nil {
		return err
	}
	if m := linePrefix.FindStringSubmatch(s.scriptError(luaErr).Error()); m != nil {
		return fmt.Errorf("%s: %w", m[1], err)
	}
	return err
}

// interrupted is the error for work cut short by ctx; it wraps ctx.Err()
// and, when different, the cause, so errors.Is finds either.
func interrupted(ctx context.Context, what string) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("%s interrupted: %w (%w)", what, err, cause)
	}
	return fmt.Errorf("%s interrupted: %w", what, err)
}
