package luaval

import (
	lua "github.com/yuin/gopher-lua"
)

// viewBackingKey holds, in a read-only view's metatable, the table the
// view reads from. Scripts cannot reach it: the metatable is protected.
const viewBackingKey = "__llmload_backing"

// errReadOnly is what every write to setup data raises.
const errReadOnly = "setup data is read-only"

// ReadOnlyViews builds read-only views of setup data in one LState. A view
// is an empty table whose metatable reads from a backing table and refuses
// writes; nested tables are views too, so no path leads to a writable
// table. Used by the LState's goroutine only.
type ReadOnlyViews struct {
	newIndex *lua.LFunction
	length   *lua.LFunction
}

// Plain returns the backing table of a read-only view, or v itself, so
// Go code that reads tables raw (options, llm.chat, llm.pool...) sees
// setup data like any other table.
func Plain(v lua.LValue) lua.LValue {
	if t, ok := v.(*lua.LTable); ok {
		return PlainTable(t)
	}
	return v
}

// PlainTable is Plain for a table.
func PlainTable(t *lua.LTable) *lua.LTable {
	if b, ok := viewBacking(t); ok {
		return b
	}
	return t
}

func viewBacking(v lua.LValue) (*lua.LTable, bool) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, false
	}
	mt, ok := t.Metatable.(*lua.LTable)
	if !ok {
		return nil, false
	}
	b, ok := mt.RawGetString(viewBackingKey).(*lua.LTable)
	return b, ok
}

// GuardReadOnly makes L's base functions that bypass metatables see
// through views (pairs, ipairs, next, rawget, unpack) and refuse to change
// them (rawset); guardTableLib does the same for table.concat,
// table.insert, ...; # works through __len. It runs once, on the template
// state of the shared libraries (sharedLibs), whose functions every VU
// gets: neither the wrappers nor the returned views' functions hold state.
func GuardReadOnly(L *lua.LState) *ReadOnlyViews {
	v := &ReadOnlyViews{
		newIndex: L.NewFunction(func(L *lua.LState) int {
			L.RaiseError(errReadOnly)
			return 0
		}),
		length: L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(PlainTable(L.CheckTable(1)).Len()))
			return 1
		}),
	}
	base := L.G.Global
	for _, name := range []string{"next", "rawget", "unpack"} {
		wrapLib(L, base, name, readThrough)
	}
	wrapLib(L, base, "rawset", refuseView)
	wrapPairs(L, base)
	return v
}

// GuardTableLib does for the table library what guardReadOnly does for the
// base functions. It runs once, on the shared libraries (sharedLibs): the
// wrappers hold no state of their own.
func GuardTableLib(L *lua.LState) {
	tbl, ok := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	if !ok {
		return
	}
	for _, name := range []string{"concat", "getn", "maxn"} {
		wrapLib(L, tbl, name, readThrough)
	}
	for _, name := range []string{"insert", "remove", "sort"} {
		wrapLib(L, tbl, name, refuseView)
	}
}

// wrapLib replaces lib[name] with wrap applied to the original function.
func wrapLib(L *lua.LState, lib *lua.LTable, name string, wrap func(orig lua.LValue) lua.LGFunction) {
	orig := lib.RawGetString(name)
	if orig == lua.LNil {
		return
	}
	lib.RawSetString(name, L.NewFunction(wrap(orig)))
}

// readThrough calls orig with a view as its first argument replaced by
// the view's backing table. Only results leave, never the backing table.
func readThrough(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if b, ok := viewBacking(L.Get(1)); ok {
			L.Replace(1, b)
		}
		return callThrough(L, orig)
	}
}

func refuseView(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if _, ok := viewBacking(L.Get(1)); ok {
			L.RaiseError(errReadOnly)
		}
		return callThrough(L, orig)
	}
}

// callThrough calls fn with the current arguments and returns all its results.
func callThrough(L *lua.LState, fn lua.LValue) int {
	top := L.GetTop()
	L.Insert(fn, 1)
	L.Call(top, lua.MultRet)
	return L.GetTop()
}

// wrapPairs makes pairs and ipairs iterate a view's backing table. The
// iterators get the view as their state, so the loop never sees the
// backing table itself. Other tables take the original iterators
// directly, so ordinary loops pay one type check.
func wrapPairs(L *lua.LState, base *lua.LTable) {
	next := base.RawGetString("next") // already reads through views
	viewIter := L.NewFunction(func(L *lua.LState) int {
		b, _ := viewBacking(L.Get(1))
		i := L.CheckInt(2) + 1
		val := PlainTable(b).RawGetInt(i)
		if val == lua.LNil {
			return 0
		}
		L.Push(lua.LNumber(i))
		L.Push(val)
		return 2
	})
	base.RawSetString("pairs", iterator(L, base.RawGetString("pairs"), next, lua.LNil))
	base.RawSetString("ipairs", iterator(L, base.RawGetString("ipairs"), viewIter, lua.LNumber(0)))
}

// iterator wraps orig, a pairs-like function: for a view it returns
// viewIter, the view and start. gopher-lua's pairs and ipairs keep their
// step function as their only upvalue; when that holds it is used as is,
// else orig is called.
func iterator(L *lua.LState, orig, viewIter, start lua.LValue) *lua.LFunction {
	var step lua.LValue
	if fn, ok := orig.(*lua.LFunction); ok && fn.IsG && len(fn.Upvalues) == 1 {
		step = fn.Upvalues[0].Value()
	}
	return L.NewFunction(func(L *lua.LState) int {
		if _, ok := viewBacking(L.Get(1)); ok {
			L.Push(viewIter)
			L.Push(L.Get(1))
			L.Push(start)
			return 3
		}
		if step == nil {
			return callThrough(L, orig)
		}
		L.Push(step)
		L.Push(L.CheckTable(1))
		L.Push(start)
		return 3
	})
}

// Value converts setup data (see luaToGo) into Lua, tables as views.
func (v *ReadOnlyViews) Value(L *lua.LState, x any) lua.LValue {
	switch x := x.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		b := L.CreateTable(len(x), 0)
		for i, e := range x {
			b.RawSetInt(i+1, v.Value(L, e))
		}
		return v.view(L, b)
	case map[string]any:
		b := L.CreateTable(0, len(x))
		for k, e := range x {
			b.RawSetString(k, v.Value(L, e))
		}
		return v.view(L, b)
	case map[any]any:
		b := L.CreateTable(0, len(x))
		for k, e := range x {
			b.RawSet(goKey(k), v.Value(L, e))
		}
		return v.view(L, b)
	}
	return lua.LNil
}

func goKey(k any) lua.LValue {
	if i, ok := k.(int64); ok {
		return lua.LNumber(i)
	}
	return lua.LString(k.(string))
}

func (v *ReadOnlyViews) view(L *lua.LState, backing *lua.LTable) *lua.LTable {
	mt := L.CreateTable(0, 5)
	mt.RawSetString("__index", backing)
	mt.RawSetString("__newindex", v.newIndex)
	mt.RawSetString("__len", v.length)
	mt.RawSetString("__metatable", lua.LString("setup data (read-only)"))
	mt.RawSetString(viewBackingKey, backing)
	view := L.NewTable()
	view.Metatable = mt
	return view
}
