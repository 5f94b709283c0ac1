package luabind

import (
	"time"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// replayOptions are a trace scenario's slice and pace.
type replayOptions = dataset.ReplayOptions

// time1ms is the shortest window a trace stage gets.
const time1ms = time.Millisecond

// traceSource reads a trace scenario's trace option.
func (d *decoder) traceSource(path string, v lua.LValue) *api.TraceValue {
	if v == nil {
		d.Errorf(path, "required (e.g. trace = llm.trace.mooncake(\"data/trace.jsonl\"))")
		return nil
	}
	if ud, ok := v.(*lua.LUserData); ok {
		if tv, ok := ud.Value.(*api.TraceValue); ok {
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
	if v := f["warm_turns"]; v != nil {
		opts.WarmTurns = d.Count(luaval.Child(path, "warm_turns"), v, 0)
	}
	sc.TimeUnit = plan.DefaultTimeUnit
	d.vuPool(path, f, sc, "record", 0, 0)
	if src == nil {
		return
	}
	if opts.WarmTurns > 0 && !opts.Sessions && src.Trace.Children == 0 {
		// Nothing says which turn a record is: no session, no tree.
		d.Errorf(luaval.Child(path, "warm_turns"), "needs sessions = true, or a trace whose records form trees (parent and delay fields), to say which turns come first")
		return
	}
	tr, err := src.Trace.Replay(opts)
	if err != nil {
		d.Errorf(path, "%v", err)
		return
	}
	// The slice is kept for the report, which says which part of the file ran.
	tr.TimeOffset, tr.Limit = opts.TimeOffset, opts.Limit
	sc.Trace = tr
	d.traces = append(d.traces, &api.ScenarioTrace{Scenario: sc.Name, Src: src, Replay: tr})
	// One stage, the whole replay: it ends when the last record is due
	// (a trace of trees: at the earliest, when every answer is instant;
	// the executor stretches it until the last record has run); a
	// one-record trace still gets a window to measure its request in.
	span := max(tr.Duration(), time1ms)
	sc.Stages = []plan.Stage{{Name: sc.Name, Duration: span,
		Rate: float64(len(tr.Arrivals)) / span.Seconds()}}
}

// prepareTraces makes each trace scenario's prompter, with the plan's
// tokenizer unless its loader named one, and spot-checks that the first
// records' prompts count what the trace says in that tokenizer.
func (d *decoder) prepareTraces(p plan.Plan) {
	for _, st := range d.traces {
		path := luaval.Child(luaval.Child("options.scenarios", st.Scenario), "trace")
		tok := st.Src.Tokenizer
		if tok == "" {
			tok = p.Target.Tokenizer
		}
		if tok == "" || tok == "none" {
			tok = plan.DefaultTokenizer // prompts need a tokenizer to be built to length
		}
		pr, err := dataset.NewTracePrompter(tok, st.Src.Trace.Format.BlockTokens, st.Src.Salt)
		if err != nil {
			d.Errorf(path, "%v", err)
			continue
		}
		st.Prompter = pr
		st.Stats = replayStats(st.Src.Trace, st.Replay)
		for _, a := range st.Replay.Arrivals[:min(len(st.Replay.Arrivals), 3)] {
			rec := &st.Src.Trace.Records[a.Record]
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
func traceReport(st *api.ScenarioTrace) result.Trace {
	r, s := st.Replay, st.Stats
	var span time.Duration
	if n := len(r.Arrivals); n > 0 {
		recs := st.Src.Trace.Records
		span = recs[r.Arrivals[n-1].Record].At - recs[r.Arrivals[0].Record].At
	}
	lengths := func(l dataset.Lengths) result.TraceLengths {
		return result.TraceLengths{Mean: l.Mean, P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max}
	}
	// The path as the script gave it, which the user knows, not as it
	// was opened (relative to the script's directory).
	source := st.Src.Name + " (" + st.Src.Trace.Format.Kind + ")"
	return result.Trace{Scenario: st.Scenario, Source: source, Digest: r.Digest, Speedup: r.Speedup,
		TimeOffsetS: r.TimeOffset.Seconds(), Limit: r.Limit, Records: len(r.Arrivals),
		SpanS: span.Seconds(), DurationS: r.Duration().Seconds(), Sessions: s.Sessions, Conversations: r.Sessions > 0,
		Children: r.Children, WarmTurns: r.WarmTurns,
		Input: lengths(s.Input), Output: lengths(s.Output), BlockTokens: s.BlockTokens,
		UniqueBlocks: s.UniqueBlocks, WithHashIDs: s.WithHashIDs, PrefixReuse: s.PrefixReuse}
}
