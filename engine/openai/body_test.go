package openai

import (
	"bytes"
	"encoding/json"
	goldenfile "github.com/llmload/llmload/engine/golden"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	openai "github.com/sashabaranov/go-openai"
)

func ptr[T any](v T) *T { return &v }

func TestBuildBodyGolden(t *testing.T) {
	msgs := []engine.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "什么是机器学习？<b>&</b>"}}
	tests := map[string]*engine.ChatRequest{
		"minimal": {Model: "m", Messages: msgs},
		"sampling": {Model: "Qwen/Qwen2.5-7B-Instruct", Messages: msgs, MaxTokens: 200,
			Temperature: ptr(0.0), TopP: ptr(0.7), Seed: ptr(int64(42)), Stop: []string{"\n\n"}},
		"empty prompt":  {Model: "m", Messages: []engine.Message{{Role: "user", Content: ""}}},
		"nil messages":  {Model: "m"},
		"extra appends": {Model: "m", Messages: msgs, Extra: map[string]any{"ignore_eos": true, "top_k": 20, "chat_template_kwargs": map[string]any{"enable_thinking": false}}},
		"extra overrides": {Model: "m", Messages: msgs, MaxTokens: 10, Temperature: ptr(1.0),
			Extra: map[string]any{"max_tokens": 5, "temperature": nil, "stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}}},
		"continuous usage": {Model: "m", Messages: msgs},
		"ignore eos":       {Model: "m", Messages: msgs, MaxTokens: 128, IgnoreEOS: true, MinTokens: 128},
		"ignore eos overridden": {Model: "m", Messages: msgs, IgnoreEOS: true, MinTokens: 8,
			Extra: map[string]any{"ignore_eos": false, "min_tokens": 4}},
		"no stream": {Model: "m", Messages: msgs, NoStream: true},
		"completions": {Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once upon", MaxTokens: 20,
			Temperature: ptr(0.0), Seed: ptr(int64(1))},
		"completions empty prompt": {Endpoint: engine.EndpointCompletions, Model: "m", Messages: msgs},
		"completions no stream":    {Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once upon", NoStream: true},
	}
	// continuous names the cases built for a client with ContinuousUsage;
	// "no stream" shows that it asks for nothing without a stream.
	continuous := map[string]bool{"continuous usage": true, "no stream": true}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			body, err := buildBody(req, continuous[name])
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(body) {
				t.Fatalf("invalid JSON: %s", body)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			goldenfile.Check(t, filepath.Join("body", strings.ReplaceAll(name, " ", "_")+".json"), pretty.Bytes())
		})
	}
}

// TestBodyKeysComplete guards mergeExtra's fast path: every key a body
// can emit must be in bodyKeys, or an Extra could duplicate it.
func TestBodyKeysComplete(t *testing.T) {
	full := engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "x"}}, Prompt: "x",
		MaxTokens: 1, Temperature: ptr(1.0), TopP: ptr(1.0), Seed: ptr(int64(1)), Stop: []string{"x"},
		IgnoreEOS: true, MinTokens: 1, Tools: []any{map[string]any{"type": "function"}}, ToolChoice: "auto"}
	seen := map[string]bool{}
	for _, endpoint := range []string{engine.EndpointChat, engine.EndpointCompletions} {
		req := full
		req.Endpoint = endpoint
		body, err := buildBody(&req, false)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			if !bodyKeys[k] {
				t.Errorf("%s body key %q missing from bodyKeys", endpoint, k)
			}
			seen[k] = true
		}
	}
	if got, want := len(seen), len(bodyKeys); got != want {
		t.Errorf("bodies have %d keys, bodyKeys %d", got, want)
	}
}

func TestBuildBodyUnknownEndpoint(t *testing.T) {
	_, err := buildBody(&engine.ChatRequest{Endpoint: "nonsense", Model: "m"}, false)
	if got, want := errString(err), `unknown endpoint "nonsense" (want "chat" or "completions")`; got != want {
		t.Errorf("error = %s, want %s", got, want)
	}
}

// TestBodyDecodesAsOpenAIRequest checks the body against go-openai's own
// request type, as a server written against the OpenAI schema would read it.
func TestBodyDecodesAsOpenAIRequest(t *testing.T) {
	req := &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}},
		MaxTokens: 3, Temperature: ptr(0.5), Seed: ptr(int64(9))}
	body, err := buildBody(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var got openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || len(got.Messages) != 1 || got.Messages[0].Content != "hi" || got.MaxTokens != 3 ||
		got.Temperature != 0.5 || got.Seed == nil || *got.Seed != 9 || !got.Stream ||
		got.StreamOptions == nil || !got.StreamOptions.IncludeUsage {
		t.Errorf("decoded request = %+v", got)
	}
	req = &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once", MaxTokens: 3, NoStream: true}
	if body, err = buildBody(req, true); err != nil {
		t.Fatal(err)
	}
	var comp openai.CompletionRequest
	if err := json.Unmarshal(body, &comp); err != nil {
		t.Fatal(err)
	}
	if comp.Model != "m" || comp.Prompt != "Once" || comp.MaxTokens != 3 || comp.Stream || comp.StreamOptions != nil {
		t.Errorf("decoded completion request = %+v", comp)
	}
}
