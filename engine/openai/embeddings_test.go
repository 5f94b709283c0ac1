package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
)

func embedReq(inputs ...string) *engine.ChatRequest {
	if len(inputs) == 1 {
		return &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "m", Prompt: inputs[0]}
	}
	return &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "m", Inputs: inputs}
}

// b64 is a vector in encoding_format "base64": little-endian float32s.
func b64(v ...float32) string {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return mustJSON(base64.StdEncoding.EncodeToString(b))
}

func TestEmbed(t *testing.T) {
	tests := map[string]struct {
		req  *engine.ChatRequest
		body string
		// what the result must hold
		class, message         string
		inputs, dims, inTokens int
		inSource               string
	}{
		"two inputs, usage": {req: embedReq("hello world", "bye"),
			body: `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2,0.3e-2]},` +
				`{"object":"embedding","index":1,"embedding":[0.4, 0.5 ,0.6]}],"model":"m","usage":{"prompt_tokens":5,"total_tokens":5}}`,
			inputs: 2, dims: 3, inTokens: 5, inSource: engine.TokensFromUsage},
		"one input, no usage: tokenizer": {req: embedReq("hello world"),
			body:   `{"data":[{"embedding":[1,2]}]}`,
			inputs: 1, dims: 2, inTokens: 2, inSource: engine.TokensFromTokenizer},
		"base64": {req: embedReq("a", "b"),
			body:   `{"data":[{"embedding":` + b64(1, 2, 3, 4) + `},{"embedding":` + b64(5, 6, 7, 8) + `}],"usage":{"prompt_tokens":2}}`,
			inputs: 2, dims: 4, inTokens: 2, inSource: engine.TokensFromUsage},
		"usage of the wrong shape": {req: embedReq("hello world"),
			body:   `{"data":[{"embedding":[1]}],"usage":[1]}`,
			inputs: 1, dims: 1, inTokens: 2, inSource: engine.TokensFromTokenizer},
		"fewer vectors than inputs": {req: embedReq("a", "b"), body: `{"data":[{"embedding":[1]}]}`,
			class: engine.ErrStreamMalformed, message: "the answer holds 1 embeddings for 2 inputs"},
		"vectors of two lengths": {req: embedReq("a", "b"), body: `{"data":[{"embedding":[1]},{"embedding":[1,2]}]}`,
			class: engine.ErrStreamMalformed, message: "embeddings of different lengths (1 and 2)"},
		"error object with 200": {req: embedReq("a"), body: `{"object":"error","message":"The model does not support Embeddings API"}`,
			class: engine.ErrAPI, message: "does not support Embeddings API"},
		"not JSON": {req: embedReq("a"), body: `{"data":[`, class: engine.ErrStreamMalformed, message: "undecodable embeddings answer"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := make(chan sent, 1)
			srv := serve(t, recording(script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, tt.body)}, got))
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), tt.req)
			s := <-got
			if s.path != "/v1/embeddings" || s.accept != "application/json" || s.body["stream"] != nil {
				t.Errorf("path %s, Accept %s, stream %s: want /v1/embeddings, JSON, no stream", s.path, s.accept, s.body["stream"])
			}
			class, msg := "", ""
			if r.Err != nil {
				class, msg = r.Err.Class, r.Err.Message
			}
			if class != tt.class || !strings.Contains(msg, tt.message) {
				t.Fatalf("Err = %v, want %s containing %q", r.Err, tt.class, tt.message)
			}
			if r.API != engine.EndpointEmbeddings || r.Inputs != tt.inputs || r.Dimensions != tt.dims ||
				r.InputTokens != tt.inTokens || r.InputTokensSource != tt.inSource {
				t.Errorf("API %s, %d inputs of %d dimensions, %d input tokens from %q; want %d of %d, %d from %q",
					r.API, r.Inputs, r.Dimensions, r.InputTokens, r.InputTokensSource, tt.inputs, tt.dims, tt.inTokens, tt.inSource)
			}
			if tt.class == "" && (r.E2E <= 0 || r.TTFT != 0 || r.Streamed || r.OutputTokens != 0 || r.TokensSource != "") {
				t.Errorf("E2E %v, TTFT %v, streamed %v, %d output tokens from %q: want E2E only, nothing generated",
					r.E2E, r.TTFT, r.Streamed, r.OutputTokens, r.TokensSource)
			}
		})
	}
}

// TestEmbedSendsInputs: a string input goes as a string, a list as a
// list, and the extra fields (dimensions) along.
func TestEmbedSendsInputs(t *testing.T) {
	got := make(chan sent, 2)
	srv := serve(t, recording(script{header: map[string]string{"Content-Type": "application/json"},
		steps: steps(0, `{"data":[{"embedding":[1]}]}`)}, got))
	c := testClient(t, srv.URL+"/v1")
	req := embedReq("one")
	req.Extra = map[string]any{"dimensions": 1}
	c.Chat(context.Background(), req)
	if s := <-got; string(s.body["input"]) != `"one"` || string(s.body["dimensions"]) != "1" {
		t.Errorf("body = %v, want a string input and dimensions", s.body)
	}
	c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "m", Inputs: []string{"one"}})
	if s := <-got; string(s.body["input"]) != `["one"]` {
		t.Errorf("input = %s, want a list", s.body["input"])
	}
}

func TestEmbedRefusesAStream(t *testing.T) {
	srv := serve(t, script{steps: steps(0, okStream("a")...)})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), embedReq("a"))
	if r.Err == nil || r.Err.Class != engine.ErrStreamMalformed || !strings.Contains(r.Err.Message, "want one JSON object") {
		t.Errorf("Err = %v, want stream_malformed", r.Err)
	}
}

func TestEmbedPreflight(t *testing.T) {
	for name, tt := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"no route": {404, `{"detail":"Not Found"}`, "the server does not serve embeddings (POST /embeddings; llm.embed); vLLM serves them only"},
		"chat model": {400, `{"object":"error","message":"The model does not support Embeddings API","code":400}`,
			`the model "m" does not embed`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, script{status: tt.status, header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, tt.body)})
			_, err := testClient(t, srv.URL+"/v1").Preflight(context.Background(), "m", engine.EndpointEmbeddings)
			if !strings.Contains(errString(err), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
