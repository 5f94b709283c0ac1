package luabind

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

func dataVU(t *testing.T, id int, result engine.Result) (*vm.VU, *fakeClient, *fakeSink) {
	t.Helper()
	return dirtyVU(t, id, result, "0")
}

// dirtyVU is dataVU with options.dirty.ratio set to ratio.
func dirtyVU(t *testing.T, id int, result engine.Result, ratio string) (*vm.VU, *fakeClient, *fakeSink) {
	t.Helper()
	s := mustCompile(t, "testdata/data.lua", Options{Seed: 42, Params: map[string]string{"dirty": ratio}})
	client := &fakeClient{result: result}
	sink := &fakeSink{}
	return newVU(t, s, api.RunnerConfig{Client: client, Sink: sink, Model: "m"}, id), client, sink
}

func TestDataPools(t *testing.T) {
	v, _, _ := dataVU(t, 1, engine.Result{Status: 200})
	mustRun(t, v, "pools")
	want := map[string]lua.LValue{
		"text": lua.LString("What is machine learning?"), "text_len": lua.LNumber(3), "short_len": lua.LNumber(2),
		"jsonl": lua.LString("question one"), "first": lua.LString("Hello"), "csv": lua.LString("csv one"),
		"inline": lua.LString("x"),
	}
	for k, w := range want {
		if got := out(t, v, k); got != w {
			t.Errorf("out.%s = %v, want %v", k, got, w)
		}
	}
	conv, ok := out(t, v, "conv").(*lua.LTable)
	if !ok {
		t.Fatalf("out.conv = %v, want a messages table", out(t, v, "conv"))
	}
	if got, want := luaMessages(t, conv), []engine.Message{{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "Hello"}, {Role: "assistant", Content: "Hi."}, {Role: "user", Content: "How are you?"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("conversation = %+v, want %+v", got, want)
	}
}

// luaMessages decodes a messages table with llm.chat's own decoder.
func luaMessages(t *testing.T, tbl *lua.LTable) []engine.Message {
	t.Helper()
	d := &api.ArgDecoder{}
	msgs := d.Messages("messages", tbl)
	if err := d.Joined(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestPoolCursorPerVU(t *testing.T) {
	for id, want := range map[int]string{1: "What is machine learning?", 2: "Explain the theory", 3: "Hi", 4: "What is"} {
		v, _, _ := dataVU(t, id, engine.Result{Status: 200})
		mustRun(t, v, "pools")
		if got := out(t, v, "text").String(); !strings.HasPrefix(got, want) {
			t.Errorf("VU %d: first item %q, want it to start with %q", id, got, want)
		}
	}
}

func TestSynthetic(t *testing.T) {
	prompts := make([]string, 2)
	for i := range prompts {
		v, client, _ := dataVU(t, 1, engine.Result{Status: 200})
		mustRun(t, v, "synthetic")
		prompts[i] = out(t, v, "prompt").String()
		if got := prompts[i]; !strings.HasPrefix(got, "[req_7] ") {
			t.Errorf("prompt %q, want the unique prefix [req_7] first", got)
		}
		if got, want := out(t, v, "max_tokens"), lua.LNumber(16); got != want {
			t.Errorf("max_tokens = %v, want %v", got, want)
		}
		if n, ok := out(t, v, "input_tokens").(lua.LNumber); !ok || n < 1 {
			t.Errorf("input_tokens = %v, want a positive number", out(t, v, "input_tokens"))
		}
		if got, want := out(t, v, "dist").String(), "normal"; !strings.Contains(got, want) {
			t.Errorf("tostring(dist) = %q, want it to name %s", got, want)
		}
		req := client.requests()[0]
		if !req.IgnoreEOS || req.MinTokens != 16 || req.MaxTokens != 16 {
			t.Errorf("request ignore_eos=%v min_tokens=%d max_tokens=%d, want true, 16, 16", req.IgnoreEOS, req.MinTokens, req.MaxTokens)
		}
	}
	if prompts[0] != prompts[1] {
		t.Errorf("same seed and VU gave different prompts:\n%q\n%q", prompts[0], prompts[1])
	}
}

func TestConversation(t *testing.T) {
	v, client, sink := dataVU(t, 1, engine.Result{Status: 200, Text: "answer"})
	mustRun(t, v, "conversation")
	reqs := client.requests()
	if got, want := len(reqs), 2; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
	want := []engine.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"},
		{Role: "assistant", Content: "answer"}, {Role: "user", Content: "and then?"}}
	if got := reqs[1].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("turn 2 sent %+v, want %+v", got, want)
	}
	if got, want := len(reqs[0].Messages), 2; got != want {
		t.Errorf("turn 1 sent %d messages, want %d", got, want)
	}
	samples := sink.all()
	wantTags := []map[string]string{{"flow": "chat", "turn": "1"}, {"flow": "chat", "turn": "2", "extra": "1"}}
	for i, s := range samples {
		if !reflect.DeepEqual(s.Tags, wantTags[i]) {
			t.Errorf("sample %d tags = %v, want %v", i, s.Tags, wantTags[i])
		}
	}
	if got, want := out(t, v, "turns"), lua.LNumber(2); got != want {
		t.Errorf("turns = %v, want %v", got, want)
	}
	if got, want := len(luaMessages(t, out(t, v, "messages").(*lua.LTable))), 5; got != want {
		t.Errorf("history has %d messages, want %d", got, want)
	}
}

func TestConversationFailedTurn(t *testing.T) {
	v, client, _ := dataVU(t, 1, engine.Result{Status: 500, Err: &engine.Error{Class: "http_5xx:500", Message: "boom"}})
	mustRun(t, v, "conversation")
	// Nothing answered, so the second turn still carries the first question.
	want := []engine.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"},
		{Role: "user", Content: "and then?"}}
	if got := client.requests()[1].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed turn sent %+v, want %+v", got, want)
	}
	if got, want := out(t, v, "turns"), lua.LNumber(0); got != want {
		t.Errorf("turns = %v, want %v", got, want)
	}
}

