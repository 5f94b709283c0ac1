package api

import (
	"hash/fnv"
	"path/filepath"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// TraceValue is a loaded trace as llm.trace.* returns it: the records
// (shared by every VU) and how its prompts are to be built. The prompter
// is made when the plan is known, with the plan's tokenizer unless the
// loader named one.
type TraceValue struct {
	Name      string // the path as the script gave it
	Trace     *dataset.Trace
	Tokenizer string // the loader's tokenizer option; "" for the plan's
	Salt      uint64
}

// ScenarioTrace is a trace scenario's trace with its prompter.
type ScenarioTrace struct {
	Scenario string
	Src      *TraceValue
	Prompter *dataset.TracePrompter
	Replay   *plan.Trace
	Stats    dataset.TraceStats
}

var (
	traceKinds = []string{dataset.TraceMooncake, dataset.TraceBailian, dataset.TraceAzure, dataset.TraceJSONL, dataset.TraceCSV, dataset.TraceAgent}
	// traceOptionKeys are what every loader takes: the fields' names
	// override the format's own.
	traceOptionKeys = []string{"block_tokens", "time_unit", "tokenizer", "salt",
		"time", "input", "output", "hash_ids", "session", "text", "messages",
		"id", "parent", "delay", "delay_unit"}
)

// traceTable is llm.trace: one loader per format.
func (m *Module) traceTable(L *lua.LState) *lua.LTable {
	funcs := make(map[string]lua.LGFunction, len(traceKinds))
	for _, kind := range traceKinds {
		funcs[kind] = func(L *lua.LState) int { return m.loadTrace(L, kind) }
	}
	return L.SetFuncs(L.CreateTable(0, len(funcs)), funcs)
}

// loadTrace implements llm.trace.<kind>(path [, { block_tokens =,
// time_unit =, tokenizer =, salt =, time =, input =, output =, hash_ids =,
// session =, text =, messages =, id =, parent =, delay =, delay_unit = }])
// -> trace, for a trace scenario's
// trace option. Paths are relative to the script's directory; the file
// loads once per process.
func (m *Module) loadTrace(L *lua.LState, kind string) int {
	name := "llm.trace." + kind
	given := L.CheckString(1)
	m.NoteFile(given)
	path := given
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(m.prog.Path), path)
	}
	tv := &TraceValue{Name: given}
	f := dataset.TraceFormat{Kind: kind}
	if L.GetTop() >= 2 {
		m.traceOptions(L, name, &f, tv)
	}
	m.Loading = path
	tr, err := dataset.LoadTraceContext(m.Ctx, path, f)
	if m.Ctx.Err() == nil {
		m.Loading = ""
	}
	if err != nil {
		L.RaiseError("%s(%q): %v", name, given, err)
	}
	tv.Trace = tr
	ud := L.NewUserData()
	ud.Value = tv
	methods := L.SetFuncs(L.CreateTable(0, 2), map[string]lua.LGFunction{
		"len":   func(L *lua.LState) int { L.Push(lua.LNumber(len(tv.Trace.Records))); return 1 },
		"stats": func(L *lua.LState) int { L.Push(traceStatsTable(L, tv.Trace.Stats())); return 1 },
	})
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", methods)
	mt.RawSetString("__metatable", lua.LString("llmload.trace"))
	L.SetMetatable(ud, mt)
	L.Push(ud)
	return 1
}

// traceOptions reads a loader's options, raising every problem at once.
func (m *Module) traceOptions(L *lua.LState, name string, f *dataset.TraceFormat, tv *TraceValue) {
	d := &ArgDecoder{}
	path := name + " options"
	o := d.Record(path, L.Get(2), traceOptionKeys)
	if v := o["block_tokens"]; v != nil {
		f.BlockTokens = d.Count(luaval.Child(path, "block_tokens"), v, 1)
	}
	if v := o["time_unit"]; v != nil {
		f.TimeUnit = d.Str(luaval.Child(path, "time_unit"), v)
	}
	if v := o["delay_unit"]; v != nil {
		f.DelayUnit = d.Str(luaval.Child(path, "delay_unit"), v)
	}
	if v := o["tokenizer"]; v != nil {
		tv.Tokenizer = m.tokenizerOption(&d.Decoder, luaval.Child(path, "tokenizer"), v)
	}
	if v := o["salt"]; v != nil {
		tv.Salt = d.salt(luaval.Child(path, "salt"), v)
	}
	for _, fld := range []struct {
		key string
		dst *string
	}{{"time", &f.Fields.Time}, {"input", &f.Fields.Input}, {"output", &f.Fields.Output},
		{"hash_ids", &f.Fields.HashIDs}, {"session", &f.Fields.Session}, {"text", &f.Fields.Text},
		{"messages", &f.Fields.Messages}, {"id", &f.Fields.ID}, {"parent", &f.Fields.Parent},
		{"delay", &f.Fields.Delay}} {
		if v := o[fld.key]; v != nil {
			if *fld.dst = d.Str(luaval.Child(path, fld.key), v); *fld.dst == "" {
				d.Errorf(luaval.Child(path, fld.key), "must name a field (not empty)")
			}
		}
	}
	if err := d.Joined(); err != nil {
		L.RaiseError("%v", err)
	}
}

// salt reads a salt: a whole number, or a string hashed to one.
func (d *ArgDecoder) salt(path string, v lua.LValue) uint64 {
	switch s := v.(type) {
	case lua.LString:
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	case lua.LNumber:
		n, ok := d.Integer(path, v)
		if ok {
			return uint64(n)
		}
		return 0
	}
	d.Errorf(path, "expected a number or a string, got %s", v.Type())
	return 0
}

// traceStatsTable is trace:stats(): the trace's records, lengths,
// sessions and the prefix reuse an infinite cache would see.
func traceStatsTable(L *lua.LState, s dataset.TraceStats) *lua.LTable {
	lengths := func(l dataset.Lengths) *lua.LTable {
		t := L.CreateTable(0, 5)
		t.RawSetString("mean", lua.LNumber(l.Mean))
		for k, v := range map[string]int{"p50": l.P50, "p90": l.P90, "p99": l.P99, "max": l.Max} {
			t.RawSetString(k, lua.LNumber(v))
		}
		return t
	}
	t := L.CreateTable(0, 9)
	t.RawSetString("input_tokens", lengths(s.Input))
	t.RawSetString("output_tokens", lengths(s.Output))
	t.RawSetString("duration_s", lua.LNumber(s.DurationS))
	t.RawSetString("prefix_reuse", lua.LNumber(s.PrefixReuse))
	for k, v := range map[string]int{"records": s.Records, "sessions": s.Sessions, "unique_blocks": s.UniqueBlocks,
		"block_tokens": s.BlockTokens, "records_with_hash_ids": s.WithHashIDs} {
		t.RawSetString(k, lua.LNumber(v))
	}
	return t
}
