package luabind

import (
	"hash/fnv"
	"path/filepath"
	"time"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// traceValue is a loaded trace as llm.trace.* returns it: the records
// (shared by every VU) and how its prompts are to be built. The prompter
// is made when the plan is known, with the plan's tokenizer unless the
// loader named one.
type traceValue struct {
	name      string // the path as the script gave it
	trace     *dataset.Trace
	tokenizer string // the loader's tokenizer option; "" for the plan's
	salt      uint64
}

// scenarioTrace is a trace scenario's trace with its prompter.
type scenarioTrace struct {
	scenario string
	src      *traceValue
	prompter *dataset.TracePrompter
	replay   *plan.Trace
	stats    dataset.TraceStats
}

// replayOptions are a trace scenario's slice and pace.
type replayOptions = dataset.ReplayOptions

// time1ms is the shortest window a trace stage gets.
const time1ms = time.Millisecond

var (
	traceKinds = []string{dataset.TraceMooncake, dataset.TraceBailian, dataset.TraceAzure, dataset.TraceJSONL, dataset.TraceCSV}
	// traceOptionKeys are what every loader takes: the fields' names
	// override the format's own.
	traceOptionKeys = []string{"block_tokens", "time_unit", "tokenizer", "salt",
		"time", "input", "output", "hash_ids", "session", "text", "messages"}
)

// traceTable is llm.trace: one loader per format.
func (m *module) traceTable(L *lua.LState) *lua.LTable {
	funcs := make(map[string]lua.LGFunction, len(traceKinds))
	for _, kind := range traceKinds {
		funcs[kind] = func(L *lua.LState) int { return m.loadTrace(L, kind) }
	}
	return L.SetFuncs(L.CreateTable(0, len(funcs)), funcs)
}

// loadTrace implements llm.trace.<kind>(path [, { block_tokens =,
// time_unit =, tokenizer =, salt =, time =, input =, output =, hash_ids =,
// session =, text =, messages = }]) -> trace, for a trace scenario's
// trace option. Paths are relative to the script's directory; the file
// loads once per process.
func (m *module) loadTrace(L *lua.LState, kind string) int {
	name := "llm.trace." + kind
	given := L.CheckString(1)
	m.noteFile(given)
	path := given
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(m.prog.path), path)
	}
	tv := &traceValue{name: given}
	f := dataset.TraceFormat{Kind: kind}
	if L.GetTop() >= 2 {
		m.traceOptions(L, name, &f, tv)
	}
	m.loading = path
	tr, err := dataset.LoadTraceContext(m.ctx, path, f)
	if m.ctx.Err() == nil {
		m.loading = ""
	}
	if err != nil {
		L.RaiseError("%s(%q): %v", name, given, err)
	}
	tv.trace = tr
	ud := L.NewUserData()
	ud.Value = tv
	methods := L.SetFuncs(L.CreateTable(0, 2), map[string]lua.LGFunction{
		"len":   func(L *lua.LState) int { L.Push(lua.LNumber(len(tv.trace.Records))); return 1 },
		"stats": func(L *lua.LState) int { L.Push(traceStatsTable(L, tv.trace.Stats())); return 1 },
	})
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", methods)
	mt.RawSetString("__metatable", lua.LString("llmload.trace"))
	L.SetMetatable(ud, mt)
	L.Push(ud)
	return 1
}

// traceOptions reads a loader's options, raising every problem at once.
func (m *module) traceOptions(L *lua.LState, name string, f *dataset.TraceFormat, tv *traceValue) {
	d := &decoder{}
	path := name + " options"
	o := d.Record(path, L.Get(2), traceOptionKeys)
	if v := o["block_tokens"]; v != nil {
		f.BlockTokens = d.Count(luaval.Child(path, "block_tokens"), v, 1)
	}
	if v := o["time_unit"]; v != nil {
		f.TimeUnit = d.Str(luaval.Child(path, "time_unit"), v)
	}
	if v := o["tokenizer"]; v != nil {
		tv.tokenizer = m.tokenizerOption(d, luaval.Child(path, "tokenizer"), v)
	}
	if v := o["salt"]; v != nil {
		tv.salt = d.salt(luaval.Child(path, "salt"), v)
	}
	for _, fld := range []struct {
		key string
		dst *string
	}{{"time", &f.Fields.Time}, {"input", &f.Fields.Input}, {"output", &f.Fields.Output},
		{"hash_ids", &f.Fields.HashIDs}, {"session", &f.Fields.Session}, {"text", &f.Fields.Text},
		{"messages", &f.Fields.Messages}} {
		if v := o[fld.key]; v != nil {
			if *fld.dst = d.Str(luaval.Child(path, fld.key), v); *fld.dst == "" {
				d.Errorf(luaval.Child(path, fld.key), "must name a field (not empty)")
			}
		}
	}
	if err := d.joined(); err != nil {
		L.RaiseError("%v", err)
	}
}

