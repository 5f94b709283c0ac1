package luabind

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

func apisVU(t *testing.T, result engine.Result) (*vm.VU, *fakeClient, *fakeSink) {
	t.Helper()
	s := mustCompile(t, "testdata/apis.lua", Options{})
	client := &fakeClient{result: result}
	sink := &fakeSink{}
	return newVU(t, s, api.RunnerConfig{Client: client, Sink: sink, Model: "default-model"}, 1), client, sink
}

func TestAPIRequests(t *testing.T) {
	temp, half, low := 0.0, 0.5, 0.2
	user := []engine.Message{{Role: "user", Content: "hi"}}
	tests := []struct {
		exec string
		want *engine.ChatRequest
	}{
		{"respond_full", &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: "other", Prompt: "hi", System: "Be brief.",
			MaxTokens: 20, Temperature: &temp, TopP: &half, NoStream: true, Tools: []any{map[string]any{"type": "function", "name": "f"}},
			ToolChoice: "auto", Extra: map[string]any{"reasoning": map[string]any{"effort": "low"}}, Tags: map[string]string{"kind": "r"}}},
		{"respond_messages", &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: "default-model", Messages: user}},
		{"messages_full", &engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: "default-model", Messages: user,
			System: "Be brief.", MaxTokens: 64, Stop: []string{"END"}, Temperature: &low,
			Tools:      []any{map[string]any{"name": "f", "input_schema": map[string]any{"type": "object"}}},
			ToolChoice: map[string]any{"type": "any"}}},
		{"embed_one", &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "default-model", Prompt: "hello"}},
		{"embed_many", &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "emb", Inputs: []string{"a", "b"},
			Extra: map[string]any{"dimensions": 64, "encoding_format": "base64"}, Tags: map[string]string{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.exec, func(t *testing.T) {
			v, client, _ := apisVU(t, engine.Result{Status: 200})
			mustRun(t, v, tt.exec)
			reqs := client.requests()
			if len(reqs) != 1 || !reflect.DeepEqual(reqs[0], tt.want) {
				got, _ := json.Marshal(reqs)
				w, _ := json.Marshal(tt.want)
				t.Errorf("requests =\n%s\nwant\n%s", got, w)
			}
		})
	}
}

func TestAPIRequestErrors(t *testing.T) {
	v, client, _ := apisVU(t, engine.Result{Status: 200})
	for exec, want := range map[string]string{
		"respond_no_input":   "llm.respond.input: required (a string, or a list of messages)",
		"respond_max_tokens": "llm.respond.max_tokens: unknown key (this API calls it max_output_tokens)",
		"respond_seed":       "llm.respond.seed: unknown key",
		"messages_no_max":    "llm.messages.max_tokens: required: the Messages API needs max_tokens",
		"embed_empty":        "llm.embed.input: needs at least one string",
		"embed_dirty":        "llm.embed.dirty: dirty-data kinds malform generation requests",
		"embed_stream":       "llm.embed.stream: unknown key",
		"tool_call_no_id":    "llm.chat.messages[1].tool_calls[1].id: required",
		"tools_not_list":     "llm.chat.tools: expected a list (table), got string",
	} {
		err := run(t, v, exec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want it to contain %q", exec, err, want)
		}
	}
	if n := len(client.requests()); n != 0 {
		t.Errorf("%d bad requests reached the client", n)
	}
}

