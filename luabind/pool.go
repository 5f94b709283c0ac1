package luabind

import (
	lua "github.com/yuin/gopher-lua"
)

// pool is a list of strings a VU draws from, as made by llm.pool.
type pool struct {
	items []string
	next  int
}

// pool implements llm.pool{ "a", "b", ... } -> pool with :next() (round
// robin), :random() and :len(). Each VU's cursor starts at a different item
// (offset by the VU id), so VUs that start together do not all send the
// first prompt, which would flatter a server's prefix cache.
func (m *module) pool(L *lua.LState) int {
	tbl := plainTable(L.CheckTable(1))
	n := tbl.Len()
	if n == 0 {
		L.ArgError(1, "llm.pool needs at least one string")
	}
	tbl.ForEach(func(k, _ lua.LValue) {
		if i, ok := k.(lua.LNumber); !ok || i < 1 || int(i) > n || float64(int(i)) != float64(i) {
			L.RaiseError("llm.pool: unexpected key %s (a pool is a list of strings)", k.String())
		}
	})
	p := &pool{items: make([]string, n)}
	for i := range p.items {
		s, ok := tbl.RawGetInt(i + 1).(lua.LString)
		if !ok {
			L.RaiseError("llm.pool: item [%d] must be a string, got %s", i+1, tbl.RawGetInt(i+1).Type())
		}
		p.items[i] = string(s)
	}
	if m.vuID > 0 {
		p.next = (m.vuID - 1) % n
	}
	ud := L.NewUserData()
	ud.Value = p
	L.SetMetatable(ud, m.poolMetatable(L))
	L.Push(ud)
	return 1
}

// poolMetatable is made once per VU and shared by its pools.
func (m *module) poolMetatable(L *lua.LState) *lua.LTable {
	if m.poolMeta == nil {
		methods := L.SetFuncs(L.CreateTable(0, 3), map[string]lua.LGFunction{
			"next": m.poolNext, "random": m.poolRandom, "len": poolLen,
		})
		m.poolMeta = L.CreateTable(0, 3)
		m.poolMeta.RawSetString("__index", methods)
		m.poolMeta.RawSetString("__len", L.NewFunction(poolLen))
		m.poolMeta.RawSetString("__metatable", lua.LString("llmload.pool"))
	}
	return m.poolMeta
}

func checkPool(L *lua.LState) *pool {
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		if p, ok := ud.Value.(*pool); ok {
			return p
		}
	}
	L.ArgError(1, "pool expected (call methods with a colon: pool:next())")
	return nil
}

// poolNext implements pool:next() -> string, the items in turn.
func (m *module) poolNext(L *lua.LState) int {
	p := checkPool(L)
	L.Push(lua.LString(p.items[p.next]))
	p.next = (p.next + 1) % len(p.items)
	return 1
}

// poolRandom implements pool:random() -> string, uniformly drawn from the
// VU's seeded source.
func (m *module) poolRandom(L *lua.LState) int {
	p := checkPool(L)
	L.Push(lua.LString(p.items[m.rng.IntN(len(p.items))]))
	return 1
}

// poolLen implements pool:len() -> number of items (also #pool).
func poolLen(L *lua.LState) int {
	L.Push(lua.LNumber(len(checkPool(L).items)))
	return 1
}