// salt reads a salt: a whole number, or a string hashed to one.
func (d *decoder) salt(path string, v lua.LValue) uint64 {
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

// traceSource reads a trace scenario's trace option.
func (d *decoder) traceSource(path string, v lua.LValue) *traceValue {
	if v == nil {
		d.Errorf(path, "required (e.g. trace = llm.trace.mooncake(\"data/trace.jsonl\"))")
		return nil
	}
	if ud, ok := v.(*lua.LUserData); ok {
		if tv, ok := ud.Value.(*traceValue); ok {
			return tv
		}
	}
	d.Errorf(path, "expected a trace made by llm.trace.mooncake, .bailian, .azure, .jsonl or .csv, got %s", v.Type())
	return nil
}

// trace reads a trace scenario: the trace to replay, which slice of it,
// how fast, and its VU pool.
func (d *decoder) trace(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	src := d.traceSource(luaval.Child(path, "trace"), f["trace"])
	var opts replayOptions
	if v := f["speedup"]; v != nil {
		opts.Speedup = d.PositiveNumber(luaval.Child(path, "speedup"), v)
	}
	if v := f["time_offset"]; v != nil {
		opts.TimeOffset, _ = d.Duration(luaval.Child(path, "time_offset"), v)
	}
	if v := f["limit"]; v != nil {
		opts.Limit = d.Count(luaval.Child(path, "limit"), v, 1)
	}
	if v := f["sessions"]; v != nil {
		opts.Sessions = d.Boolean(luaval.Child(path, "sessions"), v)
	}
	sc.TimeUnit = plan.DefaultTimeUnit
	d.vuPool(path, f, sc, "record", 0, 0)
	if src == nil {
		return
	}
	tr, err := src.trace.Replay(opts)
	if err != nil {
		d.Errorf(path, "%v", err)
		return
	}
	// The slice is kept for the report, which says which part of the file ran.
	tr.TimeOffset, tr.Limit = opts.TimeOffset, opts.Limit
	sc.Trace = tr
	d.traces = append(d.traces, &scenarioTrace{scenario: sc.Name, src: src, replay: tr})
	// One stage, the whole replay: it ends when the last record is due;
	// a one-record trace still gets a window to measure its request in.
	span := max(tr.Duration(), time1ms)
	sc.Stages = []plan.Stage{{Name: sc.Name, Duration: span,
		Rate: float64(len(tr.Arrivals)) / span.Seconds()}}
}

// prepareTraces makes each trace scenario's prompter, with the plan's
// tokenizer unless its loader named one, and spot-checks that the first
// records' prompts count what the trace says in that tokenizer.
func (d *decoder) prepareTraces(p plan.Plan) {
	for _, st := range d.traces {
		path := luaval.Child(luaval.Child("options.scenarios", st.scenario), "trace")
		tok := st.src.tokenizer
		if tok == "" {
			tok = p.Target.Tokenizer
		}
		if tok == "" || tok == "none" {
			tok = plan.DefaultTokenizer // prompts need a tokenizer to be built to length
		}
		pr, err := dataset.NewTracePrompter(tok, st.src.trace.Format.BlockTokens, st.src.salt)
		if err != nil {
			d.Errorf(path, "%v", err)
			continue
		}
		st.prompter = pr
		st.stats = replayStats(st.src.trace, st.replay)
		for _, a := range st.replay.Arrivals[:min(len(st.replay.Arrivals), 3)] {
			rec := &st.src.trace.Records[a.Record]
			if rec.Text != "" || rec.Messages != nil {
				continue
			}
			_, want := pr.Prompt(rec, a.Record)
			if got := pr.Check(rec, a.Record); got != want {
				d.Errorf(path, "record %d (line %d): a prompt built to %d tokens counts %d in %s; choose another tokenizer",
					a.Record, rec.Line, want, got, tok)
				break
			}
		}
	}
}

// replayStats describes the records a replay sends.
func replayStats(t *dataset.Trace, r *plan.Trace) dataset.TraceStats {
	if len(r.Arrivals) == len(t.Records) {
		return t.Stats()
	}
	sub := &dataset.Trace{Path: t.Path, Format: t.Format, Records: make([]dataset.TraceRecord, len(r.Arrivals))}
	for i, a := range r.Arrivals {
		sub.Records[i] = t.Records[a.Record]
	}
	return sub.Stats()
}

// report describes the replay for the run's result: its slice and pace,
// and the replayed records' lengths and prefix reuse.
func (st *scenarioTrace) report() result.Trace {
	r, s := st.replay, st.stats
	var span time.Duration
	if n := len(r.Arrivals); n > 0 {
		recs := st.src.trace.Records
		span = recs[r.Arrivals[n-1].Record].At - recs[r.Arrivals[0].Record].At
	}
	lengths := func(l dataset.Lengths) result.TraceLengths {
		return result.TraceLengths{Mean: l.Mean, P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max}
	}
	// The path as the script gave it, which the user knows, not as it
	// was opened (relative to the script's directory).
	source := st.src.name + " (" + st.src.trace.Format.Kind + ")"
	return result.Trace{Scenario: st.scenario, Source: source, Digest: r.Digest, Speedup: r.Speedup,
		TimeOffsetS: r.TimeOffset.Seconds(), Limit: r.Limit, Records: len(r.Arrivals),
		SpanS: span.Seconds(), DurationS: r.Duration().Seconds(), Sessions: s.Sessions, Conversations: r.Sessions > 0,
		Input: lengths(s.Input), Output: lengths(s.Output), BlockTokens: s.BlockTokens,
		UniqueBlocks: s.UniqueBlocks, WithHashIDs: s.WithHashIDs, PrefixReuse: s.PrefixReuse}
}

// recordTable is vu.record in a trace scenario's iteration: the record to
// replay and the request it describes.
func (v *vu) recordTable(a *plan.TraceArrival, st *scenarioTrace) *lua.LTable {
	L := v.L
	rec := &st.src.trace.Records[a.Record]
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
		prompt, n := st.prompter.Prompt(rec, a.Record)
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
