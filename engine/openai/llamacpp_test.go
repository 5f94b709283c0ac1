package openai

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
)

// The files of testdata/llamacpp are what llama.cpp's llama-server sent,
// byte for byte: the build of .ci/llama-server.sh (node-llama-cpp 3.21.1,
// llama.cpp commit 80fb11a) serving stories260K, asked with curl for 4
// tokens of "Once upon a time" (embeddings: two inputs, on a server
// started with --embeddings --pooling mean). The end-to-end tests of
// cmd/llmload run against the server itself; these hold the client to
// the same bytes where no server is at hand.

// llamaFile reads one of the captured answers.
func llamaFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "llamacpp", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// llamaTimings are a captured answer's timings, as the client should keep them.
func llamaTimings(promptN, cacheN int, promptMS float64, predictedN int, predictedMS, perToken float64) *engine.ServerTimings {
	return &engine.ServerTimings{PromptN: promptN, CachedN: cacheN, PromptMS: promptMS,
		PredictedN: predictedN, PredictedMS: predictedMS, PredictedPerTokenMS: perToken}
}

// Every API's answer as llama-server sends it, streamed and not, written
// to the client one byte at a time: the tokens come from its usage (the
// Messages API's input tokens are input_tokens plus
// cache_read_input_tokens, as llama.cpp splits them), the cached prompt
// tokens too, and its timings are kept wherever it sends them — in the
// last chunk of chat and completions, in the answer of a chat or
// completions request not streamed, and beside the response of a
// Responses stream's response.completed. It sends none with Messages, nor
// with a Responses answer not streamed.
func TestLlamaCppAnswers(t *testing.T) {
	const sse, js = "text/event-stream", "application/json; charset=utf-8"
	tests := []struct {
		file        string
		req         *engine.ChatRequest
		contentType string
		text        string
		in, cached  int
		out         int
		finish      string
		server      *engine.ServerTimings
	}{
		{"chat_stream.sse", chatReq(), sse, `"Here`, 46, 21, 4, "length",
			llamaTimings(25, 21, 4.963, 4, 1.522, 0.5073333333333333)},
		{"chat.json", chatReq(), js, "Suret", 46, 45, 4, "length",
			llamaTimings(1, 45, 0.569, 4, 1.055, 0.3516666666666666)},
		{"completions_stream.sse", completionsReq(), sse, ", there was a", 5, 4, 4, "length",
			llamaTimings(1, 4, 0.58, 4, 0.833, 0.2776666666666667)},
		{"completions.json", completionsReq(), js, ", there was a", 5, 4, 4, "length",
			llamaTimings(1, 4, 0.493, 4, 0.578, 0.19266666666666665)},
		{"responses_stream.sse", respondReq(), sse, `"Here`, 46, 45, 4, "stop",
			llamaTimings(1, 45, 1.076, 4, 2.246, 0.7486666666666667)},
		{"responses.json", respondReq(), js, `"There`, 46, 45, 4, "stop", nil},
		{"messages_stream.sse", messagesReq(), sse, `"He-`, 46, 45, 4, "length", nil},
		{"messages.json", messagesReq(), js, "But one", 46, 45, 4, "length", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body := llamaFile(t, tc.file)
			streamed := tc.contentType == sse
			srv := serve(t, script{header: map[string]string{"Content-Type": tc.contentType}, steps: steps(0, body), byteWise: true})
			req := tc.req
			req.NoStream = !streamed
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req)
			if r.Err != nil {
				t.Fatalf("error %+v", r.Err)
			}
			if r.Text != tc.text || r.Streamed != streamed || (r.TTFT > 0) != streamed {
				t.Errorf("text %q, streamed %v, TTFT %v; want %q, streamed %v", r.Text, r.Streamed, r.TTFT, tc.text, streamed)
			}
			if r.InputTokens != tc.in || r.InputTokensSource != engine.TokensFromUsage || r.CachedTokens != tc.cached {
				t.Errorf("input tokens %d (%s), cached %d; want %d from usage, %d cached",
					r.InputTokens, r.InputTokensSource, r.CachedTokens, tc.in, tc.cached)
			}
			if r.OutputTokens != tc.out || r.TokensSource != engine.TokensFromUsage {
				t.Errorf("output tokens %d (%s), want %d from usage", r.OutputTokens, r.TokensSource, tc.out)
			}
			if r.FinishReason != tc.finish {
				t.Errorf("finish reason %q, want %q", r.FinishReason, tc.finish)
			}
			switch {
			case tc.server == nil && r.Server != nil:
				t.Errorf("server timings %+v, want none", *r.Server)
			case tc.server != nil && (r.Server == nil || *r.Server != *tc.server):
				t.Errorf("server timings %+v, want %+v", r.Server, *tc.server)
			}
		})
	}
}

