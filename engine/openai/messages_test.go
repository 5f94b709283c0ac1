package openai

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// Messages events in Anthropic's shape.
func mev(typ, fields string) string {
	data := `{"type":"` + typ + `"`
	if fields != "" {
		data += "," + fields
	}
	return "event: " + typ + "\ndata: " + data + "}\n\n"
}

func mStart(input, cacheRead int) string {
	return mev("message_start", fmt.Sprintf(`"message":{"id":"msg_1","type":"message","role":"assistant","content":[],`+
		`"model":"m","stop_reason":null,"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}`, input, cacheRead))
}

func mBlock(index int, block string) string {
	return mev("content_block_start", fmt.Sprintf(`"index":%d,"content_block":%s`, index, block))
}

func mDelta(index int, typ, field, s string) string {
	return mev("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":%q,%q:%s}`, index, typ, field, mustJSON(s)))
}

func mText(s string) string { return mDelta(0, "text_delta", "text", s) }

func mStop(reason string, output int) []string {
	return []string{mev("content_block_stop", `"index":0`),
		mev("message_delta", fmt.Sprintf(`"delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}`, reason, output)),
		mev("message_stop", "")}
}

func messagesReq() *engine.ChatRequest {
	return &engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: "m", MaxTokens: 16,
		Messages: []engine.Message{{Role: "user", Content: "hi"}}}
}

// messagesCases are Messages streams; the input tokens are
// message_start's, the cached ones included, even when the stream fails.
func messagesCases() map[string]streamCase {
	ok := func(text string, events, tokens, client int) want {
		return streamedOK(text, events, tokens, client, 15)
	}
	failed := func(class, message, text string, events int) want {
		return streamedFailed(class, message, text, events, 15, engine.TokensFromUsage)
	}
	head := []string{mStart(10, 5), mBlock(0, `{"type":"text","text":""}`), mev("ping", "")}
	return map[string]streamCase{
		"complete stream": {
			script: script{steps: steps(time.Millisecond, append(append(head, mText("Hello"), mText(","), mText(" world")),
				mStop("end_turn", 3)...)...)},
			want: ok("Hello, world", 3, 3, 3),
		},
		"thinking counts for TTFT, not TTFC": {
			script: script{steps: steps(time.Millisecond, append([]string{mStart(10, 5), mBlock(0, `{"type":"thinking","thinking":""}`),
				mDelta(0, "thinking_delta", "thinking", "Let me think"), mDelta(0, "signature_delta", "signature", "abc"),
				mev("content_block_stop", `"index":0`), mBlock(1, `{"type":"text","text":""}`),
				mDelta(1, "text_delta", "text", "Yes")}, mStop("max_tokens", 5)...)...)},
			want: func() want { w := ok("Yes", 2, 5, 4); w.reasoning = 3; w.finish = "length"; return w }(),
		},
		"tool use": {
			script: script{steps: steps(0, append([]string{mStart(10, 5),
				mBlock(0, `{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`),
				mDelta(0, "input_json_delta", "partial_json", ""), mDelta(0, "input_json_delta", "partial_json", `{"city":`),
				mDelta(0, "input_json_delta", "partial_json", ` "Paris"}`)}, mStop("tool_use", 8)...)...)},
			want:  func() want { w := ok("", 2, 8, 6); w.finish = "tool_calls"; return w }(),
			calls: []engine.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		},
		"no message_stop after the stop reason": {
			script: script{steps: steps(0, append(head, mText("a"), mStop("end_turn", 1)[1])...)},
			want:   ok("a", 1, 1, 1),
		},
		"cut message_stop": {
			script: script{steps: steps(0, append(append(head, mText("a")), mStop("end_turn", 1)[0], mStop("end_turn", 1)[1],
				strings.TrimSuffix(mev("message_stop", ""), "\n"))...)},
			want: ok("a", 1, 1, 1),
		},
		"overloaded mid-stream": {
			script: script{steps: steps(0, append(head, mText("a"),
				mev("error", `"error":{"type":"overloaded_error","message":"Overloaded"}`))...)},
			want: failed(engine.ErrAPI, "overloaded_error: Overloaded (the server is overloaded", "a", 1),
		},
		"a gateway's error in OpenAI's shape": {
			script: script{steps: steps(0, append(head, mText("a"), ev(`{"error":{"message":"upstream timed out","type":"server_error"}}`))...)},
			want:   failed(engine.ErrAPI, "server_error: upstream timed out", "a", 1),
		},
		"EOF before the end": {
			script: script{steps: steps(0, append(head, mText("a"))...)},
			want:   failed(engine.ErrStreamTruncated, "stream ended before message_stop", "a", 1),
		},
	}
}

