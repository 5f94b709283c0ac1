package sim

import (
	"context"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/openai"
)

// TestEveryAPIThroughTheClient: llmload's own client reads every API the
// simulator serves, streamed and not, with usage, tool calls and vectors,
// through a key sent as each API wants it.
func TestEveryAPIThroughTheClient(t *testing.T) {
	const key = "sk-sim-client"
	s := New(zeroCost(Config{Seed: 5, APIKey: key, StopFraction: -1}))
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := openai.New(openai.Config{BaseURL: base, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	user := []engine.Message{{Role: "user", Content: "Weather in Paris?"}}
	tool := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": weatherSchema}}}
	reqs := map[string]*engine.ChatRequest{
		"chat":           {Messages: user, MaxTokens: 5},
		"chat tool":      {Messages: user, MaxTokens: 5, Tools: tool},
		"responses":      {Endpoint: engine.EndpointResponses, Prompt: "hi", System: "Be brief.", MaxTokens: 5},
		"responses tool": {Endpoint: engine.EndpointResponses, Prompt: "hi", MaxTokens: 5, Tools: []any{responsesWeather}},
		"messages":       {Endpoint: engine.EndpointMessages, Messages: user, System: "Be brief.", MaxTokens: 5},
		"messages tool":  {Endpoint: engine.EndpointMessages, Messages: user, MaxTokens: 5, Tools: []any{messagesWeather}},
	}
	for name, req := range reqs {
		for _, stream := range []bool{true, false} {
			r := *req
			r.NoStream = !stream
			res := c.Chat(context.Background(), &r)
			if res.Err != nil {
				t.Errorf("%s (stream %v): %v", name, stream, res.Err)
				continue
			}
			tools := r.Tools != nil
			tokens := 5
			if tools {
				tokens += (&toolPlan{arg: "city"}).overhead() // the JSON around the words
			}
			if res.OutputTokens != tokens || res.TokensSource != engine.TokensFromUsage || res.InputTokensSource != engine.TokensFromUsage ||
				res.Streamed != stream || (res.TTFT > 0) != stream || (len(res.ToolCalls) == 1) != tools || (res.Text != "") == tools {
				t.Errorf("%s (stream %v): %d tokens from %s, input from %s, streamed %v, TTFT %v, text %q, calls %+v",
					name, stream, res.OutputTokens, res.TokensSource, res.InputTokensSource, res.Streamed, res.TTFT, res.Text, res.ToolCalls)
			}
			want := "length"
			if tools {
				want = "tool_calls"
			}
			if res.FinishReason != want {
				t.Errorf("%s (stream %v): finish %q, want %q", name, stream, res.FinishReason, want)
			}
		}
	}
	res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Inputs: []string{"a b", "c"}})
	if res.Err != nil || res.Inputs != 2 || res.Dimensions != DefaultEmbeddingDims || res.InputTokens != CountTokens("a b")+CountTokens("c") ||
		res.InputTokensSource != engine.TokensFromUsage || res.E2E <= 0 {
		t.Errorf("embeddings: %+v", res)
	}
	info, err := c.Preflight(context.Background(), "", engine.EndpointChat, engine.EndpointResponses, engine.EndpointMessages, engine.EndpointEmbeddings)
	if err != nil || len(info.APIs) != 4 || info.Model != DefaultModel {
		t.Errorf("Preflight = %+v, %v", info, err)
	}
}

// TestDefectsOnEveryAPI: a defect picked for a dirty kind misbehaves on
// every API's requests of that kind, each in its own shape.
func TestDefectsOnEveryAPI(t *testing.T) {
	s := New(zeroCost(Config{Defects: map[string]string{KindEmpty: DefectTruncate, KindUnknownModel: "503"}}))
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := openai.New(openai.Config{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	empty := []engine.Message{{Role: "user", Content: ""}}
	for name, tt := range map[string]struct {
		req   *engine.ChatRequest
		class string
	}{
		"responses truncated":  {&engine.ChatRequest{Endpoint: engine.EndpointResponses, MaxTokens: 20}, engine.ErrStreamTruncated},
		"messages truncated":   {&engine.ChatRequest{Endpoint: engine.EndpointMessages, Messages: empty, MaxTokens: 20}, engine.ErrStreamTruncated},
		"embeddings truncated": {&engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Inputs: []string{""}}, engine.ErrStreamTruncated},
		"messages 503": {&engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: "nope", Messages: []engine.Message{{Role: "user", Content: "hi"}},
			MaxTokens: 5}, engine.HTTPErrorClass(503)},
		"embeddings 503": {&engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: "nope", Prompt: "hi"}, engine.HTTPErrorClass(503)},
	} {
		if res := c.Chat(context.Background(), tt.req); res.Err == nil || res.Err.Class != tt.class {
			t.Errorf("%s: Err = %v, want %s", name, res.Err, tt.class)
		}
	}
}
