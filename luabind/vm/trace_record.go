package vm

import (
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// recordTable is vu.record in a trace scenario's iteration: the record to
// replay and the request it describes.
func (v *VU) recordTable(a *plan.TraceArrival, st *api.ScenarioTrace) *lua.LTable {
	L := v.L
	rec := &st.Src.Trace.Records[a.Record]
	t := L.CreateTable(0, 14)
	t.RawSetString("index", lua.LNumber(a.Record))
	t.RawSetString("line", lua.LNumber(rec.Line))
	t.RawSetString("timestamp", lua.LNumber(rec.At.Seconds()))
	t.RawSetString("at", lua.LNumber(a.At.Seconds()))
	t.RawSetString("input_length", lua.LNumber(rec.Input))
	t.RawSetString("output_length", lua.LNumber(rec.Output))
	if rec.Output > 0 {
		t.RawSetString("max_tokens", lua.LNumber(rec.Output))
	}
	if len(rec.HashIDs) > 0 {
		ids := L.CreateTable(len(rec.HashIDs), 0)
		for _, id := range rec.HashIDs {
			ids.Append(lua.LNumber(id))
		}
		t.RawSetString("hash_ids", ids)
	}
	if rec.Session != "" {
		t.RawSetString("session", lua.LString(rec.Session))
	}
	if a.Session > 0 {
		t.RawSetString("session_number", lua.LNumber(a.Session))
	}
	var msgs *lua.LTable
	if rec.Messages != nil {
		msgs = L.CreateTable(len(rec.Messages), 0)
		for _, msg := range rec.Messages {
			mt := L.CreateTable(0, 2)
			mt.RawSetString("role", lua.LString(msg.Role))
			mt.RawSetString("content", lua.LString(msg.Content))
			msgs.Append(mt)
		}
	} else {
		prompt, n := st.Prompter.Prompt(rec, a.Record)
		t.RawSetString("prompt", lua.LString(prompt))
		t.RawSetString("input_tokens", lua.LNumber(n))
		um := L.CreateTable(0, 2)
		um.RawSetString("role", lua.LString("user"))
		um.RawSetString("content", lua.LString(prompt))
		msgs = L.CreateTable(1, 0)
		msgs.Append(um)
	}
	t.RawSetString("messages", msgs)
	return t
}
