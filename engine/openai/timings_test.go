package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/llmload/llmload/engine"
)

// llama.cpp's own timing of a request rides in its last chunk (streamed)
// or the answer (not streamed); it is kept as the server sent it.
func TestServerTimingsAreKept(t *testing.T) {
	const timed = `"timings":{"cache_n":3,"prompt_n":9,"prompt_ms":1.5,"prompt_per_token_ms":0.17,"predicted_n":2,"predicted_ms":0.8,"predicted_per_token_ms":0.8,"predicted_per_second":2500}`
	want := &engine.ServerTimings{PromptN: 9, CachedN: 3, PromptMS: 1.5, PredictedN: 2, PredictedMS: 0.8, PredictedPerTokenMS: 0.8}
	tests := []struct {
		name   string
		h      http.Handler
		stream bool
		want   *engine.ServerTimings
	}{
		{"streamed", script{steps: steps(0, roleChunk(), contentChunk("Hi"), contentChunk("!"),
			ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],`+timed+`}`), done())}, true, want},
		{"usage chunk", script{steps: steps(0, contentChunk("Hi"), finishChunk("stop"),
			ev(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14},`+timed+`}`), done())}, true, want},
		{"none", script{steps: steps(0, contentChunk("Hi"), finishChunk("stop"), done())}, true, nil},
		{"not streamed", script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi!"},"finish_reason":"stop"}],`+timed+`}`)}, false, want},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.h)
			req := chatReq()
			req.NoStream = !tc.stream
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), req)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			switch {
			case tc.want == nil && r.Server != nil:
				t.Errorf("Server = %+v, want none", *r.Server)
			case tc.want != nil && (r.Server == nil || *r.Server != *tc.want):
				t.Errorf("Server = %+v, want %+v", r.Server, *tc.want)
			}
		})
	}
}