func TestConversationReplay(t *testing.T) {
	v, client, sink := dataVU(t, 1, engine.Result{Status: 200, Text: "live"})
	mustRun(t, v, "replay")
	if got, want := out(t, v, "sent"), lua.LNumber(2); got != want {
		t.Fatalf("replayed %v turns, want %v", got, want)
	}
	want := []engine.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Hello"},
		{Role: "assistant", Content: "live"}, {Role: "user", Content: "How are you?"}}
	if got := client.requests()[1].Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("replayed turn 2 sent %+v, want %+v", got, want)
	}
	for i, s := range sink.all() {
		if got, want := s.Tags["turn"], fmt.Sprint(i+1); got != want {
			t.Errorf("sample %d turn = %q, want %q", i, got, want)
		}
	}
}

func TestDirtyRatio(t *testing.T) {
	v, client, sink := dirtyVU(t, 1, engine.Result{Status: 400, Err: &engine.Error{Class: "http_4xx:400", Message: "bad"}}, "0.5")
	mustRun(t, v, "chat_many")
	counts := map[string]int{}
	for _, s := range sink.all() {
		counts[s.Dirty]++
		if got, want := s.Tags["dirty"], s.Dirty; got != want {
			t.Errorf("sample tag dirty = %q, want %q", got, want)
		}
	}
	if got := counts["empty"] + counts["overlong"]; got < 60 || got > 140 {
		t.Errorf("%d of 200 requests dirty at ratio 0.5, want about 100", got)
	}
	if counts["empty"] == 0 || counts["overlong"] <= counts["empty"] {
		t.Errorf("kinds %v, want overlong (weight 3) more often than empty (weight 1), both present", counts)
	}
	if got, want := len(counts), 3; got != want {
		t.Errorf("kinds %v, want only clean, empty and overlong", counts)
	}
	for _, req := range client.requests() {
		if req.Tags["dirty"] == "" && req.Messages[0].Content != "hi" {
			t.Errorf("clean request was changed: %+v", req.Messages)
		}
	}
}

