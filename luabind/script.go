// Package luabind compiles llmload scenarios written in Lua. Compile
// reads, parses and compiles a scenario once, runs its top level in a
// throwaway sandbox, and validates its options table (scenarios of every
// executor, thresholds, the target, cost, export) and its custom metrics
// into a plan.Plan; it also checks the source (llm.param keys, duplicate
// names, the APIs used) and dry-runs the iterations for the lints. The
// Program it compiles runs in luabind/vm, whose VUs expose the llm module of
// luabind/api, each in its own luabind/sandbox LState.
//
// The plan lists scenarios and thresholds sorted by name, because Lua
// tables have no order; within a scenario, stages keep the order the
// script gives.
package luabind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/tokenize"
	"github.com/llmload/llmload/engine/verdict"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Options configure Compile.
type Options struct {
	// Params are the --set key=value pairs that llm.param reads.
	Params map[string]string
	// Env looks up environment variables for llm.env; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Seed is the run seed. It wins over options.seed; when both are 0 a
	// seed is derived from the clock and reported in the Plan.
	Seed int64
	// InitTimeout bounds the script's top level when Compile runs it, so a
	// script that never returns fails before load; 0 means DefaultInitTimeout.
	InitTimeout time.Duration
	// Stop, when it ends, ends every top level the script runs where it
	// stands, with its cause: Compile's, each new VU's and setup's. The
	// memory bound hands its context here, as Compile takes no other.
	Stop context.Context
}

// DefaultInitTimeout is how long a script's top level may run in Compile.
const DefaultInitTimeout = 30 * time.Second

// Script is a compiled, validated scenario. It is immutable after Compile
// and safe for concurrent use.
type Script struct {
	*api.Program
	source      []byte // the file as Compile read it
	seedDerived bool   // the seed came from the clock: neither Options.Seed nor options.seed chose it
	plan        plan.Plan
	// onUnreachable is options.target.on_unreachable, verdict's default
	// when the script does not say.
	onUnreachable string
	// lintIgnore is options.lints.ignore: lint id → reason.
	lintIgnore map[string]string
}

// Compile reads the scenario at path, compiles it once, runs its top level
// in a throwaway sandbox to read the options table, and validates them
// into a Plan. Errors name the script path and, where there is one, the
// line or the options path at fault.
func Compile(path string, opts Options) (*Script, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	proto, found, err := compileChunk(path, src)
	if err != nil {
		return nil, err
	}
	s := &Script{source: src, Program: &api.Program{Path: path, LinePos: regexp.MustCompile(regexp.QuoteMeta(path) + `:\d+`),
		Proto: proto, Params: opts.Params, Env: opts.Env, Stop: opts.Stop}}
	if s.Env == nil {
		s.Env = os.LookupEnv
	}
	readAtInit, err := s.loadPlan(opts.Seed, cmpOr(opts.InitTimeout, DefaultInitTimeout))
	if err != nil {
		return nil, err
	}
	if err := s.checkParams(found.params, readAtInit); err != nil {
		return nil, err
	}
	if err := checkTargetUses(path, found.targets, s.Targets); err != nil {
		return nil, err
	}
	if err := checkMediaUses(s.Program, found.media); err != nil {
		return nil, err
	}
	s.plan.APIs = found.apis
	return s, nil
}

// scanned is what the source shows before it runs: the llm.param calls,
// the endpoints it sends to beyond chat (scanAPIs), and the request calls
// that name a target literally.
type scanned struct {
	params  Params
	apis    []string
	targets []targetUse
	media   []mediaUse
}

// compileChunk parses and compiles src; the chunk is named after path, so
// every later error message carries the file name as the user gave it.
// Duplicate scenario and threshold names are caught here, in the source,
// because the table constructor keeps only the last of them.
func compileChunk(path string, src []byte) (*lua.FunctionProto, scanned, error) {
	chunk, err := parse.Parse(bytes.NewReader(src), path)
	if err != nil {
		return nil, scanned{}, syntaxError(path, src, err)
	}
	if err := duplicateKeys(path, chunk); err != nil {
		return nil, scanned{}, err
	}
	proto, err := compileAST(path, chunk)
	return proto, scanned{params: scanParams(chunk), apis: scanAPIs(chunk), targets: literalTargets(chunk),
		media: literalMedia(chunk)}, err
}

