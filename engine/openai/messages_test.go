package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

func messagesCases() map[string]struct {
	script script
	want   want
	calls  []engine.ToolCall
} {
	ok := func(text string, events, tokens, client int) want {
		return want{status: 200, text: text, textEvents: events, outputTokens: tokens, source: engine.TokensFromUsage,
			client: client, inputTokens: 15, inputSource: engine.TokensFromUsage, finish: "stop", ttft: true, ttfc: true,
			e2e: true, streamed: true}
	}
	failed := func(class, message, text string, events int) want {
		return want{class: class, message: message, status: 200, text: text, textEvents: events, outputTokens: events,
			source: engine.TokensFromTokenizer, client: events, inputTokens: 15, inputSource: engine.TokensFromUsage,
			ttft: events > 0, ttfc: events > 0, streamed: true}
	}
	head := []string{mStart(10, 5), mBlock(0, `{"type":"text","text":""}`), mev("ping", "")}
	return map[string]struct {
		script script
		want   want
		calls  []engine.ToolCall
	}{
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

func TestMessagesStreams(t *testing.T) {
	for name, tt := range messagesCases() {
		t.Run(name, func(t *testing.T) {
			runBoth(t, tt.script, messagesReq(), func(t *testing.T, r *engine.Result) {
				checkResult(t, r, tt.want)
				checkCalls(t, r, tt.calls...)
				if r.API != engine.EndpointMessages {
					t.Errorf("API = %q, want %q", r.API, engine.EndpointMessages)
				}
			})
		})
	}
}

func TestMessagesNotStreamed(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"Hmm."},` +
		`{"type":"text","text":"Hi there"},{"type":"tool_use","id":"toolu_2","name":"f","input":{"a":1}}],` +
		`"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":9}}`
	srv := serve(t, script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, body)})
	req := messagesReq()
	req.NoStream = true
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req)
	checkResult(t, r, want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 9, source: engine.TokensFromUsage,
		client: 9, reasoning: 2, inputTokens: 5, inputSource: engine.TokensFromUsage, finish: "tool_calls", e2e: true})
	checkCalls(t, r, engine.ToolCall{ID: "toolu_2", Name: "f", Arguments: `{"a":1}`})
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
	type seen struct {
		header http.Header
		body   map[string]json.RawMessage
		path   string
	}
	got := make(chan seen, 1)
	h := script{steps: steps(0, append([]string{mStart(1, 0), mText("a")}, mStop("end_turn", 1)...)...)}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{header: r.Header.Clone(), path: r.URL.Path}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &s.body)
		got <- s
		h.ServeHTTP(w, r)
	}))
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