// TestDirtyCompletions checks that a drawn kind which only a chat request
// can express leaves a completion clean instead of failing the iteration,
// while a forced one is the script's error.
func TestDirtyCompletions(t *testing.T) {
	path := writeScript(t, "x.lua", `local llm = require("llmload")
options = { vus = 1, duration = "1s", dirty = { ratio = 1, kinds = { no_messages = 1 } } }
function iteration(vu) end
function complete(vu) llm.complete { prompt = "p" } end
function chat(vu) llm.chat { messages = { { role = "user", content = "x" } } } end`)
	sink := &fakeSink{}
	cv := newVU(t, mustCompile(t, path, Options{}), api.RunnerConfig{Client: &fakeClient{}, Sink: sink}, 1)
	mustRun(t, cv, "complete")
	mustRun(t, cv, "chat")
	if got, want := len(sink.all()), 2; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	if got, want := sink.all()[0].Dirty, ""; got != want {
		t.Errorf("completion dirty = %q, want %q (left clean)", got, want)
	}
	if got, want := sink.all()[1].Dirty, "no_messages"; got != want {
		t.Errorf("chat dirty = %q, want %q", got, want)
	}
	v, _, _ := dataVU(t, 1, engine.Result{Status: 400})
	err := run(t, v, "forced_chat_only")
	if err == nil || !strings.Contains(err.Error(), "no_messages") {
		t.Errorf("forced chat-only kind on a completion: error = %v, want one naming no_messages", err)
	}
}

