package api

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/luabind/sandbox"
	lua "github.com/yuin/gopher-lua"
)

// StopWith is ctx, also ended with stop's cause when stop ends; nil stop
// leaves ctx as it is.
func StopWith(ctx, stop context.Context) (context.Context, func()) {
	if stop == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(stop, func() { cancel(context.Cause(stop)) })
	return ctx, func() { unhook(); cancel(nil) }
}

// RunInit runs the compiled chunk in L: the script's top level. Cut by
// ctx (or Options.Stop), its error names the line it stopped at.
func (s *Program) RunInit(ctx context.Context, L *lua.LState, m *Module) error {
	if s.Stop != nil {
		var release func()
		ctx, release = StopWith(ctx, s.Stop)
		defer release()
	}
	// The module's calls get ctx itself: a guarded one is for L alone.
	m.Ctx, m.Phase = ctx, phaseInit
	defer func() { m.Ctx, m.Phase = context.Background(), PhaseIdle }()
	if lctx := memlimit.Guard(ctx); lctx != ctx || ctx.Done() != nil {
		L.SetContext(lctx)
		defer L.RemoveContext()
		ctx = lctx
	}
	L.Push(L.NewFunctionFromProto(s.Proto))
	err := L.PCall(0, 0, nil)
	if ctx.Err() != nil {
		return s.At(err, Interrupted(ctx, "init"))
	}
	if err != nil {
		return s.ScriptError(err)
	}
	return nil
}

// ScriptError keeps the "file:line: message" of a Lua error and drops
// gopher-lua's stack traceback, which points into Go more than into the
// script.
func (s *Program) ScriptError(err error) error {
	msg := err.Error()
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Object != nil {
		msg = apiErr.Object.String()
		if apiErr.Type == lua.ApiErrorPanic && msg == sandbox.Overflow {
			// The trace's first frame of the script is the call that went
			// too deep; explainOverflow says the rest.
			msg = "stack overflow"
			if m := s.LinePos.FindString(apiErr.StackTrace); m != "" {
				msg = m + ": " + msg
			}
		}
		if _, isStr := apiErr.Object.(lua.LString); !isStr {
			// error({}) and friends: a table's address would make every
			// occurrence a distinct error in the summary.
			msg = fmt.Sprintf("error raised with a %s value (raise a string for a message)", apiErr.Object.Type())
			if m := s.LinePos.FindString(apiErr.StackTrace); m != "" {
				msg = m + ": " + msg
			}
		}
	}
	msg = oneLine(msg)
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen] + "… (cut)"
	}
	if !strings.HasPrefix(msg, s.Path+":") {
		msg = s.Path + ": " + msg
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

// At prefixes err with the script line luaErr was raised at, if any, so an
// iteration canceled inside an endless loop points at the loop.
func (s *Program) At(luaErr, err error) error {
	if luaErr == nil {
		return err
	}
	if m := linePrefix.FindStringSubmatch(s.ScriptError(luaErr).Error()); m != nil {
		return fmt.Errorf("%s: %w", m[1], err)
	}
	return err
}

// Interrupted is the error for work cut short by ctx; it wraps ctx.Err()
// and, when different, the cause, so errors.Is finds either.
func Interrupted(ctx context.Context, what string) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("%s interrupted: %w (%w)", what, err, cause)
	}
	return fmt.Errorf("%s interrupted: %w", what, err)
}

// Program is what the VUs run of a compiled script: its chunk and what
// its llm module reads (the --set values, the environment, each
// scenario's tags, env and trace, the custom metrics and the dirty-data
// mix). Immutable once Compile returns; safe for concurrent use.
type Program struct {
	Path    string
	LinePos *regexp.Regexp // "path:line" in a Lua stack trace
	Proto   *lua.FunctionProto
	Params  map[string]string
	Env     func(string) (string, bool)
	Seed    int64                        // the run seed, as the plan has it
	Tags    map[string]map[string]string // scenario name → its tags
	Envs    map[string]map[string]string // scenario name → its env
	// Targets are the names of options.targets (nil with one target), and
	// ScenarioTargets the target each scenario's requests default to.
	Targets         []string
	ScenarioTargets map[string]string
	ScenarioTraces  map[string]*ScenarioTrace // trace scenario name → its trace
	Metrics         map[string]string         // custom metric name → kind; nil while Compile runs init
	DirtyMix        DirtyConfig
	// hasSetup and hasTeardown tell whether the script defines the
	// lifecycle functions, so a Runner skips the extra LState otherwise.
	HasSetup, HasTeardown bool
	// Stop is Options.Stop; nil when none.
	Stop context.Context
}

// ReadsOptions tells whether a function of the script (its top level
// aside) names "options" — as a global, a field or any string. Only the
// plan reads options otherwise, so a VU drops the table once its top
// level has run: in a large plan it is a quarter of an idle VU.
func (s *Program) ReadsOptions() bool {
	var names func(p *lua.FunctionProto) bool
	names = func(p *lua.FunctionProto) bool {
		for _, c := range p.Constants {
			if c == lua.LString("options") {
				return true
			}
		}
		return slices.ContainsFunc(p.FunctionPrototypes, names)
	}
	return slices.ContainsFunc(s.Proto.FunctionPrototypes, names)
}

// explainOverflow says what gopher-lua's "file:line: stack overflow"
// means for the script.
func explainOverflow(err error) error {
	if err != nil && strings.HasSuffix(err.Error(), ": stack overflow") {
		return fmt.Errorf("%w (recursion deeper than %d calls)", err, sandbox.MaxCallDepth)
	}
	return err
}