func compileAST(path string, chunk []ast.Stmt) (*lua.FunctionProto, error) {
	proto, err := lua.Compile(chunk, path)
	if err != nil {
		var ce *lua.CompileError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%s:%d: %s", path, ce.Line, ce.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return proto, nil
}

// syntaxError rewrites gopher-lua's parse error as "path:line: message".
func syntaxError(path string, src []byte, err error) error {
	var pe *parse.Error
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %s", path, strings.TrimSpace(err.Error()))
	}
	if pe.Pos.Line == parse.EOF {
		line := bytes.Count(src, []byte("\n")) + 1
		return fmt.Errorf("%s:%d: %s at end of file", path, line, pe.Message)
	}
	return fmt.Errorf("%s:%d: %s near '%s'", path, pe.Pos.Line, pe.Message, pe.Token)
}

// loadPlan runs the script's init in a throwaway sandbox and validates the
// options it left behind, with the metrics and functions it declared. It
// returns the llm.param keys the top level read.
func (s *Script) loadPlan(seed int64, timeout time.Duration) (map[string]bool, error) {
	m := api.NewModule(s.Program, nil, 0, seed)
	L := m.NewState()
	defer L.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := s.RunInit(ctx, L, m); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if m.Loading != "" {
				return nil, fmt.Errorf("%s: the top level did not finish within %v: still loading %s (too large a file?)", s.Path, timeout, m.Loading)
			}
			return nil, fmt.Errorf("%s: the top level did not finish within %v (an endless loop, or a long llm.sleep at init?)", s.Path, timeout)
		}
		return nil, err
	}
	d := &decoder{}
	opts := d.decodeOptions(L.GetGlobal("options"), filepath.Dir(s.Path))
	noteTargetTokenizer(m, L)
	funcs := globalFunctions(L)
	d.checkExecs(opts.plan.Scenarios, opts.shorthand, funcs)
	d.checkLifecycle(L)
	opts.plan.Metrics = m.DeclaredMetrics()
	d.checkThresholds(opts.plan)
	ignore := d.lintOptions(L.GetGlobal("options"))
	if err := d.Err(s.Path); err != nil {
		return nil, err
	}
	s.setPlan(opts, seed, funcs)
	s.lintIgnore = ignore
	return m.ParamsRead, nil
}

// setPlan keeps a validated plan and the lookups VUs need from it.
func (s *Script) setPlan(opts decodedOptions, seed int64, funcs []string) {
	s.plan = opts.plan
	s.plan.Script = s.Path
	s.plan.Seed = chooseSeed(seed, opts)
	s.Seed = s.plan.Seed
	s.seedDerived = seed == 0 && !opts.seedSet
	s.DirtyMix = opts.dirty
	s.onUnreachable = opts.onUnreachable
	if s.onUnreachable == "" {
		s.onUnreachable = verdict.OnUnreachableFail
	}
	s.Tags = make(map[string]map[string]string, len(s.plan.Scenarios))
	s.Envs = make(map[string]map[string]string, len(s.plan.Scenarios))
	s.Targets = plan.TargetNames(s.plan.Targets)
	s.ScenarioTargets = map[string]string{}
	for _, sc := range s.plan.Scenarios {
		s.Tags[sc.Name] = sc.Tags
		s.Envs[sc.Name] = sc.Env
		if sc.Target != "" {
			s.ScenarioTargets[sc.Name] = sc.Target
		}
	}
	s.ScenarioTraces = make(map[string]*api.ScenarioTrace, len(opts.traces))
	for _, st := range opts.traces {
		s.ScenarioTraces[st.Scenario] = st
	}
	s.Metrics = make(map[string]string, len(s.plan.Metrics))
	for _, md := range s.plan.Metrics {
		s.Metrics[md.Name] = md.Kind
	}
	s.HasSetup = luaval.Contains(funcs, "setup")
	s.HasTeardown = luaval.Contains(funcs, "teardown")
}