func TestDirtyNotInWarmup(t *testing.T) {
	v, _, sink := dirtyVU(t, 1, engine.Result{Status: 200}, "1")
	err := v.RunIteration(testContext(t), engine.Iteration{Scenario: "s", Stage: "st", Exec: "chat_many", VUID: 1, Warmup: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sink.all() {
		if s.Dirty != "" {
			t.Fatalf("warmup request made dirty (%s)", s.Dirty)
		}
	}
}

func TestDirtyForced(t *testing.T) {
	v, client, sink := dataVU(t, 1, engine.Result{Status: 400})
	mustRun(t, v, "forced")
	samples := sink.all()
	if got, want := len(samples), 2; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	if got, want := samples[0].Dirty, "malformed_json"; got != want {
		t.Errorf("forced kind = %q, want %q", got, want)
	}
	if got, want := samples[0].Tags, map[string]string{"k": "v", "dirty": "malformed_json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tags = %v, want %v", got, want)
	}
	if got := client.requests()[0].Raw; len(got) == 0 {
		t.Error("malformed_json sent no raw body")
	}
	if got, want := samples[1].Dirty, "overlong"; got != want {
		t.Errorf("llm.dirty.apply kind = %q, want %q", got, want)
	}
}

func TestDirtyKinds(t *testing.T) {
	v, _, _ := dataVU(t, 1, engine.Result{Status: 200})
	mustRun(t, v, "kinds")
	kinds := out(t, v, "kinds").(*lua.LTable)
	if kinds.Len() < 3 {
		t.Fatalf("%d kinds, want several", kinds.Len())
	}
	for i := 1; i <= kinds.Len(); i++ {
		k := kinds.RawGetInt(i).(*lua.LTable)
		for _, f := range []string{"name", "sends", "healthy"} {
			if s, ok := k.RawGetString(f).(lua.LString); !ok || s == "" {
				t.Errorf("kind %d: %s = %v, want a string", i, f, k.RawGetString(f))
			}
		}
	}
}

func TestScriptDirty(t *testing.T) {
	s := mustCompile(t, "testdata/data.lua", Options{Params: map[string]string{"dirty": "0.5"}})
	ratio, kinds := s.Dirty()
	if got, want := ratio, 0.5; got != want {
		t.Errorf("ratio = %v, want %v", got, want)
	}
	if got, want := kinds, map[string]float64{"empty": 1, "overlong": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("kinds = %v, want %v", got, want)
	}
	kinds["empty"] = 9
	if _, again := s.Dirty(); again["empty"] != 1 {
		t.Error("Dirty returned the script's own map")
	}
	path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", dirty = { ratio = 0.2 } }`))
	_, all := mustCompile(t, path, Options{}).Dirty()
	if got, want := len(all), 3; got < want {
		t.Errorf("kinds omitted gave %d kinds, want every kind", got)
	}
	if ratio, kinds := mustCompile(t, writeScript(t, "y.lua", script(`{ vus = 1, duration = "1s" }`)), Options{}).Dirty(); ratio != 0 || kinds != nil {
		t.Errorf("no options.dirty: Dirty() = %v, %v, want 0, nil", ratio, kinds)
	}
}

func TestDataRuntimeErrors(t *testing.T) {
	v, _, _ := dataVU(t, 1, engine.Result{Status: 200})
	cases := map[string]string{
		"send_without_user":  "conv:send: the last message is not the user's",
		"send_with_messages": "conv:send: messages come from the conversation",
		"conversation_typo":  "llm.conversation.sytem: unknown key (did you mean system?)",
		"bad_forced":         `llm.chat.dirty: unknown dirty-data kind "emtpy" (did you mean empty?)`,
		"bad_apply":          `unknown dirty-data kind "nope"`,
		"bad_min_tokens":     "llm.chat.min_tokens: must be ≥ 0, got -1",
		"bad_ignore_eos":     "llm.chat.ignore_eos: expected boolean, got number",
		"synthetic_no_input": "llm.synthetic.input_tokens: required",
		"synthetic_not_dist": "llm.synthetic.input_tokens: expected a distribution",
		"synthetic_dot_call": "synthetic generator expected",
	}
	for exec, want := range cases {
		err := run(t, v, exec)
		if err == nil {
			t.Errorf("%s: no error, want one containing %q", exec, want)
			continue
		}
		if got := err.Error(); !strings.Contains(got, want) || !strings.HasPrefix(got, "testdata/data.lua:") {
			t.Errorf("%s: error = %q, want testdata/data.lua:<line>: ...%s...", exec, got, want)
		}
	}
}

// TestDataInitErrors checks that bad data and bad arguments fail Compile,
// before any load, with the script's file and line.
func TestDataInitErrors(t *testing.T) {
	abs := func(name string) string {
		p, err := filepath.Abs(filepath.Join("testdata", "data", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, line, want string
	}{
		{"missing file", `llm.pool.text("nope.txt")`, "nope.txt"},
		{"jsonl not json", fmt.Sprintf(`llm.pool.jsonl(%q)`, abs("bad.jsonl")), "bad.jsonl:2"},
		{"jsonl absent field", fmt.Sprintf(`llm.pool.jsonl(%q, { field = "answer" })`, abs("prompts.jsonl")), "answer"},
		{"sharegpt shape", fmt.Sprintf(`llm.pool.sharegpt(%q)`, abs("bad_sharegpt.json")), "bad_sharegpt.json"},
		{"empty file", fmt.Sprintf(`llm.pool.text(%q)`, abs("empty.txt")), "empty.txt"},
		{"filter empties pool", fmt.Sprintf(`llm.pool.text(%q, { min_tokens = 1000 })`, abs("prompts.txt")), "≥ 1000"},
		{"min above max", fmt.Sprintf(`llm.pool.text(%q, { min_tokens = 9, max_tokens = 3 })`, abs("prompts.txt")), "min_tokens (9) must be ≤ max_tokens (3)"},
		{"option typo", fmt.Sprintf(`llm.pool.jsonl(%q, { feild = "q" })`, abs("prompts.jsonl")), "llm.pool.jsonl options.feild: unknown key (did you mean field?)"},
		{"option of another format", fmt.Sprintf(`llm.pool.text(%q, { column = "q" })`, abs("prompts.txt")), "options.column: unknown key"},
		{"filter without tokenizer", fmt.Sprintf(`llm.pool.text(%q, { max_tokens = 3, tokenizer = "none" })`, abs("prompts.txt")), `need a tokenizer, not "none"`},
		{"inline empty", `llm.pool {}`, "llm.pool needs at least one string"},
		{"negative mean", `llm.dist.normal(-5, 1)`, "llm.dist.normal:"},
		{"lognormal zero mean", `llm.dist.lognormal(0, 1)`, "llm.dist.lognormal:"},
		{"uniform reversed", `llm.dist.uniform(9, 3)`, "llm.dist.uniform:"},
		{"negative fixed", `llm.dist.fixed(-1)`, "llm.dist.fixed:"},
		{"dist not a number", `llm.dist.fixed("x")`, "number expected"},
		{"synthetic typo", `llm.synthetic { input_tokens = llm.dist.fixed(1), output_tokens = llm.dist.fixed(1), prefix = 3 }`,
			"llm.synthetic.prefix: unknown key (valid keys: input_tokens,"},
		{"synthetic bad tokenizer", `llm.synthetic { input_tokens = llm.dist.fixed(1), output_tokens = llm.dist.fixed(1), tokenizer = "gpt9" }`,
			`llm.synthetic.tokenizer: unknown tokenizer "gpt9"`},
		{"prefix_hit of 1", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), prefix_hit = 1 }`,
			"llm.synthetic.prefix_hit: must be a share in [0, 1) of each prompt's tokens (0.6 for 60%), got 1"},
		{"prefix_hit negative", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), prefix_hit = -0.5 }`,
			"llm.synthetic.prefix_hit: must be a share in [0, 1) of each prompt's tokens (0.6 for 60%), got -0.5"},
		{"prefix_hit in percent", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), prefix_hit = 60 }`,
			"llm.synthetic.prefix_hit: must be a share in [0, 1)"},
		{"prefix_hit not a number", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), prefix_hit = "60%" }`,
			"llm.synthetic.prefix_hit: expected number, got string"},
		{"prefix_hit with prefix_tokens", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), prefix_tokens = 4, prefix_hit = 0.6 }`,
			"llm.synthetic.prefix_tokens: cannot be set with prefix_hit"},
		{"prefix_hit with unique_prefix", `llm.synthetic { input_tokens = llm.dist.fixed(9), output_tokens = llm.dist.fixed(1), unique_prefix = true, prefix_hit = 0.6 }`,
			"llm.synthetic.unique_prefix: cannot be true with prefix_hit"},
		{"prefix_hit on a pool", fmt.Sprintf(`llm.pool.text(%q, { prefix_hit = 0.6 })`, abs("prompts.txt")),
			"options.prefix_hit: unknown key (prefix_hit is an option of llm.synthetic only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n" + tt.line + "\n"
			path := writeScript(t, "x.lua", src)
			_, err := Compile(path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want an error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) || !strings.HasPrefix(got, path+":4:") {
				t.Errorf("error = %q, want %s:4: ...%s...", got, path, tt.want)
			}
		})
	}
}

func TestPoolPathRelativeToScript(t *testing.T) {
	// Compile from another working directory's view: the path is the
	// script's, not the process's.
	path, err := filepath.Abs("testdata/data.lua")
	if err != nil {
		t.Fatal(err)
	}
	s := mustCompile(t, path, Options{})
	v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{}}, 1)
	mustRun(t, v, "pools")
	if got, want := out(t, v, "jsonl"), lua.LString("question one"); got != want {
		t.Errorf("jsonl item = %v, want %v", got, want)
	}
}

// TestDirtyMediaKindsOnlyWithMedia: a mix of every kind (kinds omitted)
// sends the media kinds only in requests that carry media, so a text
// model's run gets no images; named, they apply to any chat request.
func TestDirtyMediaKindsOnlyWithMedia(t *testing.T) {
	path := writeScript(t, "x.lua", `local llm = require("llmload")
