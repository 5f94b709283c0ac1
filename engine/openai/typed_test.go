package openai

import (
	"context"
	"testing"

	"github.com/llmload/llmload/engine"
)

// streamCase is a scripted stream and what the client makes of it.
type streamCase struct {
	script script
	want   want
	calls  []engine.ToolCall
}

// streamedOK is the result of a complete stream whose usage gave the
// output tokens and the prompt's input tokens.
func streamedOK(text string, events, tokens, client, input int) want {
	return want{status: 200, text: text, textEvents: events, outputTokens: tokens, source: engine.TokensFromUsage,
		client: client, inputTokens: input, inputSource: engine.TokensFromUsage, finish: "stop", ttft: true, ttfc: true,
		e2e: true, streamed: true}
}

// streamedFailed is the result of a stream that failed after events text
// events of one token each, counted by the tokenizer; the input tokens
// come from inputSource.
func streamedFailed(class, message, text string, events, input int, inputSource string) want {
	return want{class: class, message: message, status: 200, text: text, textEvents: events, outputTokens: events,
		source: engine.TokensFromTokenizer, client: events, inputTokens: input, inputSource: inputSource,
		ttft: events > 0, ttfc: events > 0, streamed: true}
}

// typedDialects are the APIs of typed events, each with its request and
// its streams; the tests over them check that the shared handling reads
// every API's events the same way.
var typedDialects = []struct {
	api   string
	req   func() *engine.ChatRequest
	cases func() map[string]streamCase
}{
	{engine.EndpointMessages, messagesReq, messagesCases},
	{engine.EndpointResponses, respondReq, responsesCases},
}

func TestTypedStreams(t *testing.T) {
	for _, d := range typedDialects {
		for name, tt := range d.cases() {
			t.Run(d.api+"/"+name, func(t *testing.T) {
				runBoth(t, tt.script, d.req(), func(t *testing.T, r *engine.Result) {
					checkResult(t, r, tt.want)
					checkCalls(t, r, tt.calls...)
					if r.API != d.api {
						t.Errorf("API = %q, want %q", r.API, d.api)
					}
				})
			})
		}
	}
}

// TestTypedNotStreamed: a whole answer's text, reasoning, tool call,
// usage and finish, in each API's shape.
func TestTypedNotStreamed(t *testing.T) {
	for _, tt := range []struct {
		req  func() *engine.ChatRequest
		body string
		want want
		call engine.ToolCall
	}{
		{messagesReq, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"Hmm."},` +
			`{"type":"text","text":"Hi there"},{"type":"tool_use","id":"toolu_2","name":"f","input":{"a":1}}],` +
			`"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":9}}`,
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 9, source: engine.TokensFromUsage,
				client: 9, reasoning: 2, inputTokens: 5, inputSource: engine.TokensFromUsage, finish: "tool_calls", e2e: true},
			engine.ToolCall{ID: "toolu_2", Name: "f", Arguments: `{"a":1}`}},
		{respondReq, `{"id":"resp_1","object":"response","status":"completed","output":[` +
			`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Thinking."}]},` +
			`{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]},` +
			`{"type":"function_call","id":"fc_1","call_id":"call_2","name":"f","arguments":"{}"}],` +
			`"usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":14}}`,
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 9, source: engine.TokensFromUsage,
				client: 5, reasoning: 4, inputTokens: 5, inputSource: engine.TokensFromUsage, finish: "tool_calls", e2e: true},
			engine.ToolCall{ID: "call_2", Name: "f", Arguments: "{}"}},
	} {
		req := tt.req()
		t.Run(req.Endpoint, func(t *testing.T) {
			srv := serve(t, script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, tt.body)})
			req.NoStream = true
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req)
			checkResult(t, r, tt.want)
			checkCalls(t, r, tt.call)
		})
	}
}