// TestMessagesHTTPErrors: Anthropic's error bodies keep their type, and
// its 529 is a 5xx class with an overload message.
func TestMessagesHTTPErrors(t *testing.T) {
	for name, tt := range map[string]struct {
		status        int
		body          string
		class, substr string
	}{
		"overloaded": {529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			"http_5xx:529", "overloaded_error: Overloaded (the server is overloaded"},
		"invalid": {400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`,
			"http_4xx:400", "invalid_request_error: max_tokens: Field required"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, script{status: tt.status, header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, tt.body)})
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), messagesReq())
			checkResult(t, r, want{class: tt.class, message: tt.substr, status: tt.status})
		})
	}
}

// TestMessagesSendsRequest: the key goes in x-api-key, never as a Bearer
// token, with anthropic-version; the body is Anthropic's, a tool-calling
// turn in its blocks.
func TestMessagesSendsRequest(t *testing.T) {
	const key = "sk-ant-test-key"
	got := make(chan sent, 1)
	srv := serve(t, recording(script{steps: steps(0, append([]string{mStart(1, 0), mText("a")}, mStop("end_turn", 1)...)...)}, got))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey = key })
	req := messagesReq()
	req.System, req.Stop = "Be brief.", []string{"END"}
	req.Messages = append(req.Messages,
		engine.Message{Role: "assistant", Content: "Let me look.", ToolCalls: []engine.ToolCall{{ID: "toolu_1", Name: "w", Arguments: `{"c":1}`}}},
		engine.Message{Role: "tool", ToolCallID: "toolu_1", Content: "sunny"})
	if r := c.Chat(context.Background(), req); r.Err != nil {
		t.Fatalf("Messages: %v", r.Err)
	}
	s := <-got
	for h, want := range map[string]string{"X-Api-Key": key, "Anthropic-Version": AnthropicVersion, "Authorization": "",
		"Accept": "text/event-stream"} {
		if got := s.header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	if s.path != "/v1/messages" {
		t.Errorf("path = %s", s.path)
	}
	for k, want := range map[string]string{"system": `"Be brief."`, "max_tokens": "16", "stop_sequences": `["END"]`, "stream": "true",
		"messages": `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"Let me look."},` +
			`{"type":"tool_use","id":"toolu_1","name":"w","input":{"c":1}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}]`} {
		if got := string(s.body[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
}

// TestMessagesPreflight: the Messages API's own refusals explained.
func TestMessagesPreflight(t *testing.T) {
	for name, tt := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"no such route": {404, `{"detail":"Not Found"}`, "the server does not serve Anthropic's Messages API"},
		"version": {400, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version: header is required"}}`,
			"the server rejected the anthropic-version header: llmload sends anthropic-version: 2023-06-01"},
		"key": {401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			"target rejected the API key (HTTP 401): llmload sent a 10-character key in x-api-key"},
		"overloaded": {529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			"the server is overloaded (Anthropic's 529, overloaded_error)"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, script{status: tt.status, header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, tt.body)})
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey = "sk-ant-xy" + "z" })
			_, err := c.Preflight(context.Background(), "m", engine.EndpointMessages)
			if !strings.Contains(errString(err), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