options = { vus = 1, duration = "1s", dirty = { ratio = 1 } }
local img = llm.synthetic.image { width = 16, height = 16, variants = 1 }
function iteration(vu) end
function text(vu) for i = 1, 300 do llm.chat { messages = { { role = "user", content = "x" } } } end end
function vision(vu)
  for i = 1, 300 do
    llm.chat { messages = { { role = "user", content = { { type = "text", text = "x" }, { type = "image", image = img } } } } }
  end
end`)
	sink := &fakeSink{}
	v := newVU(t, mustCompile(t, path, Options{}), api.RunnerConfig{Client: &fakeClient{}, Sink: sink}, 1)
	mustRun(t, v, "text")
	for _, s := range sink.all() {
		if dirty.IsMedia(s.Dirty) {
			t.Fatalf("a text request got the media kind %s", s.Dirty)
		}
	}
	n := len(sink.all())
	mustRun(t, v, "vision")
	media := 0
	for _, s := range sink.all()[n:] {
		if dirty.IsMedia(s.Dirty) {
			media++
		}
	}
	if media == 0 {
		t.Error("no request with an image got a media kind")
	}
}

// An agent's conversation keeps the answer's tool calls and the tool's
// answers, so each turn re-sends the grown context, and a fork goes on
// from the shared history on its own.
func TestConversationAgent(t *testing.T) {
	call := engine.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	v, client, sink := dataVU(t, 1, engine.Result{Status: 200, ToolCalls: []engine.ToolCall{call}})
	mustRun(t, v, "agent")
	reqs := client.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if len(reqs[0].Tools) != 1 || reqs[0].ToolChoice != "auto" || reqs[1].Tools != nil {
		t.Errorf("tools %v (choice %v), then %v; want the one tool on the first turn only", reqs[0].Tools, reqs[0].ToolChoice, reqs[1].Tools)
	}
	answered := []engine.Message{{Role: "system", Content: "agent"}, {Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []engine.ToolCall{call}}, {Role: "tool", ToolCallID: "call_1", Content: `{"t": 21}`}}
	if got := reqs[1].Messages; !reflect.DeepEqual(got, answered) {
		t.Errorf("turn 2 sent %+v\nwant %+v", got, answered)
	}
	sub := luaMessages(t, out(t, v, "sub_messages").(*lua.LTable))
	if want := append(slices.Clone(answered), engine.Message{Role: "user", Content: "and tomorrow?"}); !reflect.DeepEqual(sub, want) {
		t.Errorf("the fork holds %+v\nwant %+v", sub, want)
	}
	if got := len(luaMessages(t, out(t, v, "messages").(*lua.LTable))); got != 6 {
		t.Errorf("the parent holds %d messages, want 6 (the fork's user message is not in it)", got)
	}
	if out(t, v, "turns") != lua.LNumber(2) || out(t, v, "sub_turns") != lua.LNumber(1) {
		t.Errorf("turns %v, the fork's %v; want 2 and 1", out(t, v, "turns"), out(t, v, "sub_turns"))
	}
	for i, s := range sink.all() {
		if want := map[string]string{"flow": "agent", "turn": strconv.Itoa(i + 1)}; !reflect.DeepEqual(s.Tags, want) {
			t.Errorf("sample %d tags %v, want %v", i, s.Tags, want)
		}
	}
}

func TestConversationToolErrors(t *testing.T) {
	v, _, _ := dataVU(t, 1, engine.Result{Status: 200, ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "f"}}})
	for exec, want := range map[string]string{
		"tool_unknown_call":       `conv:tool: the last answer made no unanswered call "nope" (its calls: "call_1")`,
		"tool_twice":              `conv:tool: the last answer made no unanswered call "call_1"`,
		"tool_without_call":       "conv:tool: the last answer made no tool call to answer",
		"user_before_tool_answer": `conv:user: the last answer's tool calls "call_1" are not answered yet`,
		"tool_bad_call":           "a tool call (an entry of the result's tool_calls) has a string id",
	} {
		err := run(t, v, exec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", exec, err, want)
		}
	}
}
