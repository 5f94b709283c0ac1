package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
)

func TestValidation(t *testing.T) {
	s := New(zeroCost(Config{MaxContext: 1000, MaxBodyBytes: 16 << 10}))
	defer s.Close()
	user := func(content any) string {
		b, _ := json.Marshal(map[string]any{"messages": []map[string]any{{"role": "user", "content": content}}})
		return string(b)
	}
	withUser := func(extra string) string { return `{"messages":[{"role":"user","content":"hi"}],` + extra + `}` }
	tests := []struct {
		name, body string
		want       int
		param      string // the error's param, "" for none
		message    string // part of the error message
	}{
		{"malformed JSON", `{"messages":`, 400, "", "invalid JSON"},
		{"empty body", ``, 400, "", "invalid JSON"},
		{"not an object", `[1,2]`, 400, "", "invalid JSON"},
		{"trailing garbage", withUser(`"n":1`) + `x`, 400, "", "invalid JSON"},
		{"content is a number", `{"messages":[{"role":"user","content":7}]}`, 400, "", "invalid JSON"},
		{"null", `null`, 400, "messages", "non-empty array"},
		{"missing messages", `{"model":"llmload-sim"}`, 400, "messages", "non-empty array"},
		{"empty messages", `{"messages":[]}`, 400, "messages", "non-empty array"},
		{"empty user content", user(""), 400, "messages", "non-empty content"},
		{"blank user content", user(" \n\t"), 400, "messages", "non-empty content"},
		{"empty content parts", user([]any{}), 400, "messages", "non-empty content"},
		{"system only", `{"messages":[{"role":"system","content":"be brief"}]}`, 400, "messages", "user message"},
		{"unknown role", `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "messages[0].role", "unknown role"},
		{"empty role", `{"messages":[{"role":"user","content":"a"},{"content":"hi"}]}`, 400, "messages[1].role", "unknown role"},
		{"file part", user([]map[string]any{{"type": "file", "file": map[string]string{"file_id": "f"}}}), 400, "messages[0].content[0].type", "unknown content part type"},
		{"unknown part", user([]map[string]any{{"type": "audio"}}), 400, "messages[0].content[0].type", "unknown content part"},
		{"negative max_tokens", withUser(`"max_tokens":-1`), 400, "max_tokens", "at least 1"},
		{"negative max_completion_tokens", withUser(`"max_completion_tokens":-5`), 400, "max_completion_tokens", "at least 1"},
		{"over the context", withUser(`"max_tokens":993`), 400, "max_tokens", "maximum context length is 1000 tokens"},
		{"huge max_tokens", withUser(`"max_tokens":9223372036854775807`), 400, "max_tokens", "maximum context length"},
		{"prompt over the context", user(strings.Repeat("abcd", 1000)), 400, "messages", "maximum context length is 1000 tokens"},
		{"n of 2", withUser(`"n":2`), 400, "n", "n must be 1"},
		{"temperature too high", withUser(`"temperature":2.5`), 400, "temperature", "between 0 and 2"},
		{"negative top_p", withUser(`"top_p":-0.1`), 400, "top_p", "top_p"},
		{"stream_options without stream", withUser(`"stream_options":{"include_usage":true}`), 400, "stream_options", "stream"},
		{"unknown model", withUser(`"model":"gpt-9"`), 404, "model", `"gpt-9" does not exist`},
		{"body too large", user(strings.Repeat("x", 20<<10)), 413, "", "exceeds 16384 bytes"},
		{"valid", withUser(`"max_tokens":5`), 200, "", ""},
		{"valid: model named", withUser(`"model":"llmload-sim"`), 200, "", ""},
		{"valid: zero-width user text", user("\u200b"), 200, "", ""},
		{"valid: text parts", user([]map[string]any{{"type": "text", "text": "hello"}}), 200, "", ""},
		{"valid: max_tokens fills the context", withUser(`"max_tokens":992`), 200, "", ""},
		{"valid: empty assistant turn", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""},{"role":"tool","content":""}],"max_tokens":2}`, 200, "", ""},
		{"valid: unknown fields ignored", withUser(`"max_tokens":2,"frobnicate":true,"stop":["x"]`), 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s, "POST", "/v1/chat/completions", tt.body, nil)
			if got, want := w.Code, tt.want; got != want {
				t.Fatalf("status = %d, want %d; body %s", got, want, w.Body)
			}
			if tt.want == 200 {
				return
			}
			e := checkErrorBody(t, tt.want, w.Body.Bytes())
			if got, want := e["param"], any(tt.param); tt.param != "" && got != want {
				t.Errorf("param = %v, want %q", got, want)
			}
			if got, want := e["type"], any("invalid_request_error"); got != want {
				t.Errorf("type = %v, want %v", got, want)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.message) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.message)
			}
		})
	}
}

