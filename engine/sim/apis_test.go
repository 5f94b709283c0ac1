package sim

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
)

// createdAt holds the Responses API's wall-clock times.
var createdAt = regexp.MustCompile(`"created_at":\d+`)

func body(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var anthropicHeader = map[string]string{"Anthropic-Version": AnthropicVersion}

// weatherTool is a tool in each API's shape.
var (
	chatWeather      = map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": weatherSchema}}
	responsesWeather = map[string]any{"type": "function", "name": "get_weather", "parameters": weatherSchema}
	messagesWeather  = map[string]any{"name": "get_weather", "input_schema": weatherSchema}
	weatherSchema    = map[string]any{"type": "object", "properties": map[string]any{"unit": map[string]any{}, "city": map[string]any{}}}
)

// TestAPIGolden pins the bytes of every API's answers, streamed and not,
// text and tool calls.
func TestAPIGolden(t *testing.T) {
	user := []map[string]any{{"role": "user", "content": "Say something."}}
	tests := []struct {
		name, path string
		req        map[string]any
		header     map[string]string
	}{
		{"responses.golden", "/v1/responses", map[string]any{"input": "Say something.", "instructions": "Be brief.", "max_output_tokens": 6}, nil},
		{"responses_stream.golden", "/v1/responses", map[string]any{"input": "Say something.", "max_output_tokens": 6, "stream": true}, nil},
		{"responses_tool_stream.golden", "/v1/responses", map[string]any{"input": "Weather?", "max_output_tokens": 4, "stream": true,
			"tools": []any{responsesWeather}}, nil},
		{"messages.golden", "/v1/messages", map[string]any{"messages": user, "system": "Be brief.", "max_tokens": 6}, anthropicHeader},
		{"messages_stream.golden", "/v1/messages", map[string]any{"messages": user, "max_tokens": 6, "stream": true}, anthropicHeader},
		{"messages_tool_stream.golden", "/v1/messages", map[string]any{"messages": user, "max_tokens": 4, "stream": true,
			"tools": []any{messagesWeather}, "tool_choice": map[string]any{"type": "any"}}, anthropicHeader},
		{"chat_tool.golden", "/v1/chat/completions", map[string]any{"messages": user, "max_tokens": 4, "tools": []any{chatWeather}}, nil},
		{"chat_tool_stream.golden", "/v1/chat/completions", map[string]any{"messages": user, "max_tokens": 4, "stream": true,
			"stream_options": map[string]any{"include_usage": true}, "tools": []any{chatWeather}}, nil},
		{"embeddings.golden", "/v1/embeddings", map[string]any{"input": []string{"one", "two"}, "dimensions": 4}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(zeroCost(Config{Seed: 7}))
			w := serve(s, "POST", tt.path, body(t, tt.req), tt.header)
			s.Close()
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			checkGolden(t, tt.name, createdAt.ReplaceAllString(w.Body.String(), `"created_at":0`))
		})
	}
}

// typedEvents splits a stream of typed events into their types, checking
// that each event line names the data's type.
func typedEvents(t *testing.T, stream string) []string {
	t.Helper()
	var types []string
	for _, ev := range strings.Split(strings.TrimSuffix(stream, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(strings.TrimPrefix(ev, "event: "), "\ndata: ")
		var d struct{ Type string }
		if !ok || json.Unmarshal([]byte(data), &d) != nil || d.Type != name {
			t.Fatalf("malformed event %q", ev)
		}
		types = append(types, name)
	}
	return types
}

func TestResponsesStreamShape(t *testing.T) {
	s := New(zeroCost(Config{StopFraction: -1}))
	defer s.Close()
	w := serve(s, "POST", "/v1/responses", body(t, map[string]any{"input": "hi", "max_output_tokens": 3, "stream": true}), nil)
	got := strings.Join(typedEvents(t, w.Body.String()), " ")
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.delta response.output_text.delta response.output_text.done " +
		"response.content_part.done response.output_item.done response.incomplete"
	if got != want {
		t.Errorf("events = %s\nwant %s", got, want)
	}
}

func TestMessagesStreamShape(t *testing.T) {
	s := New(zeroCost(Config{StopFraction: -1, TokensPerChunk: 2}))
	defer s.Close()
	req := map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}}, "max_tokens": 3, "stream": true}
	w := serve(s, "POST", "/v1/messages", body(t, req), anthropicHeader)
	got := strings.Join(typedEvents(t, w.Body.String()), " ")
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got != want {
		t.Errorf("events = %s\nwant %s", got, want)
	}
	if !strings.Contains(w.Body.String(), `"stop_reason":"max_tokens"`) || !strings.Contains(w.Body.String(), `"output_tokens":3`) {
		t.Errorf("message_delta lacks the stop reason or usage:\n%s", w.Body)
	}
}

