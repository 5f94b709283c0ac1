package openai

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// Responses events in the shape OpenAI and vLLM send them: an event line
// naming the type, and the type again in the data.
func rev(typ, fields string) string {
	data := `{"type":"` + typ + `","sequence_number":1`
	if fields != "" {
		data += "," + fields
	}
	return "event: " + typ + "\ndata: " + data + "}\n\n"
}

func rText(s string) string {
	return rev("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":`+mustJSON(s))
}

func rReasoning(typ, s string) string {
	return rev(typ, `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":`+mustJSON(s))
}

// rEnd ends a response with status and usage.
func rEnd(typ, status, extra string, input, output, reasoning int) string {
	return rev(typ, fmt.Sprintf(`"response":{"id":"resp_1","object":"response","status":%q%s,"output":[],`+
		`"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,`+
		`"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`, status, extra, input, output, reasoning, input+output))
}

// rHead is what a response stream starts with before any text.
func rHead() []string {
	return []string{rev("response.created", `"response":{"id":"resp_1","status":"in_progress","output":[]}`),
		rev("response.in_progress", `"response":{"id":"resp_1","status":"in_progress"}`),
		rev("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}`),
		rev("response.content_part.added", `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}`)}
}

func respondReq() *engine.ChatRequest {
	return &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: "m", Prompt: "hi", MaxTokens: 16}
}

// responsesCases are Responses streams; only the end carries usage, so a
// failed stream's input tokens are the tokenizer's.
func responsesCases() map[string]streamCase {
	ok := func(text string, events, tokens, client int) want { return streamedOK(text, events, tokens, client, 7) }
	failed := func(class, message, text string, events int) want {
		return streamedFailed(class, message, text, events, 1, engine.TokensFromTokenizer)
	}
	hello := append(rHead(), rText("Hello"), rText(","), rText(" world"),
		rev("response.output_text.done", `"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello, world"`))
	return map[string]streamCase{
		"complete stream": {
			script: script{steps: steps(time.Millisecond, append(hello, rEnd("response.completed", "completed", "", 7, 3, 0))...)},
			want:   ok("Hello, world", 3, 3, 3),
		},
		"no event lines, empty delta and keep-alives": {
			script: script{steps: steps(0, "data: "+strings.TrimPrefix(rText(""), "event: response.output_text.delta\ndata: "),
				": keep-alive\n\n", rText("a"), "data: {\"type\":\"response.output_text.delta\",\"delta\":\"b\"}\n\n",
				rEnd("response.completed", "completed", "", 7, 2, 0))},
			want: ok("ab", 2, 2, 1),
		},
		"reasoning counts for TTFT, not TTFC": {
			script: script{steps: steps(time.Millisecond, append(rHead(), rReasoning("response.reasoning_summary_text.delta", "think"),
				rReasoning("response.reasoning_text.delta", " more"), rText("answer"),
				rEnd("response.completed", "completed", "", 7, 9, 6))...)},
			want: func() want { w := ok("answer", 3, 9, 3); w.reasoning = 6; return w }(),
		},
		"the older reasoning_summary.delta object is no text": {
			script: script{steps: steps(0, rev("response.reasoning_summary.delta", `"delta":{"text":"x"}`), rText("a"),
				rEnd("response.completed", "completed", "", 7, 1, 0))},
			want: ok("a", 1, 1, 1),
		},
		"function call": {
			script: script{steps: steps(0,
				rev("response.output_item.added", `"output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"get_weather","arguments":""}`),
				rev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"{\"city\":"`),
				rev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"\"Paris\"}"`),
				rEnd("response.completed", "completed", "", 7, 6, 0))},
			want:  func() want { w := ok("", 2, 6, 5); w.finish = "tool_calls"; return w }(),
			calls: []engine.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		},
		"incomplete at max_output_tokens": {
			script: script{steps: steps(0, append(hello, rEnd("response.incomplete", "incomplete",
				`,"incomplete_details":{"reason":"max_output_tokens"}`, 7, 3, 0))...)},
			want: func() want { w := ok("Hello, world", 3, 3, 3); w.finish = "length"; return w }(),
		},
		"cut last event": {
			script: script{steps: steps(0, rText("a"), strings.TrimSuffix(rEnd("response.completed", "completed", "", 7, 1, 0), "\n"))},
			want:   ok("a", 1, 1, 1),
		},
		"response.failed": {
			script: script{steps: steps(0, rText("a"), rev("response.failed",
				`"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"The model crashed"}}`))},
			want: failed(engine.ErrAPI, "response failed: The model crashed", "a", 1),
		},
		"error event": {
			script: script{steps: steps(0, rText("a"), rev("error", `"code":"rate_limit_exceeded","message":"Slow down","param":null`))},
			want:   failed(engine.ErrAPI, "rate_limit_exceeded: Slow down", "a", 1),
		},
		"EOF before response.completed": {
			script: script{steps: steps(0, append(rHead(), rText("a"))...)},
			want:   failed(engine.ErrStreamTruncated, "stream ended before response.completed", "a", 1),
		},
		"[DONE] before response.completed": {
			script: script{steps: steps(0, rText("a"), done())},
			want:   failed(engine.ErrStreamTruncated, "[DONE] before response.completed", "a", 1),
		},
		"undecodable event": {
			script: script{steps: steps(0, rText("a"), "data: {\"type\":\n\n")},
			want:   failed(engine.ErrStreamMalformed, "undecodable event", "a", 1),
		},
	}
}

