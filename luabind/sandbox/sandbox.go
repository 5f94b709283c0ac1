// Package sandbox makes the LState every script runs in: only the safe
// standard libraries, bounded string building and call depth, a math.random
// seeded per VU, and the string, table, math and os libraries built once per
// process and shared read-only by every VU.
package sandbox

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// ModuleName is what scripts require to get the llmload API.
const ModuleName = "llmload"

// stateOptions keep an idle VU's LState small: thousands of VUs share one
// process, so the registry starts at gopher-lua's minimum and grows on
// demand, and the call stack grows in segments of 8 frames
// (MinimizeStackMemory) where a whole one is 16 KB a VU, 160 MB at 10,000
// VUs. CallStackSize matches Lua 5.1's C-call limit, which is ample for
// scenarios. The growing stack overflows with a bare "lua callstack
// overflow" panic rather than a Lua error; IncludeGoStackTrace keeps the
// Lua stack of such a panic, where the script error finds the line.
var stateOptions = lua.Options{
	CallStackSize:       MaxCallDepth,
	MinimizeStackMemory: true,
	IncludeGoStackTrace: true,
	RegistrySize:        128,
	RegistryGrowStep:    128,
	RegistryMaxSize:     256 * 1024,
	SkipOpenLibs:        true,
}

// Overflow is the panic of gopher-lua's growing call stack when a script
// nests its calls deeper than MaxCallDepth.
const Overflow = "lua callstack overflow"

// MaxCallDepth is how deep a script's calls may nest.
const MaxCallDepth = 200

// removedBase are base functions a scenario must not have: they read files
// or compile code at run time (the script is compiled once, up front),
// collectgarbage stops the whole process and so distorts every VU's
// timing, and the rest are debugging or deprecated helpers.
var removedBase = []string{"dofile", "loadfile", "load", "loadstring", "module", "collectgarbage", "_printregs"}

// keptOS are the os functions a scenario may use; none touches the
// process, the file system or the environment (llm.env reads that).
var keptOS = []string{"time", "clock", "date"}

// New returns an LState with only the safe standard libraries.
// Coroutines are left out on purpose: gopher-lua binds a coroutine to the
// context its creator had, so one made at init would escape the
// cancellation of every later iteration. src, seeded for the VU's stream,
// backs math.random.
func New(src *rand.PCG, stream uint64) *lua.LState {
	L := lua.NewState(stateOptions)
	// gopher-lua makes the globals and the registry with room for 64 and
	// 32 keys, 7 KB a VU, and a table made empty gets room for 32 at its
	// first key. A VU's registry holds three slots (regRand...) and its
	// globals the libraries, _G and the script's few: they start at that
	// size and grow as a script adds.
	L.G.Global, L.G.Registry = L.CreateTable(0, globalsHint), L.CreateTable(regModule, 0)
	L.Env = L.G.Global
	ud := L.NewUserData()
	ud.Value = &vuRand{src: src, rng: rand.New(src), stream: stream}
	L.G.Registry.RawSetInt(regRand, ud)
	Shared().install(L)
	return L
}

// openLib opens one standard library in L under name.
func openLib(L *lua.LState, name string, open lua.LGFunction) {
	L.Push(L.NewFunction(open))
	L.Push(lua.LString(name))
	L.Call(1, 0)
}

// MaxRepBytes bounds string.rep's result: one line such as
// string.rep("x", 1e10) would otherwise take the whole process, and every
// result file with it, down with an out-of-memory crash.
const MaxRepBytes = 64 << 20

// boundStringRep replaces string.rep with one that refuses results beyond
// MaxRepBytes, with an error at the script's line.
func boundStringRep(L *lua.LState) {
	str, ok := L.GetGlobal("string").(*lua.LTable)
	if !ok {
		return
	}
	rep, ok := str.RawGetString("rep").(*lua.LFunction)
	if !ok {
		return
	}
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s, n := L.CheckString(1), L.CheckNumber(2)
		if float64(n)*float64(len(s)) > MaxRepBytes {
			L.RaiseError("string.rep: a result of %.4g bytes is beyond llmload's %d MB limit", float64(n)*float64(len(s)), MaxRepBytes>>20)
		}
		nargs := L.GetTop()
		L.Push(rep)
		for i := 1; i <= nargs; i++ {
			L.Push(L.Get(i))
		}
		L.Call(nargs, 1)
		return 1
	}))
}

// globalsHint is the room a VU's globals start with.
const globalsHint = 16

// Slots of a VU's registry, which the shared functions read: integer
// keys live in the registry's array part, where string keys would give
// every VU a map.
const (
	regRand   = 1 + iota // the VU's vuRand
	regLoader            // the llmload module's loader
	regModule            // the llmload module, once required
)

// Preload makes require("llmload") in L return what loader returns,
// calling it on the first require only.
func Preload(L *lua.LState, loader lua.LGFunction) {
	L.G.Registry.RawSetInt(regLoader, L.NewFunction(loader))
}