// TestAgentTurn: a result's tool_calls go back in an assistant message,
// and the tool's answer with their id; the sample holds no calls.
func TestAgentTurn(t *testing.T) {
	calls := []engine.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	v, client, sink := apisVU(t, engine.Result{Status: 200, API: engine.EndpointChat, ToolCalls: calls})
	mustRun(t, v, "agent")
	reqs := client.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[0].ToolChoice != "required" || len(reqs[0].Tools) != 1 {
		t.Errorf("first request: tools %v, choice %v", reqs[0].Tools, reqs[0].ToolChoice)
	}
	want := []engine.Message{{Role: "user", Content: "Weather in Paris?"}, {Role: "assistant", ToolCalls: calls},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"}}
	if !reflect.DeepEqual(reqs[1].Messages, want) {
		t.Errorf("second turn = %+v, want %+v", reqs[1].Messages, want)
	}
	if got := out(t, v, "api"); got != lua.LString("chat") {
		t.Errorf("api = %v", got)
	}
	for _, s := range sink.all() {
		if len(s.ToolCalls) != 1 || s.ToolCalls[0] != (engine.ToolCall{}) || s.API != engine.EndpointChat {
			t.Errorf("sample keeps tool calls %v, api %q: want one call counted, its text dropped", s.ToolCalls, s.API)
		}
	}
}

func TestEmbedResult(t *testing.T) {
	v, _, _ := apisVU(t, engine.Result{Status: 200, API: engine.EndpointEmbeddings, Inputs: 2, Dimensions: 64, InputTokens: 5,
		InputTokensSource: engine.TokensFromUsage})
	mustRun(t, v, "embed_many")
	res, _ := v.L.GetGlobal("res").(*lua.LTable)
	for k, want := range map[string]lua.LValue{"api": lua.LString("embeddings"), "inputs": lua.LNumber(2),
		"dimensions": lua.LNumber(64), "input_tokens": lua.LNumber(5), "ttft_ms": lua.LNil, "tool_calls": lua.LNil} {
		if got := res.RawGetString(k); got != want {
			t.Errorf("res.%s = %v, want %v", k, got, want)
		}
	}
}

// TestDirtyOnTheNewAPIs: a forced kind malforms a Messages request; the
// drawn kinds of options.dirty leave embeddings clean.
func TestDirtyOnTheNewAPIs(t *testing.T) {
	v, client, sink := apisVU(t, engine.Result{Status: 400, Err: &engine.Error{Class: "http_4xx:400", Message: "bad role"}})
	mustRun(t, v, "messages_dirty")
	req := client.requests()[0]
	if req.Endpoint != engine.EndpointMessages || req.Messages[0].Role == "user" || sink.all()[0].Dirty != "bad_role" {
		t.Errorf("request %+v, sample dirty %q", req, sink.all()[0].Dirty)
	}
	src := `local llm = require("llmload")
options = { vus = 1, duration = "1s", dirty = { ratio = 1 } }
function iteration(vu) llm.embed { input = "x" } end
`
	s := mustCompile(t, writeScript(t, "e.lua", src), Options{})
	c := &fakeClient{result: engine.Result{Status: 200}}
	sk := &fakeSink{}
	ev := newVU(t, s, api.RunnerConfig{Client: c, Sink: sk}, 1)
	mustRun(t, ev, ShorthandExec)
	if got := sk.all()[0].Dirty; got != "" || c.requests()[0].Prompt != "x" {
		t.Errorf("embeddings sample dirty %q, input %q: want clean", got, c.requests()[0].Prompt)
	}
}

func TestScanAPIs(t *testing.T) {
	for src, want := range map[string][]string{
		`local llm = require("llmload") function f() llm.chat{} end`:                            nil,
		`local llm = require("llmload") function f() llm.complete{} llm.chat{} end`:             nil,
		`local x = require("llmload") function f() x.embed{} end`:                               {"embeddings"},
		`local llm = require("llmload") function f() llm.chat{} llm.respond{} end`:              {"chat", "responses"},
		`local llm = require("llmload") local m = llm.messages function f() m{} end`:            {"messages"},
		`local llm = require("llmload") function f(res) return res.messages, llm.conv end`:      nil,
		`local llm = require("llmload") function f() llm.conversation():send() llm.embed{} end`: {"chat", "embeddings"},
		`function f() llm.respond{} end`:                                                        {"responses"},
	} {
		chunk, err := parse.Parse(strings.NewReader(src), "t.lua")
		if err != nil {
			t.Fatal(err)
		}
		if got := scanAPIs(chunk); !reflect.DeepEqual(got, want) {
			t.Errorf("scanAPIs(%s) = %v, want %v", src, got, want)
		}
	}
	s := mustCompile(t, "testdata/apis.lua", Options{})
	if got, want := s.Plan().APIs, []string{"chat", "responses", "messages", "embeddings"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Plan().APIs = %v, want %v", got, want)
	}
}
