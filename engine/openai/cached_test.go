package openai

import (
	"context"
	"testing"

	"github.com/llmload/llmload/engine"
)

// The prompt tokens a server served from its prefix cache are read from
// every API's usage, streamed and not, and from llama.cpp's timings when
// usage says nothing; nonsense counts none.
func TestCachedTokens(t *testing.T) {
	json := map[string]string{"Content-Type": "application/json"}
	chatDone := func(usage string) []step {
		return steps(0, roleChunk(), contentChunk("Hi"), finishChunk("stop"),
			ev(`{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":`+usage+`}`), done())
	}
	vllm := `{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":32}}`
	completion := `{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":"stop"}],"usage":`
	timings := `"timings":{"cache_n":24,"prompt_n":16,"prompt_ms":1.5,"predicted_n":1,"predicted_ms":0.8,"predicted_per_token_ms":0.8}`
	messagesWhole := `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",` +
		`"usage":{"input_tokens":8,"cache_read_input_tokens":48,"cache_creation_input_tokens":0,"output_tokens":1}}`
	tests := []struct {
		name        string
		req         *engine.ChatRequest
		script      script
		cached, inp int
	}{
		{"chat, streamed", chatReq(), script{steps: chatDone(vllm)}, 32, 40},
		{"chat, continuous usage then final", chatReq(), script{steps: steps(0, roleChunk(),
			ev(`{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41}}`),
			finishChunk("stop"), ev(`{"choices":[],"usage":`+vllm+`}`), done())}, 32, 40},
		{"chat, whole", noStream(chatReq()), script{header: json, steps: steps(0,
			`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":`+vllm+`}`)}, 32, 40},
		{"chat, no details", chatReq(), script{steps: chatDone(`{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41}`)}, 0, 40},
		{"chat, null details", chatReq(), script{steps: chatDone(`{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":null}`)}, 0, 40},
		{"chat, more cached than prompt", chatReq(), script{steps: chatDone(
			`{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":48}}`)}, 0, 40},
		{"chat, cached not a number", chatReq(), script{steps: chatDone(
			`{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41,"prompt_tokens_details":{"cached_tokens":"32"}}`)}, 0, 40},
		{"completions, streamed", completionsReq(), script{steps: steps(0,
			ev(`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Hi","finish_reason":null}]}`),
			ev(`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"","finish_reason":"stop"}]}`),
			ev(`{"id":"cmpl-1","object":"text_completion","choices":[],"usage":`+vllm+`}`), done())}, 32, 40},
		{"completions, whole", noStream(completionsReq()), script{header: json, steps: steps(0, completion+vllm+`}`)}, 32, 40},
		{"llama.cpp, streamed", chatReq(), script{steps: steps(0, roleChunk(), contentChunk("Hi"),
			ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],`+timings+`}`), done())}, 24, 0},
		{"llama.cpp, whole", noStream(chatReq()), script{header: json, steps: steps(0,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41},`+timings+`}`)}, 24, 40},
		{"usage wins over timings", chatReq(), script{steps: steps(0, roleChunk(), contentChunk("Hi"), finishChunk("stop"),
			ev(`{"choices":[],"usage":`+vllm+`,`+timings+`}`), done())}, 32, 40},
		{"responses, streamed", respondReq(), script{steps: steps(0, append(rHead(), rText("Hi"),
			rev("response.completed", `"response":{"id":"resp_1","status":"completed","output":[],`+
				`"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":16},"output_tokens":1,"total_tokens":41}}`))...)}, 16, 40},
		{"responses, whole", noStream(respondReq()), script{header: json, steps: steps(0,
			`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],`+
				`"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":16},"output_tokens":1,"total_tokens":41}}`)}, 16, 40},
		{"messages, streamed, cache in message_start", messagesReq(), script{steps: steps(0,
			append([]string{mStart(10, 5), mBlock(0, `{"type":"text","text":""}`), mText("Hi")}, mStop("end_turn", 1)...)...)}, 5, 15},
		{"messages, streamed, cumulative message_delta", messagesReq(), script{steps: steps(0,
			mStart(56, 0), mBlock(0, `{"type":"text","text":""}`), mText("Hi"), mev("content_block_stop", `"index":0`),
			mev("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},`+
				`"usage":{"input_tokens":8,"cache_read_input_tokens":48,"output_tokens":1}`),
			mev("message_stop", ""))}, 48, 56},
		{"messages, whole", noStream(messagesReq()), script{header: json, steps: steps(0, messagesWhole)}, 48, 56},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tt.script)
			r := testClient(t, srv.URL+"/v1", func(c *Config) { c.Tokenizer = "none" }).Chat(context.Background(), tt.req)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.CachedTokens != tt.cached || r.InputTokens != tt.inp {
				t.Errorf("CachedTokens %d of InputTokens %d, want %d of %d", r.CachedTokens, r.InputTokens, tt.cached, tt.inp)
			}
		})
	}
}

func noStream(req *engine.ChatRequest) *engine.ChatRequest {
	req.NoStream = true
	return req
}