// TestMessagesAuthAndErrors: the Messages route wants x-api-key and
// anthropic-version, and answers errors in Anthropic's shape.
func TestMessagesAuthAndErrors(t *testing.T) {
	s := New(zeroCost(Config{APIKey: "sk-ant"}))
	defer s.Close()
	user := []map[string]any{{"role": "user", "content": "hi"}}
	ok := body(t, map[string]any{"messages": user, "max_tokens": 3})
	tests := map[string]struct {
		body   string
		header map[string]string
		status int
		typ    string
		substr string
	}{
		"bearer is not enough": {ok, map[string]string{"Authorization": "Bearer sk-ant", "Anthropic-Version": AnthropicVersion},
			401, "authentication_error", "x-api-key"},
		"no version": {ok, map[string]string{"X-Api-Key": "sk-ant"}, 400, "invalid_request_error", "anthropic-version: header is required"},
		"no max_tokens": {body(t, map[string]any{"messages": user}), map[string]string{"X-Api-Key": "sk-ant", "Anthropic-Version": AnthropicVersion},
			400, "invalid_request_error", "max_tokens: Field required"},
		"system role": {body(t, map[string]any{"messages": []map[string]any{{"role": "system", "content": "x"}, user[0]}, "max_tokens": 3}),
			map[string]string{"X-Api-Key": "sk-ant", "Anthropic-Version": AnthropicVersion}, 400, "invalid_request_error", "unexpected role"},
		"unknown model": {body(t, map[string]any{"model": "claude-x", "messages": user, "max_tokens": 3}),
			map[string]string{"X-Api-Key": "sk-ant", "Anthropic-Version": AnthropicVersion}, 404, "not_found_error", "does not exist"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := serve(s, "POST", "/v1/messages", tt.body, tt.header)
			var e anthropicErrorBody
			if w.Code != tt.status || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Type != "error" || e.Error.Type != tt.typ ||
				!strings.Contains(e.Error.Message, tt.substr) {
				t.Errorf("got %d %s, want %d %s containing %q", w.Code, w.Body, tt.status, tt.typ, tt.substr)
			}
		})
	}
	w := serve(s, "POST", "/v1/messages", ok, map[string]string{"X-Api-Key": "sk-ant", "Anthropic-Version": AnthropicVersion})
	if w.Code != 200 {
		t.Errorf("with x-api-key: %d %s", w.Code, w.Body)
	}
}

func TestResponsesRejects(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	for name, tt := range map[string]struct {
		req    map[string]any
		substr string
	}{
		"no input":        {map[string]any{}, "input is required"},
		"empty input":     {map[string]any{"input": ""}, "non-empty content"},
		"file":            {map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_file"}}}}}, "not simulated"},
		"negative limit":  {map[string]any{"input": "hi", "max_output_tokens": -1}, "max_output_tokens must be at least 1"},
		"unknown item":    {map[string]any{"input": []any{map[string]any{"type": "web_search_call"}}}, "not simulated"},
		"named tool gone": {map[string]any{"input": "hi", "tools": []any{responsesWeather}, "tool_choice": map[string]any{"type": "function", "name": "x"}}, "not in tools"},
	} {
		t.Run(name, func(t *testing.T) {
			w := serve(s, "POST", "/v1/responses", body(t, tt.req), nil)
			if w.Code != 400 || !strings.Contains(w.Body.String(), tt.substr) {
				t.Errorf("got %d %s, want 400 containing %q", w.Code, w.Body, tt.substr)
			}
		})
	}
}

// TestToolChoiceRule: auto calls a tool when the user spoke last, not
// after a tool's answer; none never calls; required always does.
func TestToolChoiceRule(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	user := map[string]any{"role": "user", "content": "Weather in Paris?"}
	call := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}}
	result := map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
	for name, tt := range map[string]struct {
		msgs   []any
		choice any
		tool   bool
	}{
		"auto after the user":   {[]any{user}, nil, true},
		"auto after a result":   {[]any{user, call, result}, "auto", false},
		"none":                  {[]any{user}, "none", false},
		"required after result": {[]any{user, call, result}, "required", true},
		"named":                 {[]any{user}, map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}, true},
	} {
		t.Run(name, func(t *testing.T) {
			req := map[string]any{"messages": tt.msgs, "max_tokens": 5, "tools": []any{chatWeather}}
			if tt.choice != nil {
				req["tool_choice"] = tt.choice
			}
			w := serve(s, "POST", "/v1/chat/completions", body(t, req), nil)
			var r struct {
				Choices []struct {
					Message struct {
						Content   string
						ToolCalls []struct {
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					}
					FinishReason string `json:"finish_reason"`
				}
			}
			if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &r) != nil || len(r.Choices) != 1 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			c := r.Choices[0]
			if got := len(c.Message.ToolCalls) == 1; got != tt.tool {
				t.Fatalf("tool call = %v, want %v: %s", got, tt.tool, w.Body)
			}
			if tt.tool {
				var args map[string]string
				f := c.Message.ToolCalls[0].Function
				if f.Name != "get_weather" || json.Unmarshal([]byte(f.Arguments), &args) != nil || args["city"] == "" ||
					c.FinishReason != "tool_calls" || c.Message.Content != "" {
					t.Errorf("call %+v, finish %s: want get_weather({city: words}), tool_calls", f, c.FinishReason)
				}
			}
		})
	}
	w := serve(s, "POST", "/v1/chat/completions", body(t, map[string]any{"messages": []any{user}, "tool_choice": "required"}), nil)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "needs tools") {
		t.Errorf("required without tools: %d %s", w.Code, w.Body)
	}
}

