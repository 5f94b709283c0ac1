// Package api is the llm module a script requires ("llmload"): one Module
// per VU whose functions — chat, complete, respond, messages, embed,
// transcribe, speak, content parts, synthetic media, prompt and media
// pools, traces, synthetic prompts, conversations, think times, checks,
// custom metrics, dirty data — build requests, send them through the
// engine's client and record what came back. The Program is the compiled
// script every Module reads.
package api

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/engine/stopping"
	"github.com/llmload/llmload/luabind/luaval"
	"github.com/llmload/llmload/luabind/sandbox"
	lua "github.com/yuin/gopher-lua"
)

// Phase is what a module's LState is running, which decides what the API
// may do: declare metrics only at init, record only in iterations.
type Phase int

const (
	phaseInit      Phase = iota // the script's top level
	PhaseIdle                   // between iterations
	PhaseLifecycle              // setup() or teardown()
	phaseIteration              // an exec function
)

// Module is one VU's instance of require("llmload"): the API functions
// close over it, so they see this VU's random source, context and current
// iteration. Used only by the VU's goroutine.
type Module struct {
	prog       *Program
	cfg        *RunnerConfig // nil while Compile reads the options
	VUID       int
	src        *rand.PCG
	rng        *rand.Rand
	Ctx        context.Context
	Phase      Phase
	it         *engine.Iteration // nil outside an iteration
	IterStart  time.Time         // when the current iteration began
	scheduled  bool              // Scheduled went out on a sample of this iteration
	poolMeta   *lua.LTable
	convMeta   *lua.LTable
	metrics    map[string]string // custom metrics declared at init: name → kind
	metricMeta *lua.LTable
	Views      *luaval.ReadOnlyViews
	// ParamsRead are the keys llm.param was asked for, so Compile can tell
	// a --set key the script never reads.
	ParamsRead map[string]bool
	// Loading is the data file being read when init ran out of time.
	Loading string
	// seed is the run seed synthetic media are made from, the same in
	// every VU, so that they share the items.
	seed        uint64
	mediaFiles  map[fileKey]*media.Item
	mediaData   map[fileKey]*media.Item
	synths      map[synthKey]*synthSource
	mediaMeta   *lua.LTable
	contentMeta *lua.LTable
	itemMeta    *lua.LTable
	partFields  map[string]lua.LValue // partRecord's scratch
	// branches are the running llm.parallel's coroutines; tasks the task
	// open on each thread (the VU's own and its branches'); awaitMark is
	// what a branch yields while an API call waits.
	branches    map[*lua.LState]*branch
	tasks       map[*lua.LState]*taskState
	awaitMark   *lua.LUserData
	idleThreads []*lua.LState // branches' coroutines kept for the next fan-out
	// asked maps the prompts of llm.synthetic's prefix_hit not sent yet
	// to what each asks of the server's cache (askPrefix).
	asked map[string]engine.PrefixAsked
}

// NewModule seeds the VU's random source from the run seed and the VU id,
// so every VU draws a different, reproducible sequence.
func NewModule(s *Program, cfg *RunnerConfig, vuID int, seed int64) *Module {
	src := rand.NewPCG(uint64(seed), uint64(vuID))
	return &Module{prog: s, cfg: cfg, VUID: vuID, src: src, rng: rand.New(src), Ctx: context.Background(),
		metrics: map[string]string{}, seed: uint64(seed)}
}

// NewState returns the VU's sandbox with require("llmload") available.
func (m *Module) NewState() *lua.LState {
	L := sandbox.New(m.src, uint64(m.VUID))
	m.Views = sandbox.Shared().Views
	m.awaitMark = L.NewUserData()
	sandbox.Preload(L, m.loader)
	return L
}

// Begin enters an iteration: the API may record from now until End.
func (m *Module) Begin(ctx context.Context, it *engine.Iteration) {
	m.Ctx, m.it, m.Phase = ctx, it, phaseIteration
	m.IterStart, m.scheduled = time.Now(), false
	clear(m.tasks) // an earlier setup() or teardown() that failed may have left some
}

// End leaves the iteration: the module idles until the next Begin.
func (m *Module) End() { m.Ctx, m.it, m.Phase = context.Background(), nil, PhaseIdle }

// loader builds the module table, gopher-lua-libs style. Its members are
// made on first use (an __index on the module table): a VU holds only the
// functions its script touches, where building all of them cost 28 KB a
// VU, a third of an idle VU. pairs(llm) lists only the members used so
// far; every other access behaves as if the table were full.
func (m *Module) loader(L *lua.LState) int {
	mod := L.CreateTable(0, 8)
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k, ok := L.Get(2).(lua.LString)
		build, known := members[string(k)]
		if !ok || !known {
			return 0
		}
		v := build(m, L)
		mod.RawSetString(string(k), v)
		L.Push(v)
		return 1
	}))
	mt.RawSetString("__metatable", lua.LString(sandbox.ModuleName))
	L.SetMetatable(mod, mt)
	L.Push(mod)
	return 1
}

