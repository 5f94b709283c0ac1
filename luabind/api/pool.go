package api

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// pool is one VU's cursor over a shared, read-only dataset.Pool, as made
// by llm.pool and its file loaders. Used by the VU's goroutine only.
type pool struct {
	src  *dataset.Pool
	next int
}

// newPoolValue wraps src in a pool userdata whose cursor starts at a
// different item for each VU (offset by the VU id), so VUs that start
// together do not all send the first prompt, which would flatter a
// server's prefix cache.
func (m *Module) newPoolValue(L *lua.LState, src *dataset.Pool) *lua.LUserData {
	p := &pool{src: src}
	if m.VUID > 0 {
		p.next = (m.VUID - 1) % src.Len()
	}
	ud := L.NewUserData()
	ud.Value = p
	L.SetMetatable(ud, m.poolMetatable(L))
	return ud
}

// poolTable is the callable llm.pool table: llm.pool{...} makes an inline
// pool, llm.pool.text/jsonl/sharegpt/csv load one from a file.
func (m *Module) poolTable(L *lua.LState) *lua.LTable {
	t := L.SetFuncs(L.CreateTable(0, 4), map[string]lua.LGFunction{
		"text": m.poolText, "jsonl": m.poolJSONL, "sharegpt": m.poolShareGPT, "csv": m.poolCSV,
	})
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__call", L.NewFunction(func(L *lua.LState) int {
		L.Remove(1) // the llm.pool table itself
		return m.pool(L)
	}))
	mt.RawSetString("__metatable", lua.LString("llmload.pool"))
	L.SetMetatable(t, mt)
	return t
}

// pool implements llm.pool{ "a", "b", ... } -> pool with :next() (round
// robin), :random() and :len().
func (m *Module) pool(L *lua.LState) int {
	tbl := luaval.PlainTable(L.CheckTable(1))
	n := tbl.Len()
	if n == 0 {
		L.ArgError(1, "llm.pool needs at least one string")
	}
	tbl.ForEach(func(k, _ lua.LValue) {
		if i, ok := k.(lua.LNumber); !ok || i < 1 || int(i) > n || float64(int(i)) != float64(i) {
			L.RaiseError("llm.pool: unexpected key %s (a pool is a list of strings)", k.String())
		}
	})
	items := make([]dataset.Item, n)
	for i := range items {
		s, ok := tbl.RawGetInt(i + 1).(lua.LString)
		if !ok {
			L.RaiseError("llm.pool: item [%d] must be a string, got %s", i+1, tbl.RawGetInt(i+1).Type())
		}
		items[i].Text = string(s)
	}
	src, err := dataset.New(items)
	if err != nil {
		L.RaiseError("llm.pool: %v", err)
	}
	L.Push(m.newPoolValue(L, src))
	return 1
}

// poolMetatable is made once per VU and shared by its pools.
func (m *Module) poolMetatable(L *lua.LState) *lua.LTable {
	if m.poolMeta == nil {
		m.poolMeta = drawMetatable(L, "llmload.pool", m.poolNext, m.poolRandom, poolLen)
	}
	return m.poolMeta
}

// drawMetatable is the metatable of a value drawn from with :next() and
// :random(), whose length is #value and :len(); name is what
// getmetatable answers.
func drawMetatable(L *lua.LState, name string, next, random, length lua.LGFunction) *lua.LTable {
	methods := L.SetFuncs(L.CreateTable(0, 3), map[string]lua.LGFunction{
		"next": next, "random": random, "len": length,
	})
	mt := L.CreateTable(0, 3)
	mt.RawSetString("__index", methods)
	mt.RawSetString("__len", L.NewFunction(length))
	mt.RawSetString("__metatable", lua.LString(name))
	return mt
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

// poolNext implements pool:next() -> item, the items in turn: a string
// for a text item, a messages table for a conversation.
func (m *Module) poolNext(L *lua.LState) int {
	p := checkPool(L)
	L.Push(itemValue(L, p.src.Item(p.next)))
	p.next = (p.next + 1) % p.src.Len()
	return 1
}

// poolRandom implements pool:random() -> item, uniformly drawn from the
// VU's seeded source.
func (m *Module) poolRandom(L *lua.LState) int {
	p := checkPool(L)
	L.Push(itemValue(L, p.src.Item(m.rng.IntN(p.src.Len()))))
	return 1
}

// poolLen implements pool:len() -> number of items (also #pool).
func poolLen(L *lua.LState) int {
	L.Push(lua.LNumber(checkPool(L).src.Len()))
	return 1
}

// itemValue is a pool item as scripts see it. A conversation becomes a new
// table each time, so a script that changes it changes only its copy.
func itemValue(L *lua.LState, it dataset.Item) lua.LValue {
	if it.Messages == nil {
		return lua.LString(it.Text)
	}
	return messagesTable(L, it.Messages)
}

// messagesTable is { {role=, content=}, ... }, as llm.chat's messages.
func messagesTable(L *lua.LState, msgs []engine.Message) *lua.LTable {
	t := L.CreateTable(len(msgs), 0)
	for _, msg := range msgs {
		e := L.CreateTable(0, 2)
		e.RawSetString("role", lua.LString(msg.Role))
		e.RawSetString("content", lua.LString(msg.Content))
		// An agent's history holds calls and their answers: kept, so the
		// table can be sent again as messages.
		if len(msg.ToolCalls) > 0 {
			e.RawSetString("tool_calls", toolCallsTable(L, msg.ToolCalls))
		}
		if msg.ToolCallID != "" {
			e.RawSetString("tool_call_id", lua.LString(msg.ToolCallID))
		}
		t.Append(e)
	}
	return t
}