// sandboxRequire is require: it finds only the libraries and the module
// given to Preload, never a file. It replaces gopher-lua's package
// library, whose tables would cost every VU 7 KB.
func sandboxRequire(L *lua.LState) int {
	name := L.CheckString(1)
	if name == "_G" {
		L.Push(L.G.Global)
		return 1
	}
	if slices.Contains(SharedNames, name) {
		L.Push(Shared().view(L, name))
		return 1
	}
	reg := L.G.Registry
	if name != ModuleName || reg.RawGetInt(regLoader) == lua.LNil {
		L.RaiseError("module %q not found: llmload scripts can require only %s (%s)", name, ModuleName, sandboxHint)
	}
	if v := reg.RawGetInt(regModule); v != lua.LNil {
		L.Push(v)
		return 1
	}
	L.Push(reg.RawGetInt(regLoader))
	L.Push(lua.LString(name))
	L.Call(1, 1)
	v := L.Get(-1)
	if v == lua.LNil {
		v = lua.LTrue
	}
	reg.RawSetInt(regModule, v)
	L.Push(v)
	return 1
}

func restrictOS(L *lua.LState) {
	full := L.GetGlobal(lua.OsLibName).(*lua.LTable)
	safe := L.CreateTable(0, len(keptOS))
	for _, name := range keptOS {
		safe.RawSetString(name, full.RawGetString(name))
	}
	L.SetGlobal(lua.OsLibName, safe)
}

// vuRand is a VU's own random source: math.random and math.randomseed,
// shared by every VU, find it in the calling state's registry, so a run is
// reproducible from its seed and VUs do not contend on a lock as they
// would on Go's process-wide generator.
type vuRand struct {
	src    *rand.PCG
	rng    *rand.Rand
	stream uint64
}

// stateRand is L's vuRand; a state sandbox.New did not make has none.
func stateRand(L *lua.LState) *vuRand {
	if ud, ok := L.G.Registry.RawGetInt(regRand).(*lua.LUserData); ok {
		if r, ok := ud.Value.(*vuRand); ok {
			return r
		}
	}
	L.RaiseError("math.random is not available here")
	return nil
}

// shareRandom replaces the template's math.random and math.randomseed
// with ones backed by the calling VU's source.
func shareRandom(L *lua.LState) {
	m := L.GetGlobal(lua.MathLibName).(*lua.LTable)
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		return mathRandom(L, stateRand(L).rng)
	}))
	m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		r := stateRand(L)
		r.src.Seed(uint64(L.CheckInt64(1)), r.stream)
		return 0
	}))
}

// mathRandom follows Lua 5.1: random() in [0,1), random(m) in [1,m],
// random(m, n) in [m,n].
func mathRandom(L *lua.LState, rng *rand.Rand) int {
	lo, hi := int64(1), int64(0)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(rng.Float64()))
		return 1
	case 1:
		hi = CheckInteger(L, 1)
	default:
		lo, hi = CheckInteger(L, 1), CheckInteger(L, 2)
	}
	if lo > hi {
		L.RaiseError("bad argument to random (interval is empty)")
	}
	L.Push(lua.LNumber(lo + rng.Int64N(hi-lo+1)))
	return 1
}

// CheckInteger reads argument n as an integer a Lua number holds exactly.
func CheckInteger(L *lua.LState, n int) int64 {
	f := float64(L.CheckNumber(n))
	if f != math.Trunc(f) || math.Abs(f) > luaval.MaxExactInt {
		L.ArgError(n, "integer expected, got "+lua.LNumber(f).String())
	}
	return int64(f)
}

// removedGlobals are the globals the sandbox leaves out, and removedOS the
// os functions; explainRemoved makes each say so.
var (
	removedGlobals = append([]string{"io", "debug", "coroutine", "channel", "package"}, removedBase...)
	removedOS      = []string{"execute", "exit", "getenv", "remove", "rename", "tmpname", "setlocale", "difftime"}
)

// sandboxHint is what every refusal adds: what is out, and what to use.
const sandboxHint = "the sandbox leaves out io, os.execute, os.getenv, load, dofile, require of files, coroutines and debug; " +
	"read data files with llm.pool.text/jsonl/csv/sharegpt and the environment with llm.env"

// refuseRemoved is the __index of the shared base functions' table: it
// raises "name is not available in llmload scripts" at the script's line
// for a name the sandbox left out, where Lua would give nil and the script
// would fail later with "attempt to index a non-table object(nil)". It
// only raises errors: nothing removed becomes reachable, and rawget still
// sees nil.
func refuseRemoved(L *lua.LState) int {
	if k, ok := L.Get(2).(lua.LString); ok && luaval.Contains(removedGlobals, string(k)) {
		L.RaiseError("%s is not available in llmload scripts (%s)", string(k), sandboxHint)
	}
	return 0
}