// TestRespondReasoningTimes: TTFT is the first reasoning delta, TTFC the
// first answer text.
func TestRespondReasoningTimes(t *testing.T) {
	const wait = 80 * time.Millisecond
	sc := script{steps: []step{{write: rReasoning("response.reasoning_text.delta", "hmm")},
		{wait: wait, write: rText("yes")}, {write: rEnd("response.completed", "completed", "", 7, 2, 1)}}}
	runBoth(t, sc, respondReq(), func(t *testing.T, r *engine.Result) {
		if r.Err != nil || r.TTFT <= 0 || r.TTFC-r.TTFT < wait {
			t.Errorf("Err %v, TTFT %v, TTFC %v: want TTFC ≥ TTFT + %v", r.Err, r.TTFT, r.TTFC, wait)
		}
	})
}

// TestRespondNotStreamedFails: a failed response, or an error object in
// its place, is an api_error.
func TestRespondNotStreamedFails(t *testing.T) {
	req := respondReq()
	req.NoStream = true
	for name, body := range map[string]string{
		"failed": `{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`,
		"error":  `{"error":{"message":"bad input","type":"invalid_request_error"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, body)})
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req)
			if r.Err == nil || r.Err.Class != engine.ErrAPI {
				t.Errorf("Err = %v, want api_error", r.Err)
			}
		})
	}
}

// TestRespondSendsRequest: the path, Bearer key and body of the Responses
// API, and a tool-calling conversation as input items.
func TestRespondSendsRequest(t *testing.T) {
	got := make(chan sent, 2)
	srv := serve(t, recording(script{steps: steps(0, rText("a"), rEnd("response.completed", "completed", "", 1, 1, 0))}, got))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey = "sk-test" })
	req := respondReq()
	req.System, req.Temperature = "Be brief.", ptr(0.0)
	if r := c.Chat(context.Background(), req); r.Err != nil {
		t.Fatalf("Respond: %v", r.Err)
	}
	s := <-got
	if s.path != "/v1/responses" || s.accept != "text/event-stream" {
		t.Errorf("path %s, Accept %s", s.path, s.accept)
	}
	for key, want := range map[string]string{"input": `"hi"`, "instructions": `"Be brief."`, "max_output_tokens": "16",
		"stream": "true", "temperature": "0", "model": `"m"`} {
		if got := string(s.body[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	if _, ok := s.body["stream_options"]; ok {
		t.Error("body has stream_options, which the Responses API does not take")
	}
	req = respondReq()
	req.Prompt, req.Messages = "", []engine.Message{{Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "w", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"}}
	if r := c.Chat(context.Background(), req); r.Err != nil {
		t.Fatalf("Respond: %v", r.Err)
	}
	want := `[{"role":"user","content":"weather?"},{"type":"function_call","call_id":"call_1","name":"w","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"sunny"}]`
	if got := string((<-got).body["input"]); got != want {
		t.Errorf("input = %s, want %s", got, want)
	}
	for _, bad := range []func(*engine.ChatRequest){
		func(r *engine.ChatRequest) { r.Seed = ptr(int64(1)) },
		func(r *engine.ChatRequest) { r.Stop = []string{"x"} },
	} {
		req := respondReq()
		bad(req)
		if r := c.Chat(context.Background(), req); r.Err == nil || r.Err.Class != engine.ErrInvalidRequest ||
			!strings.Contains(r.Err.Message, "not part of the Responses API") {
			t.Errorf("Err = %v, want invalid_request", r.Err)
		}
	}
}

// TestRespondPreflight: a server that speaks only chat completions gets
// a message that says so, not a bare 404.
func TestRespondPreflight(t *testing.T) {
	chatOnly := streamingTarget()
	srv := serve(t, chatOnly)
	_, err := testClient(t, srv.URL+"/v1").Preflight(context.Background(), "m", engine.EndpointChat, engine.EndpointResponses)
	<-chatOnly.gotModel
	want := "HTTP 404 from " + srv.URL + "/v1/responses — the server does not serve OpenAI's Responses API"
	if !strings.HasPrefix(errString(err), want) || !strings.Contains(errString(err), "use llm.chat") {
		t.Errorf("error = %v, want it to start %q and advise llm.chat", err, want)
	}
	ok := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(rText("pong") + rEnd("response.completed", "completed", "", 3, 1, 0)))
	}))
	info, err := testClient(t, ok.URL+"/v1").Preflight(context.Background(), "m", engine.EndpointResponses)
	if err != nil || !info.Streamed || !info.UsageReported || len(info.APIs) != 1 || info.APIs[0] != engine.EndpointResponses {
		t.Errorf("Preflight = %+v, %v", info, err)
	}
}