func TestPromptTokens(t *testing.T) {
	tests := []struct {
		msgs []openai.ChatCompletionMessage
		want int
	}{
		{[]openai.ChatCompletionMessage{{Role: "user", Content: "abcd"}}, replyPrimer + messageOverhead + 1},
		{[]openai.ChatCompletionMessage{{Role: "system", Content: ""}, {Role: "user", Content: "机器学习"}}, replyPrimer + 2*messageOverhead + 4},
	}
	for _, tt := range tests {
		got, err := promptTokens(tt.msgs)
		if err != nil {
			t.Fatal(err)
		}
		if want := tt.want; got != want {
			t.Errorf("promptTokens(%v) = %d, want %d", tt.msgs, got, want)
		}
	}
}

func TestDefaultMaxTokensFitsTheContext(t *testing.T) {
	cfg := New(Config{MaxContext: 100, DefaultMaxTokens: 80, StopFraction: -1}).cfg
	tests := []struct {
		content string
		want    int
	}{
		{"hi", 80}, // 8 prompt tokens leave 92
		{strings.Repeat("abcd", 40), 100 - 40 - 7}, // 47 prompt tokens leave 53
	}
	for _, tt := range tests {
		c, aerr := parseCompletion(&cfg, []byte(`{"messages":[{"role":"user","content":"`+tt.content+`"}]}`))
		if aerr != nil {
			t.Fatal(aerr)
		}
		if got, want := c.outputTokens, tt.want; got != want {
			t.Errorf("output tokens for a %d-byte prompt = %d, want %d", len(tt.content), got, want)
		}
	}
}

// FuzzChatCompletion sends arbitrary bodies through the whole handler: it
// must never panic, and must answer either a well-formed completion or a
// well-formed error.
func FuzzChatCompletion(f *testing.F) {
	seeds := []string{
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":4}`,
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":3}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},{"type":"video_url","video_url":{"url":"data:video/mp4;base64,AAAA"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"input_audio"}]}]}`,
		`{"messages":[{"role":"user","content":null}],"max_tokens":-1}`,
		`{"messages":[{"role":"user","content":"x"}],"max_tokens":1e30}`,
		`{"messages":[{"role":"user","content":"x"}],"seed":-9,"temperature":0,"top_p":1,"n":1}`,
		`{"model":"","messages":[{"role":"tool","content":"","tool_calls":[{"id":"1"}]}]}`,
		`{"messages":{"role":"user"}}`,
		`{"response_format":{"type":"json_schema","json_schema":{"schema":[]}},"messages":[{"role":"user","content":"x"}]}`,
		"\x00\xff",
		`"`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	s := New(zeroCost(Config{MaxContext: 2048}))
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		w := serve(s, "POST", "/v1/chat/completions", string(body), nil)
		switch {
		case w.Code >= 400:
			checkErrorBody(t, w.Code, w.Body.Bytes())
		case w.Header().Get("Content-Type") == "text/event-stream":
			if !strings.HasSuffix(w.Body.String(), "data: [DONE]\n\n") {
				t.Errorf("stream does not end with [DONE]: %q", w.Body)
			}
		default:
			var resp openai.ChatCompletionResponse
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatalf("status %d, body %q: %v", w.Code, w.Body, err)
			}
			if u := resp.Usage; u.CompletionTokens < 1 || u.PromptTokens+u.CompletionTokens > 2048 {
				t.Errorf("usage %+v outside the context", u)
			}
		}
	})
}
