package luabind

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/llmload/llmload/luabind/sandbox"
	lua "github.com/yuin/gopher-lua"
)

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

// Program is what the VUs run of a compiled script: its chunk and what
// its llm module reads (the --set values, the environment, each
// scenario's tags, env and trace, the custom metrics and the dirty-data
// mix). Immutable once Compile returns; safe for concurrent use.
type Program struct {
	path    string
	linePos *regexp.Regexp // "path:line" in a Lua stack trace
	proto   *lua.FunctionProto
	params  map[string]string
	env     func(string) (string, bool)
	seed    int64                        // the run seed, as the plan has it
	tags    map[string]map[string]string // scenario name → its tags
	envs    map[string]map[string]string // scenario name → its env
	traces  map[string]*scenarioTrace    // trace scenario name → its trace
	metrics map[string]string            // custom metric name → kind; nil while Compile runs init
	dirty   dirtyConfig
	// hasSetup and hasTeardown tell whether the script defines the
	// lifecycle functions, so a Runner skips the extra LState otherwise.
	hasSetup, hasTeardown bool
	// stop is Options.Stop; nil when none.
	stop context.Context
}

// explainOverflow says what gopher-lua's "file:line: stack overflow"
// means for the script.
func explainOverflow(err error) error {
	if err != nil && strings.HasSuffix(err.Error(), ": stack overflow") {
		return fmt.Errorf("%w (recursion deeper than %d calls)", err, sandbox.MaxCallDepth)
	}
	return err
}
