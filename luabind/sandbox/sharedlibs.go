package sandbox

import (
	"sync"

	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// Libs are the string, table, math and os libraries, built once per
// process in a template state and shared by every VU: a VU's `string`,
// `table`, `math` and `os` are empty views whose metatable reads through
// to them. That is 14 KB a VU that thousands of VUs no longer each hold.
//
// Nothing can write to a shared table, so VUs read them concurrently
// without a lock: a script reaches only its views, whose metatables are
// protected (__metatable), and an assignment to a view (function
// string.trim(s) ... end) lands in the view, so it stays the VU's own and
// shadows the shared entry. The string type's metatable is the VU's string
// view, so ("x"):trim() finds the VU's additions too. The shared functions
// are Go functions, which run on whichever state calls them. pairs over a
// view lists only what the VU added.
//
// The base functions (print, pairs, pcall, require, ...) are shared the
// same way: a VU's globals table reads through to one table of them (its
// metatable's __index), so a VU holds only its own globals. They are Go
// functions too, and gopher-lua gives a Go function the caller's
// environment (getfenv) and refuses to change it (setfenv). rawget(_G, k)
// and pairs(_G) see only the VU's own globals.
type Libs struct {
	Tables  map[string]*lua.LTable // by library name
	views   map[string]*lua.LTable // the metatable of each library's views
	globals *lua.LTable            // the metatable of every VU's globals
	Views   *luaval.ReadOnlyViews  // the functions of setup data's views
}

var (
	libsOnce sync.Once
	libs     *Libs
)

// Shared returns the process's shared libraries, building them
// on first use.
func Shared() *Libs {
	libsOnce.Do(func() { libs = buildSharedLibs() })
	return libs
}

// SharedNames are the libraries shared through views.
var SharedNames = []string{lua.StringLibName, lua.TabLibName, lua.MathLibName, lua.OsLibName}

func buildSharedLibs() *Libs {
	// The template state lives as long as the process: its functions are
	// the ones every VU calls.
	L := lua.NewState(stateOptions)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		openLib(L, lib.name, lib.open)
	}
	for _, name := range removedBase {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("require", L.NewFunction(sandboxRequire))
	restrictOS(L)
	boundStringRep(L)
	shareRandom(L)
	s := &Libs{Tables: map[string]*lua.LTable{}, views: map[string]*lua.LTable{}}
	s.Views = luaval.GuardReadOnly(L)
	luaval.GuardTableLib(L)
	// Every global but the tables (the libraries, _G itself), which each
	// VU has of its own or as views.
	base := L.CreateTable(0, 32)
	L.G.Global.ForEach(func(k, v lua.LValue) {
		name, ok := k.(lua.LString)
		if _, table := v.(*lua.LTable); ok && !table {
			base.RawSetString(string(name), v)
		}
	})
	refuse := L.CreateTable(0, 1)
	refuse.RawSetString("__index", L.NewFunction(refuseRemoved))
	L.SetMetatable(base, refuse)
	s.globals = L.CreateTable(0, 2)
	s.globals.RawSetString("__index", base)
	s.globals.RawSetString("__metatable", lua.LString("globals"))
	for _, name := range SharedNames {
		t := L.GetGlobal(name).(*lua.LTable)
		s.Tables[name] = t
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__index", t)
		mt.RawSetString("__metatable", lua.LString(name))
		s.views[name] = mt
	}
	// os's views explain the functions the sandbox left out.
	os := s.Tables[lua.OsLibName]
	s.views[lua.OsLibName].RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		if name, ok := k.(lua.LString); ok && luaval.Contains(removedOS, string(name)) {
			L.RaiseError("os.%s is not available in llmload scripts (%s)", string(name), sandboxHint)
		}
		L.Push(os.RawGet(k))
		return 1
	}))
	return s
}

// install gives L its views of the shared libraries as globals, with the
// string view as the string type's metatable, and the shared base
// functions behind its globals.
func (s *Libs) install(L *lua.LState) {
	g := L.G.Global
	g.RawSetString("_G", g)
	for _, name := range SharedNames {
		view := L.CreateTable(0, 0)
		if name == lua.StringLibName {
			view = L.CreateTable(0, 1) // its own __index
		}
		L.SetMetatable(view, s.views[name])
		g.RawSetString(name, view)
		if name == lua.StringLibName {
			view.RawSetString("__index", view)
			L.SetMetatable(lua.LString(""), view)
		}
	}
	L.SetMetatable(g, s.globals)
}

// view is L's view of the shared library name, for require: the string
// type's metatable for string, else the global when it still is a view
// (a script may have replaced it), else a new view.
func (s *Libs) view(L *lua.LState, name string) *lua.LTable {
	if name == lua.StringLibName {
		if v, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
			return v
		}
	}
	if v, ok := L.G.Global.RawGetString(name).(*lua.LTable); ok && v.Metatable == lua.LValue(s.views[name]) {
		return v
	}
	view := L.CreateTable(0, 0)
	L.SetMetatable(view, s.views[name])
	return view
}