// TestToolCallsDeterministic: an agent's tool calls are a function of
// the request, as a model at temperature 0 would make them: the same
// history gets the same call and arguments, in any order and from another
// server of the same seed; another history gets other arguments.
func TestToolCallsDeterministic(t *testing.T) {
	args := func(s *Server, city string) string {
		t.Helper()
		req := map[string]any{"max_tokens": 8, "tools": []any{chatWeather}, "tool_choice": "required",
			"messages": []any{map[string]any{"role": "user", "content": "Weather in " + city + "?"}}}
		w := serve(s, "POST", "/v1/chat/completions", body(t, req), nil)
		var r struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct {
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &r) != nil || len(r.Choices) != 1 || len(r.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		return r.Choices[0].Message.ToolCalls[0].Function.Arguments
	}
	a, b := New(zeroCost(Config{Seed: 9})), New(zeroCost(Config{Seed: 9}))
	defer a.Close()
	defer b.Close()
	paris := args(a, "Paris")
	oslo := args(a, "Oslo")
	if again, other := args(a, "Paris"), args(b, "Paris"); again != paris || other != paris {
		t.Errorf("arguments for one history: %s, then %s, from another server %s; want them equal", paris, again, other)
	}
	if oslo == paris {
		t.Errorf("arguments %s for two histories, want them to differ", oslo)
	}
}

func TestEmbeddings(t *testing.T) {
	s := New(zeroCost(Config{Seed: 3}))
	defer s.Close()
	embed := func(req map[string]any) (int, []json.RawMessage, int) {
		w := serve(s, "POST", "/v1/embeddings", body(t, req), nil)
		var r struct {
			Data []struct {
				Index     int
				Embedding json.RawMessage
			}
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			}
		}
		_ = json.Unmarshal(w.Body.Bytes(), &r)
		vs := make([]json.RawMessage, len(r.Data))
		for i, d := range r.Data {
			if d.Index != i {
				t.Errorf("data[%d].index = %d", i, d.Index)
			}
			vs[i] = d.Embedding
		}
		return w.Code, vs, r.Usage.PromptTokens
	}
	code, one, tokens := embed(map[string]any{"input": "hello world"})
	if code != 200 || len(one) != 1 || tokens != CountTokens("hello world") {
		t.Fatalf("one input: %d, %d vectors, %d tokens", code, len(one), tokens)
	}
	var v []float64
	if err := json.Unmarshal(one[0], &v); err != nil || len(v) != DefaultEmbeddingDims {
		t.Fatalf("vector of %d (%v), want %d", len(v), err, DefaultEmbeddingDims)
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	if math.Abs(norm-1) > 1e-4 {
		t.Errorf("|v|² = %v, want 1", norm)
	}
	_, two, _ := embed(map[string]any{"input": []string{"other", "hello world"}})
	if len(two) != 2 || string(two[1]) != string(one[0]) {
		t.Errorf("the vector of an input depends on its batch")
	}
	_, b64, _ := embed(map[string]any{"input": "x", "encoding_format": "base64", "dimensions": 8})
	var s64 string
	if len(b64) != 1 || json.Unmarshal(b64[0], &s64) != nil {
		t.Fatalf("base64: %s", b64)
	}
	if raw, err := base64.StdEncoding.DecodeString(s64); err != nil || len(raw) != 32 {
		t.Errorf("base64 of %d bytes (%v), want 8 float32s", len(raw), err)
	}
	for name, req := range map[string]map[string]any{
		"no input":     {},
		"empty list":   {"input": []string{}},
		"blank":        {"input": []string{"a", " "}},
		"token arrays": {"input": []int{1, 2}},
		"dimensions":   {"input": "a", "dimensions": 0},
		"format":       {"input": "a", "encoding_format": "int8"},
	} {
		if code, _, _ := embed(req); code != 400 {
			t.Errorf("%s: status %d, want 400", name, code)
		}
	}
}