// members builds each member of the module table for one VU's module.
var members = map[string]func(m *Module, L *lua.LState) lua.LValue{
	"env":          fn((*Module).env),
	"param":        fn((*Module).param),
	"synthetic":    func(m *Module, L *lua.LState) lua.LValue { return m.syntheticTable(L) },
	"images":       fn((*Module).images),
	"audio":        fn((*Module).audioPool),
	"transcribe":   fn((*Module).transcribe),
	"speak":        fn((*Module).speak),
	"conversation": fn((*Module).newConversation),
	"parallel":     fn((*Module).parallel),
	"task":         func(m *Module, L *lua.LState) lua.LValue { return m.taskFunction(L) },
	"tool_delay":   fn((*Module).toolDelay),
	"weighted":     fn((*Module).weighted),
	"rand_int":     fn((*Module).randInt),
	"sleep":        fn((*Module).sleep),
	"check":        fn((*Module).check),
	"chat":         fn((*Module).chat),
	"complete":     fn((*Module).complete),
	"respond":      fn((*Module).respond),
	"messages":     fn((*Module).messagesAPI),
	"embed":        fn((*Module).embed),
	"think": table(func(m *Module) map[string]lua.LGFunction {
		return map[string]lua.LGFunction{
			"constant": m.thinkConstant, "between": m.thinkBetween, "exponential": m.thinkExponential,
			"normal": m.thinkNormal, "constant_pacing": m.thinkConstantPacing,
		}
	}),
	"metric": table(func(m *Module) map[string]lua.LGFunction {
		return map[string]lua.LGFunction{
			"trend":   m.declareMetric(engine.MetricTrend),
			"counter": m.declareMetric(engine.MetricCounter),
			"rate":    m.declareMetric(engine.MetricRate),
		}
	}),
	"pool":  func(m *Module, L *lua.LState) lua.LValue { return m.poolTable(L) },
	"trace": func(m *Module, L *lua.LState) lua.LValue { return m.traceTable(L) },
	"dist":  func(m *Module, L *lua.LState) lua.LValue { return m.distTable(L) },
	"dirty": func(m *Module, L *lua.LState) lua.LValue { return m.dirtyTable(L) },
}

// fn builds a member that is one function of the module.
func fn(f func(*Module, *lua.LState) int) func(*Module, *lua.LState) lua.LValue {
	return func(m *Module, L *lua.LState) lua.LValue {
		return L.NewFunction(func(L *lua.LState) int { return f(m, L) })
	}
}

// table builds a member that is a table of the module's functions.
func table(funcs func(*Module) map[string]lua.LGFunction) func(*Module, *lua.LState) lua.LValue {
	return func(m *Module, L *lua.LState) lua.LValue {
		f := funcs(m)
		return L.SetFuncs(L.CreateTable(0, len(f)), f)
	}
}

// env implements llm.env(name [, default]) -> string: inside an iteration
// the current scenario's env value, else the environment variable, else
// default (nil when there is none). At init and in setup/teardown no
// scenario is current, so only the process environment is seen.
func (m *Module) env(L *lua.LState) int {
	name := L.CheckString(1)
	if m.it != nil {
		if v, ok := m.prog.Envs[m.it.Scenario][name]; ok {
			L.Push(lua.LString(v))
			return 1
		}
	}
	if v, ok := m.prog.Env(name); ok {
		L.Push(lua.LString(v))
		return 1
	}
	L.Push(L.Get(2))
	return 1
}

// param implements llm.param(key [, default]) -> value: the --set value
// for key, else default. A number or boolean default makes the value a
// number or boolean too, so `llm.param("vus", 4)` can be used as a count.
func (m *Module) param(L *lua.LState) int {
	key := L.CheckString(1)
	def := L.Get(2)
	if m.ParamsRead == nil {
		m.ParamsRead = map[string]bool{}
	}
	m.ParamsRead[key] = true
	raw, ok := m.prog.Params[key]
	if !ok {
		L.Push(def)
		return 1
	}
	switch def.(type) {
	case *lua.LNilType, lua.LString:
		L.Push(lua.LString(raw))
	case lua.LNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			L.RaiseError("llm.param(%q): --set %s=%q is not a number", key, key, raw)
		}
		L.Push(lua.LNumber(f))
	case lua.LBool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			L.RaiseError("llm.param(%q): --set %s=%q is not true or false", key, key, raw)
		}
		L.Push(lua.LBool(b))
	default:
		L.ArgError(2, "default must be a string, number or boolean, got "+def.Type().String())
	}
	return 1
}

// randInt implements llm.rand_int([lo, hi]) -> integer, uniform in
// [lo, hi], by default [0, 2^31-1]; drawn from the VU's seeded source.
func (m *Module) randInt(L *lua.LState) int {
	lo, hi := int64(0), int64(math.MaxInt32)
	switch L.GetTop() {
	case 0:
	case 2:
		lo, hi = sandbox.CheckInteger(L, 1), sandbox.CheckInteger(L, 2)
	default:
		L.RaiseError("llm.rand_int: pass no arguments or both lo and hi")
	}
	if lo > hi {
		L.ArgError(2, "hi must be ≥ lo")
	}
	L.Push(lua.LNumber(lo + m.rng.Int64N(hi-lo+1)))
	return 1
}

