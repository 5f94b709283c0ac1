package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// sent is what a fake endpoint received.
type sent struct {
	path, accept string
	header       http.Header
	body         map[string]json.RawMessage
}

// recording wraps h, handing what each request sent to got.
func recording(h http.Handler, got chan<- sent) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s := sent{path: r.URL.Path, accept: r.Header.Get("Accept"), header: r.Header.Clone()}
		_ = json.Unmarshal(raw, &s.body)
		select {
		case got <- s:
		default:
		}
		h.ServeHTTP(w, r)
	})
}

func textChunk(s string) string {
	return ev(`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":` +
		mustJSON(s) + `,"logprobs":{"tokens":["x"],"token_logprobs":[-0.5],"top_logprobs":null,"text_offset":[0]},"finish_reason":null}],"usage":null}`)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func completionsReq() *engine.ChatRequest {
	return &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once upon a", MaxTokens: 8}
}

func TestChatCompletionsEndpoint(t *testing.T) {
	stream := steps(time.Millisecond, textChunk(" time"), textChunk(","), textChunk(" there"),
		ev(`{"choices":[{"index":0,"text":"","finish_reason":"length"}]}`), usageChunk(3, 3), done())
	got := make(chan sent, 1)
	srv := serve(t, recording(script{steps: stream}, got))
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), completionsReq())
	checkResult(t, r, want{status: 200, text: " time, there", textEvents: 3, outputTokens: 3, source: engine.TokensFromUsage,
		client: 3, inputTokens: 3, inputSource: engine.TokensFromUsage, finish: "length",
		ttft: true, ttfc: true, e2e: true, streamed: true})
	s := <-got
	if got, want := s.path, "/v1/completions"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := string(s.body["prompt"]), `"Once upon a"`; got != want {
		t.Errorf("prompt = %s, want %s", got, want)
	}
	if _, ok := s.body["messages"]; ok {
		t.Errorf("completions body has messages: %v", s.body)
	}
}

func TestChatCompletionsCountsPrompt(t *testing.T) {
	srv := serve(t, script{steps: steps(0, textChunk(" time"), ev(`{"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`), done())})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), completionsReq())
	if got, want := r.InputTokens, 3; got != want { // "Once upon a"
		t.Errorf("InputTokens = %d, want %d", got, want)
	}
	if got, want := r.InputTokensSource, engine.TokensFromTokenizer; got != want {
		t.Errorf("InputTokensSource = %q, want %q", got, want)
	}
}

func TestChatNoStream(t *testing.T) {
	jsonAnswer := func(body string) script {
		return script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, body)}
	}
	tests := map[string]struct {
		req    *engine.ChatRequest
		script script
		want   want
	}{
		"chat": {
			&engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, NoStream: true},
			jsonAnswer(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","reasoning_content":"greet back"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`),
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 6, source: engine.TokensFromUsage, client: 5,
				reasoning: 3, inputTokens: 5, inputSource: engine.TokensFromUsage, finish: "stop", e2e: true},
		},
		"completions": {
			&engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once upon a", NoStream: true},
			jsonAnswer(`{"id":"x","object":"text_completion","choices":[{"index":0,"text":" time, there","logprobs":null,"finish_reason":"length"}]}`),
			want{status: 200, text: " time, there", textEvents: 1, outputTokens: 3, source: engine.TokensFromTokenizer,
				client: 3, inputTokens: 3, inputSource: engine.TokensFromTokenizer, finish: "length", e2e: true},
		},
		"nonsense usage": {
			&engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, NoStream: true},
			jsonAnswer(`{"choices":[{"index":0,"message":{"content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-1,"completion_tokens":"2"}}`),
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 2, source: engine.TokensFromTokenizer, client: 2,
				inputTokens: 1, inputSource: engine.TokensFromTokenizer, finish: "stop", e2e: true},
		},
		"usage of the wrong type": {
			&engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, NoStream: true},
			jsonAnswer(`{"usage":"n/a","choices":[{"index":0,"message":{"content":"Hi there"},"finish_reason":"stop"}]}`),
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 2, source: engine.TokensFromTokenizer, client: 2,
				inputTokens: 1, inputSource: engine.TokensFromTokenizer, finish: "stop", e2e: true},
		},
		"empty answer": {
			&engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, NoStream: true},
			jsonAnswer(`{"choices":[{"index":0,"message":{"content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":0}}`),
			want{status: 200, source: engine.TokensFromUsage, inputTokens: 9, inputSource: engine.TokensFromUsage,
				finish: "length", e2e: true},
		},
		"a stream anyway": {
			&engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, NoStream: true},
			script{steps: steps(0, okStream("Hello", ",", " world")...)},
			want{status: 200, text: "Hello, world", textEvents: 3, outputTokens: 3, source: engine.TokensFromUsage, client: 3,
				inputTokens: 7, inputSource: engine.TokensFromUsage, finish: "stop", ttft: true, ttfc: true, e2e: true, streamed: true},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := make(chan sent, 1)
			srv := serve(t, recording(tt.script, got))
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), tt.req)
			checkResult(t, r, tt.want)
			if !r.Streamed && (r.TTFT != 0 || r.TTFC != 0 || r.TPOT != 0 || r.ITL != nil) {
				t.Errorf("TTFT %v, TTFC %v, TPOT %v, ITL %v: want all absent without a stream", r.TTFT, r.TTFC, r.TPOT, r.ITL)
			}
			s := <-got
			if got, want := string(s.body["stream"]), "false"; got != want {
				t.Errorf("stream = %s, want %s", got, want)
			}
			if opts, ok := s.body["stream_options"]; ok {
				t.Errorf("stream_options = %s, want none", opts)
			}
			if got, want := s.accept, "application/json"; got != want {
				t.Errorf("Accept = %q, want %q", got, want)
			}
		})
	}
}

// TestChatNoStreamWaitsPastTTFT: a non-streamed answer comes whole, after
// the generation; the TTFT deadline must not cut it short.
func TestChatNoStreamWaitsPastTTFT(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sleep(r, 300*time.Millisecond) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"ok"},"finish_reason":"stop"}]}`)
	}))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.TTFTTimeout = 50 * time.Millisecond })
	req := chatReq()
	req.NoStream = true
	r := c.Chat(context.Background(), req)
	if r.Err != nil {
		t.Fatalf("Err = %v", r.Err)
	}
	if r.E2E < 300*time.Millisecond {
		t.Errorf("E2E = %v, want at least the server's 300ms", r.E2E)
	}
	req.NoStream = false
	if r := c.Chat(context.Background(), req); r.Err == nil || r.Err.Class != engine.ErrTimeoutTTFT {
		t.Errorf("streamed request: Err = %v, want %s", r.Err, engine.ErrTimeoutTTFT)
	}
}

func TestChatUnknownEndpoint(t *testing.T) {
	r := testClient(t, "http://127.0.0.1:1/v1").Chat(context.Background(), &engine.ChatRequest{Endpoint: "edits", Model: "m"})
	if r.Err == nil || r.Err.Class != engine.ErrInvalidRequest || !strings.Contains(r.Err.Message, `unknown endpoint "edits"`) {
		t.Errorf("Err = %v, want invalid_request naming the endpoint", r.Err)
	}
}
