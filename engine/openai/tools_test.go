package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// toolNameChunk is OpenAI's first delta of a tool call: its id and name,
// and empty arguments.
func toolNameChunk(index int, id, name string) string {
	return ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + mustJSON(index) + `,"id":` + mustJSON(id) +
		`,"type":"function","function":{"name":` + mustJSON(name) + `,"arguments":""}}]},"finish_reason":null}]}`)
}

// toolArgsChunk is a later delta: a piece of the arguments.
func toolArgsChunk(index int, args string) string {
	return ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + mustJSON(index) +
		`,"function":{"arguments":` + mustJSON(args) + `}}]},"finish_reason":null}]}`)
}

// runBoth runs sc whole and one byte per write, and hands each result to
// check: a split at any byte must change nothing.
func runBoth(t *testing.T, sc script, req *engine.ChatRequest, check func(t *testing.T, r *engine.Result)) {
	t.Helper()
	for _, byteWise := range []bool{false, true} {
		name := "whole"
		if byteWise {
			name = "byte by byte"
		}
		t.Run(name, func(t *testing.T) {
			sc.byteWise = byteWise
			srv := serve(t, sc)
			check(t, testClient(t, srv.URL+"/v1").Chat(context.Background(), req))
		})
	}
}

func checkCalls(t *testing.T, r *engine.Result, want ...engine.ToolCall) {
	t.Helper()
	if !reflect.DeepEqual(r.ToolCalls, want) {
		t.Errorf("ToolCalls = %+v, want %+v", r.ToolCalls, want)
	}
}

// TestChatToolCallFirstToken: the delta naming a tool call carries no
// generated argument, so TTFT is at its first argument piece, and TTFC
// too (a tool call is the answer, not reasoning); the pieces are one call.
func TestChatToolCallFirstToken(t *testing.T) {
	const wait = 80 * time.Millisecond
	sc := script{steps: []step{{write: roleChunk()}, {write: toolNameChunk(0, "call_1", "get_weather")},
		{wait: wait, write: toolArgsChunk(0, `{"city":`)}, {write: toolArgsChunk(0, ` "Paris"}`)},
		{write: finishChunk("tool_calls")}, {write: usageChunk(7, 6)}, {write: done()}}}
	runBoth(t, sc, chatReq(), func(t *testing.T, r *engine.Result) {
		checkResult(t, r, want{status: 200, textEvents: 2, outputTokens: 6, source: engine.TokensFromUsage, client: 6,
			inputTokens: 7, inputSource: engine.TokensFromUsage, finish: "tool_calls", ttft: true, ttfc: true, e2e: true, streamed: true})
		checkCalls(t, r, engine.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`})
		if r.TTFT < wait {
			t.Errorf("TTFT = %v, want ≥ %v: the name delta is no token", r.TTFT, wait)
		}
		if r.TTFC != r.TTFT {
			t.Errorf("TTFC = %v, want TTFT %v", r.TTFC, r.TTFT)
		}
	})
}

// TestChatParallelToolCalls: interleaved pieces of two calls, told apart
// by their index; without usage the tokenizer counts their arguments.
func TestChatParallelToolCalls(t *testing.T) {
	sc := script{steps: steps(0, roleChunk(), toolNameChunk(0, "call_a", "search"), toolArgsChunk(0, `{"q":"go"`),
		toolNameChunk(1, "call_b", "lookup"), toolArgsChunk(1, `{"id":7}`), toolArgsChunk(0, `}`),
		finishChunk("tool_calls"), done())}
	runBoth(t, sc, chatReq(), func(t *testing.T, r *engine.Result) {
		checkCalls(t, r, engine.ToolCall{ID: "call_a", Name: "search", Arguments: `{"q":"go"}`},
			engine.ToolCall{ID: "call_b", Name: "lookup", Arguments: `{"id":7}`})
		if r.Err != nil || r.TokensSource != engine.TokensFromTokenizer || r.OutputTokens != r.ClientOutputTokens || r.OutputTokens < 3 {
			t.Errorf("Err %v, output tokens %d from %s (client %d), want the tokenizer's count of the arguments",
				r.Err, r.OutputTokens, r.TokensSource, r.ClientOutputTokens)
		}
	})
}

func TestChatToolCallNotStreamed(t *testing.T) {
	body := `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function",` +
		`"function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":5}}`
	srv := serve(t, script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, body)})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
	checkResult(t, r, want{status: 200, textEvents: 1, outputTokens: 5, source: engine.TokensFromUsage, client: 5,
		inputTokens: 9, inputSource: engine.TokensFromUsage, finish: "tool_calls", e2e: true})
	checkCalls(t, r, engine.ToolCall{ID: "call_9", Name: "get_time", Arguments: `{"tz":"UTC"}`})
}

// TestChatSendsTools: tools and tool_choice go out as given, and a
// tool-calling turn's messages in OpenAI's shape.
func TestChatSendsTools(t *testing.T) {
	got := make(chan sent, 1)
	srv := serve(t, recording(script{steps: steps(0, okStream("a")...)}, got))
	req := chatReq()
	req.Tools = []any{map[string]any{"type": "function", "function": map[string]any{"name": "f", "parameters": map[string]any{}}}}
	req.ToolChoice = "required"
	req.Messages = append(req.Messages,
		engine.Message{Role: "assistant", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
		engine.Message{Role: "tool", ToolCallID: "c1", Content: "42"})
	if r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req); r.Err != nil {
		t.Fatalf("Chat: %v", r.Err)
	}
	s := <-got
	for key, want := range map[string]string{
		"tools":       `[{"function":{"name":"f","parameters":{}},"type":"function"}]`,
		"tool_choice": `"required"`,
		"messages": `[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function",` +
			`"function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"42","tool_call_id":"c1"}]`,
	} {
		if got := string(s.body[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
}

func TestToolCallJSONRoundTrip(t *testing.T) {
	in := engine.ToolCall{ID: "c", Name: "n", Arguments: `{"a":1}`}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out engine.ToolCall
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip of %s = %+v (%v), want %+v", b, out, err, in)
	}
}