// weighted implements llm.weighted{ key = weight, ... } -> key, chosen
// with probability proportional to its weight. Keys are visited in sorted
// order so a seeded run draws the same keys.
func (m *Module) weighted(L *lua.LState) int {
	tbl := luaval.PlainTable(L.CheckTable(1))
	keys := make([]string, 0, 4)
	weights := map[string]float64{}
	total := 0.0
	tbl.ForEach(func(k, v lua.LValue) {
		ks, isStr := k.(lua.LString)
		w, isNum := v.(lua.LNumber)
		switch {
		case !isStr:
			L.RaiseError("llm.weighted: key %s must be a string", k.String())
		case !isNum || !(w > 0) || math.IsInf(float64(w), 0):
			L.RaiseError("llm.weighted: weight of %q must be a number > 0, got %s", string(ks), v.String())
		}
		keys = append(keys, string(ks))
		weights[string(ks)] = float64(w)
		total += float64(w)
	})
	if len(keys) == 0 {
		L.ArgError(1, "llm.weighted needs at least one key")
	}
	sort.Strings(keys)
	L.Push(lua.LString(pickWeighted(keys, weights, m.rng.Float64()*total)))
	return 1
}

// pickWeighted returns the key whose cumulative weight range holds r.
func pickWeighted(keys []string, weights map[string]float64, r float64) string {
	for _, k := range keys {
		if r < weights[k] {
			return k
		}
		r -= weights[k]
	}
	return keys[len(keys)-1] // rounding left r at the very top
}

// sleep implements llm.sleep(d): d is a duration string ("500ms") or a
// number of seconds. It returns early when the VU's context ends.
func (m *Module) sleep(L *lua.LState) int {
	return m.sleepFor(L, "llm.sleep", checkDuration(L, 1))
}

// Pause waits d or until the VU's context ends, whichever comes first;
// in a dry run it returns at once, noting d.
func (m *Module) Pause(d time.Duration) {
	if m.cfg != nil && m.cfg.Dry != nil {
		m.cfg.Dry.Think += max(d, 0)
		return
	}
	stopping.Sleep(m.Ctx, d)
}

// checkDuration reads argument n as a duration string or seconds.
func checkDuration(L *lua.LState, n int) time.Duration {
	var d time.Duration
	switch v := L.Get(n).(type) {
	case lua.LString:
		var err error
		if d, err = time.ParseDuration(string(v)); err != nil {
			L.ArgError(n, strconv.Quote(string(v))+` is not a duration (use e.g. "500ms" or a number of seconds)`)
		}
	case lua.LNumber:
		f := float64(v) * float64(time.Second)
		if math.IsNaN(f) || f > math.MaxInt64 || f < math.MinInt64 {
			L.ArgError(n, "duration out of range")
		}
		d = time.Duration(f)
	default:
		L.ArgError(n, "duration string or number of seconds expected, got "+v.Type().String())
	}
	if d < 0 {
		L.ArgError(n, "duration must not be negative, got "+d.String())
	}
	return d
}

// check implements llm.check(res, { name = bool_or_function, ... }) ->
// all_passed. A function is called with res and its result's truthiness
// counts; one that raises an error fails. Failing checks never raise. In
// an iteration each check sends a "checks" rate sample (1 pass, 0 fail)
// tagged check = name; at init and in setup/teardown nothing is recorded.
func (m *Module) check(L *lua.LState) int {
	res := L.Get(1)
	checks := luaval.PlainTable(L.CheckTable(2))
	all := true
	for _, k := range luaval.SortedKeys(checks) {
		ok := m.evalCheck(L, checks.RawGet(k), res)
		if m.recording() {
			m.recordCheck(k.String(), ok)
		}
		all = all && ok
	}
	L.Push(lua.LBool(all))
	return 1
}

func (m *Module) evalCheck(L *lua.LState, v, res lua.LValue) bool {
	fn, isFn := v.(*lua.LFunction)
	if !isFn {
		return lua.LVAsBool(v)
	}
	if err := L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, res); err != nil {
		return false
	}
	ok := lua.LVAsBool(L.Get(-1))
	L.Pop(1)
	return ok
}

func (m *Module) recordCheck(name string, ok bool) {
	value := 0.0
	if ok {
		value = 1
	}
	m.cfg.Sink.Metric(engine.MetricSample{
		Name: checksMetric, Kind: engine.MetricRate, Value: value,
		Scenario: m.it.Scenario, Stage: m.it.Stage, Warmup: m.it.Warmup,
		Tags: mergeTags(m.prog.Tags[m.it.Scenario], map[string]string{"check": name}),
	})
}

// checksMetric is the built-in rate llm.check feeds.
const checksMetric = "checks"

// recording tells whether checks and custom metrics are recorded now: only
// in iterations not cut short (a check of a canceled request judges the
// cut, not the server) and when there is a sink. Warmup iterations are
// recorded, flagged, for the metrics package to set apart.
func (m *Module) recording() bool {
	return m.Phase == phaseIteration && m.Ctx.Err() == nil && m.cfg != nil && m.cfg.Sink != nil
}
