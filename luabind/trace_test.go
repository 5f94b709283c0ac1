package luabind

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/tokenize"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// traceScript writes a trace file and a scenario replaying it.
func traceScript(t *testing.T, trace, loader, scenario string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(trace), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "local llm = require('llmload')\nlocal tr = " + loader + "\noptions = { scenarios = { replay = { executor = \"trace\", exec = \"replay\", trace = tr, " +
		scenario + " } } }\nfunction replay(vu) out = { record = vu.record } end\n"
	path := filepath.Join(dir, "s.lua")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const smallTrace = `{"timestamp": 1000, "input_length": 20, "output_length": 7, "hash_ids": [1, 2]}
{"timestamp": 1500, "input_length": 40, "output_length": 9, "hash_ids": [1, 2, 3], "session_id": "a"}
{"timestamp": 3000, "input_length": 5, "output_length": 0, "session_id": "a"}
{"timestamp": 3500, "text_input": "hello there", "output_length": 3}
`

func TestTraceScenarioPlan(t *testing.T) {
	path := traceScript(t, smallTrace, `llm.trace.mooncake("t.jsonl", { block_tokens = 16 })`,
		`speedup = 2, time_offset = "0.5s", limit = 2, sessions = true, pre_allocated_vus = 2, max_vus = 4`)
	s := mustCompile(t, path, Options{})
	sc := s.Plan().Scenarios[0]
	if sc.Trace == nil {
		t.Fatal("no trace in the plan")
	}
	want := []plan.TraceArrival{{At: 0, Record: 1, Session: 1}, {At: 750 * time.Millisecond, Record: 2, Session: 1}}
	if len(sc.Trace.Arrivals) != len(want) {
		t.Fatalf("arrivals = %+v, want %+v", sc.Trace.Arrivals, want)
	}
	for i, a := range sc.Trace.Arrivals {
		if a != want[i] {
			t.Errorf("arrival %d = %+v, want %+v", i, a, want[i])
		}
	}
	if len(sc.Stages) != 1 || sc.Stages[0].Name != "replay" || sc.Stages[0].Duration != 750*time.Millisecond {
		t.Errorf("stages = %+v, want one stage replay of 750ms", sc.Stages)
	}
	if sc.PreAllocatedVUs != 2 || sc.MaxVUsCap != 4 || sc.Trace.Speedup != 2 || sc.Trace.Digest == "" {
		t.Errorf("scenario = %+v, trace = %+v", sc, sc.Trace)
	}
	if got := s.Files(); len(got) != 1 || got[0] != "t.jsonl" {
		t.Errorf("Files() = %v, want the trace", got)
	}
}

func TestTraceRecordTable(t *testing.T) {
	path := traceScript(t, smallTrace, `llm.trace.mooncake("t.jsonl", { block_tokens = 16 })`, `pre_allocated_vus = 1`)
	s := mustCompile(t, path, Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	codec, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	prompts := map[int]string{}
	for _, a := range s.Plan().Scenarios[0].Trace.Arrivals {
		if err := v.RunIteration(testContext(t), engine.Iteration{Scenario: "replay", Stage: "replay", Exec: "replay", VUID: 1, Trace: &a}); err != nil {
			t.Fatal(err)
		}
		rec, ok := out(t, v, "record").(*lua.LTable)
		if !ok {
			t.Fatalf("record %d: vu.record is %s", a.Record, out(t, v, "record").Type())
		}
		get := func(k string) lua.LValue { return rec.RawGetString(k) }
		if int(lua.LVAsNumber(get("index"))) != a.Record || int(lua.LVAsNumber(get("line"))) != a.Record+1 {
			t.Errorf("record %d: index %v, line %v", a.Record, get("index"), get("line"))
		}
		prompt := lua.LVAsString(get("prompt"))
		prompts[a.Record] = prompt
		msgs, _ := get("messages").(*lua.LTable)
		if msgs == nil || msgs.Len() != 1 || lua.LVAsString(msgs.RawGetInt(1).(*lua.LTable).RawGetString("content")) != prompt {
			t.Errorf("record %d: messages %v do not carry the prompt", a.Record, get("messages"))
		}
		switch a.Record {
		case 0, 1:
			in := int(lua.LVAsNumber(get("input_length")))
			if n := codec.Count(prompt); n != in || int(lua.LVAsNumber(get("input_tokens"))) != in {
				t.Errorf("record %d: prompt of %d tokens (input_tokens %v), want %d", a.Record, n, get("input_tokens"), in)
			}
			if int(lua.LVAsNumber(get("max_tokens"))) != int(lua.LVAsNumber(get("output_length"))) {
				t.Errorf("record %d: max_tokens %v, output_length %v", a.Record, get("max_tokens"), get("output_length"))
			}
		case 2:
			if get("max_tokens") != lua.LNil || lua.LVAsString(get("session")) != "a" {
				t.Errorf("record 2: max_tokens %v (want none for output 0), session %v", get("max_tokens"), get("session"))
			}
		case 3:
			if prompt != "hello there" {
				t.Errorf("record 3: prompt %q, want the text as recorded", prompt)
			}
		}
	}
	// Records 0 and 1 share hash ids 1 and 2: 20 tokens of record 0 are
	// record 1's first 20, word for word; record 2 has no ids and shares nothing.
	w0, w1, w2 := strings.Fields(prompts[0]), strings.Fields(prompts[1]), strings.Fields(prompts[2])
	if strings.Join(w1[:20], " ") != strings.Join(w0, " ") {
		t.Errorf("records 0 and 1 share their blocks but not their prompts:\n%q\n%q", prompts[0], prompts[1])
	}
	if w2[0] == w0[0] && w2[1] == w0[1] {
		t.Errorf("record 2 (no ids) opens like record 0: %q, %q", prompts[2], prompts[0])
	}
}

func TestTraceScenarioErrors(t *testing.T) {
	tests := []struct{ name, trace, loader, scenario, want string }{
		{"no trace", smallTrace, `nil`, `pre_allocated_vus = 1`, "options.scenarios.replay.trace: required"},
		{"not a trace", smallTrace, `"t.jsonl"`, `pre_allocated_vus = 1`, "options.scenarios.replay.trace: expected a trace made by llm.trace.mooncake"},
		{"no vus", smallTrace, `llm.trace.mooncake("t.jsonl")`, ``, "options.scenarios.replay.pre_allocated_vus: required"},
		{"max below pre", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 4, max_vus = 2`, "max_vus: 2 is below pre_allocated_vus 4"},
		{"offset beyond", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, time_offset = "1h"`, "time_offset 1h0m0s is beyond the trace"},
		{"speedup zero", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, speedup = 0`, "options.scenarios.replay.speedup"},
		{"rate key", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, rate = 3`, "options.scenarios.replay.rate: not valid for executor trace"},
		{"bad record", `{"timestamp": 1, "input_length": -3, "output_length": 1}`, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1`, "t.jsonl:1: input_length"},
		{"missing file", smallTrace, `llm.trace.azure("nope.csv")`, `pre_allocated_vus = 1`, `llm.trace.azure("nope.csv")`},
		{"option typo", smallTrace, `llm.trace.mooncake("t.jsonl", { block_token = 16 })`, `pre_allocated_vus = 1`, "llm.trace.mooncake options.block_token: unknown key (did you mean block_tokens?)"},
		{"bad unit", smallTrace, `llm.trace.jsonl("t.jsonl", { time_unit = "h" })`, `pre_allocated_vus = 1`, `time_unit "h"`},
		{"empty field", smallTrace, `llm.trace.jsonl("t.jsonl", { input = "" })`, `pre_allocated_vus = 1`, "options.input: must name a field"},
		{"bad salt", smallTrace, `llm.trace.mooncake("t.jsonl", { salt = true })`, `pre_allocated_vus = 1`, "options.salt: expected a number or a string, got boolean"},
		{"tiny tokenizer", smallTrace, `llm.trace.mooncake("t.jsonl", { tokenizer = "p50k_base" })`, `pre_allocated_vus = 1, limit = 1`, ""},
		{"warm_turns without sessions or trees", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, warm_turns = 1`,
			"options.scenarios.replay.warm_turns: needs sessions = true, or a trace whose records form trees"},
		{"negative warm_turns", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, sessions = true, warm_turns = -1`,
			"options.scenarios.replay.warm_turns: must be ≥ 0, got -1"},
		{"warm_turns with sessions", smallTrace, `llm.trace.mooncake("t.jsonl")`, `pre_allocated_vus = 1, sessions = true, warm_turns = 1`, ""},
		{"warm_turns on trees", treeTrace, `llm.trace.jsonl("t.jsonl", { id = "rid", parent = "pid", delay = "gap" })`, `pre_allocated_vus = 1, warm_turns = 1`, ""},
		{"a tree's missing parent", treeTrace + `{"rid": "z", "pid": "nope", "gap": 1, "input_length": 4, "output_length": 1}`,
			`llm.trace.jsonl("t.jsonl", { id = "rid", parent = "pid", delay = "gap" })`, `pre_allocated_vus = 1`, `t.jsonl:4: pid: no record has id "nope"`},
		{"bad delay unit", treeTrace, `llm.trace.jsonl("t.jsonl", { id = "rid", parent = "pid", delay = "gap", delay_unit = "h" })`, `pre_allocated_vus = 1`, `delay_unit "h"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(traceScript(t, tt.trace, tt.loader, tt.scenario), Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// treeTrace is a root and two children, named by rid and pid, gaps in s.
const treeTrace = `{"rid": "a", "timestamp": 0, "input_length": 20, "output_length": 7}
{"rid": "b", "pid": "a", "gap": 1.5, "input_length": 40, "output_length": 9}
{"rid": "c", "pid": "a", "gap": 0.25, "input_length": 5, "output_length": 3}
`

func TestTraceTreeScenarioPlan(t *testing.T) {
	path := traceScript(t, treeTrace, `llm.trace.jsonl("t.jsonl", { id = "rid", parent = "pid", delay = "gap", delay_unit = "s" })`,
		`speedup = 0.5, warm_turns = 1, pre_allocated_vus = 2`)
	sc := mustCompile(t, path, Options{}).Plan().Scenarios[0]
	ms := time.Millisecond
	want := []plan.TraceArrival{{At: 0, Record: 0, Warm: true}, {At: 500 * ms, Record: 1, Parent: 1, Delay: 500 * ms},
		{At: 3000 * ms, Record: 2, Parent: 1, Delay: 3000 * ms}}
	if len(sc.Trace.Arrivals) != len(want) {
		t.Fatalf("arrivals = %+v, want %+v", sc.Trace.Arrivals, want)
	}
	for i, a := range sc.Trace.Arrivals {
		if a != want[i] {
			t.Errorf("arrival %d = %+v, want %+v", i, a, want[i])
		}
	}
	// The stage's planned window is the tree at instant answers; the
	// executor stretches it.
	if sc.Trace.Children != 2 || sc.Trace.WarmTurns != 1 || !sc.Trace.Stretches() || sc.Stages[0].Duration != 3*time.Second {
		t.Errorf("trace %+v, stage %+v: want 2 children, warm_turns 1, a 3s planned window", sc.Trace, sc.Stages[0])
	}
}

func TestTraceStats(t *testing.T) {
	path := writeScript(t, "s.lua", "")
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "t.jsonl"), []byte(smallTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `local llm = require('llmload')
local tr = llm.trace.mooncake("t.jsonl", { block_tokens = 16 })
local st = tr:stats()
out = { n = tr:len(), records = st.records, p50 = st.input_tokens.p50, sessions = st.sessions, reuse = st.prefix_reuse }
options = { vus = 1, duration = "1s" }
function iteration(vu) end
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustCompile(t, path, Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	// Record 1 opens with record 0's two blocks (ids 1 and 2, 16 tokens
	// each): 32 of the 20 + 40 + 5 input tokens of the records that give a
	// length; the others share nothing.
	// The input lengths' nearest-rank median of four records, the text
	// record's short one among them, is record 2's 5.
	for k, want := range map[string]float64{"n": 4, "records": 4, "sessions": 1, "p50": 5} {
		if got := float64(lua.LVAsNumber(out(t, v, k))); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if got, want := float64(lua.LVAsNumber(out(t, v, "reuse"))), 32.0/65; math.Abs(got-want) > 1e-9 {
		t.Errorf("prefix_reuse = %v, want 32/65 = %v", got, want)
	}
}