// llama-server's embeddings answer: one 64-float vector per input, the
// prompt tokens from its usage.
func TestLlamaCppEmbeddings(t *testing.T) {
	srv := serve(t, script{header: map[string]string{"Content-Type": "application/json; charset=utf-8"},
		steps: steps(0, llamaFile(t, "embeddings.json")), byteWise: true})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), embedReq("Once upon a time", "a dog"))
	if r.Err != nil {
		t.Fatalf("error %+v", r.Err)
	}
	if r.Inputs != 2 || r.Dimensions != 64 || r.InputTokens != 9 || r.InputTokensSource != engine.TokensFromUsage {
		t.Errorf("inputs %d of %d dimensions, %d input tokens (%s); want 2 of 64, 9 from usage",
			r.Inputs, r.Dimensions, r.InputTokens, r.InputTokensSource)
	}
}

// llama-server's refusals, each the same JSON whatever the API (its
// Messages endpoint too answers in OpenAI's shape), and sent before any
// event when the request was to be streamed: each is its HTTP class with
// the server's message.
func TestLlamaCppRefusals(t *testing.T) {
	tests := []struct {
		file    string
		status  int
		message string
	}{
		{"error_401.json", http.StatusUnauthorized, "Invalid API Key"},
		{"error_400_context.json", http.StatusBadRequest,
			"request (522 tokens) exceeds the available context size (256 tokens), try increasing it"},
		{"error_500_parse.json", http.StatusInternalServerError,
			"[json.exception.parse_error.101] parse error at line 1, column 24: syntax error while parsing object key - unexpected end of input; expected string literal"},
	}
	apis := map[string]func() *engine.ChatRequest{"chat": chatReq, "completions": completionsReq, "responses": respondReq,
		"messages": messagesReq, "embeddings": func() *engine.ChatRequest { return embedReq("hi") }}
	for _, tc := range tests {
		for api, req := range apis {
			t.Run(tc.file+"/"+api, func(t *testing.T) {
				srv := serve(t, script{status: tc.status, header: map[string]string{"Content-Type": "application/json; charset=utf-8"},
					steps: steps(0, llamaFile(t, tc.file))})
				r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req())
				if r.Err == nil {
					t.Fatal("succeeded, want a failure")
				}
				if got, want := r.Err.Class, engine.HTTPErrorClass(tc.status); got != want || r.Status != tc.status {
					t.Errorf("class %s, status %d; want %s, %d", got, r.Status, want, tc.status)
				}
				if got := r.Err.Message; got != tc.message && !strings.HasPrefix(tc.message, strings.TrimSuffix(got, "…")) {
					t.Errorf("message %q, want %q", got, tc.message)
				}
			})
		}
	}
}

// A Messages script's preflight, without a model, first lists the models
// with the key in x-api-key, as llama-server (started with --api-key)
// accepts it; when the key is wrong, the advice says that is how it went,
// not as a Bearer token.
func TestLlamaCppWrongKeyOnModelList(t *testing.T) {
	refusal := llamaFile(t, "error_401.json")
	tests := []struct {
		api  string
		want string
	}{
		{engine.EndpointMessages, "target rejected the API key (HTTP 401): llmload sent a 12-character key in x-api-key; " +
			"the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: Invalid API Key)"},
		{engine.EndpointResponses, "target rejected the API key (HTTP 401): llmload sent a 12-character Bearer key; " +
			"the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: Invalid API Key)"},
	}
	for _, tc := range tests {
		t.Run(tc.api, func(t *testing.T) {
			got := make(chan http.Header, 1)
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case got <- r.Header.Clone():
				default:
				}
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(refusal))
			}))
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey = "sk-wrong-456" })
			_, err := c.Preflight(context.Background(), "", tc.api)
			if msg := errString(err); msg != tc.want {
				t.Errorf("error:\n got %s\nwant %s", msg, tc.want)
			}
			h := <-got
			if xKey := h.Get("X-Api-Key") != ""; xKey != (tc.api == engine.EndpointMessages) || xKey == (h.Get("Authorization") != "") {
				t.Errorf("model list asked with x-api-key %q, Authorization %q", h.Get("X-Api-Key"), h.Get("Authorization"))
			}
		})
	}
}