// checkLifecycle reports a global setup or teardown that is not a
// function: the run would otherwise silently skip it.
func (d *decoder) checkLifecycle(L *lua.LState) {
	for _, name := range []string{"setup", "teardown"} {
		switch v := L.GetGlobal(name).(type) {
		case *lua.LNilType, *lua.LFunction:
		default:
			d.Errorf(name, "is a %s; define it as a function, or use another name", v.Type())
		}
	}
}

// chooseSeed prefers the caller's seed, then the script's. A derived seed
// stays below 2^31 so it can be typed back into --seed or options.seed.
func chooseSeed(seed int64, opts decodedOptions) int64 {
	switch {
	case seed != 0:
		return seed
	case opts.seedSet:
		return opts.plan.Seed
	}
	return 1 + time.Now().UnixNano()%(1<<31-1)
}

// globalFunctions lists the names of L's global functions, sorted.
func globalFunctions(L *lua.LState) []string {
	var names []string
	L.G.Global.ForEach(func(k, v lua.LValue) {
		if _, ok := v.(*lua.LFunction); ok {
			if s, isStr := k.(lua.LString); isStr {
				names = append(names, string(s))
			}
		}
	})
	sort.Strings(names)
	return names
}

// OnUnreachable is what the run does when the target stops answering for
// a while (options.target.on_unreachable): verdict.OnUnreachableFail, the
// default, or verdict.OnUnreachableWarn.
func (s *Script) OnUnreachable() string { return s.onUnreachable }

// Traces describes what each trace scenario replays, in the plan's order,
// for the run's result and the plan printer; the server's hit share is
// left for the run to fill in. Nil without a trace scenario.
func (s *Script) Traces() []result.Trace {
	var out []result.Trace
	for _, sc := range s.plan.Scenarios {
		if st := s.ScenarioTraces[sc.Name]; st != nil {
			out = append(out, traceReport(st))
		}
	}
	return out
}

// SeedDerived reports whether the seed came from the clock: neither
// Options.Seed nor options.seed chose one.
func (s *Script) SeedDerived() bool { return s.seedDerived }

// Source is the scenario file as Compile read it, for the plan's
// fingerprint and for shipping the scenario: the file is read once, so a
// later edit cannot make the two disagree.
func (s *Script) Source() []byte { return bytes.Clone(s.source) }

// Plan returns the validated plan, scenarios sorted by name. Target holds
// what options.target says, without defaults (but for Tokenizer, which is
// engine.DefaultTokenizer unless the script picks one), so the caller can
// layer flags and environment on top. The returned plan is a copy the caller may
// change.
func (s *Script) Plan() plan.Plan {
	p := s.plan
	p.Scenarios = make([]plan.Scenario, len(s.plan.Scenarios))
	for i, sc := range s.plan.Scenarios {
		sc.Stages = append([]plan.Stage(nil), sc.Stages...)
		sc.Tags = copyMap(sc.Tags)
		sc.Env = copyMap(sc.Env)
		p.Scenarios[i] = sc
	}
	p.Thresholds = nil
	for _, t := range s.plan.Thresholds {
		t.Conditions = append([]string(nil), t.Conditions...)
		p.Thresholds = append(p.Thresholds, t)
	}
	p.Metrics = append([]plan.MetricDef(nil), s.plan.Metrics...)
	p.APIs = append([]string(nil), s.plan.APIs...)
	if len(p.APIs) == 0 {
		p.APIs = nil
	}
	return p
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// noteTargetTokenizer lists a tokenizer.json that options.target.tokenizer
// names among the script's data files (Script.Files), as the script names
// it, so that it travels with the script like the pools' files.
func noteTargetTokenizer(m *api.Module, L *lua.LState) {
	opts, _ := L.GetGlobal("options").(*lua.LTable)
	if opts == nil {
		return
	}
	target, _ := opts.RawGetString("target").(*lua.LTable)
	if target == nil {
		return
	}
	if name, ok := target.RawGetString("tokenizer").(lua.LString); ok && tokenize.IsFile(string(name)) {
		m.NoteFile(string(name))
	}
}
