package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func ptrTo[T any](v T) *T { return &v }

// Each record says what its request asked for, as sent, and what usage
// reported; with TruthPrompts, its prompt text.
func TestTruthLogRequestFields(t *testing.T) {
	var log bytes.Buffer
	s := New(zeroCost(Config{TruthLog: &log, TruthPrompts: true}))
	long := strings.Repeat("a shared document ", 40)
	user := func(texts ...string) []map[string]any {
		var msgs []map[string]any
		for i, text := range texts {
			role := []string{"user", "assistant"}[i%2]
			msgs = append(msgs, map[string]any{"role": role, "content": text})
		}
		return msgs
	}
	tests := []struct {
		name, path string
		req        map[string]any
		header     map[string]string
		want       TruthRecord
	}{
		{"chat with vLLM's extensions", "/v1/chat/completions", map[string]any{"max_tokens": 7, "min_tokens": 2, "ignore_eos": true,
			"messages": []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}}}, nil,
			TruthRecord{MaxTokens: 7, MinTokens: ptrTo(2), IgnoreEOS: ptrTo(true), Prompt: "Be brief.\nHello there"}},
		{"max_completion_tokens wins", "/v1/chat/completions", map[string]any{"max_completion_tokens": 5, "max_tokens": 9,
			"ignore_eos": false, "messages": user("Hi")}, nil,
			TruthRecord{MaxTokens: 5, IgnoreEOS: ptrTo(false), Prompt: "Hi"}},
		{"no max_tokens", "/v1/chat/completions", map[string]any{"messages": user("Hi", "Hello", "Bye")}, nil,
			TruthRecord{Prompt: "Hi\nHello\nBye"}},
		{"completions", "/v1/completions", map[string]any{"prompt": "Once upon", "max_tokens": 4, "min_tokens": 0}, nil,
			TruthRecord{MaxTokens: 4, MinTokens: ptrTo(0), Prompt: "Once upon"}},
		{"responses", "/v1/responses", map[string]any{"instructions": "Be brief.", "input": "Hi", "max_output_tokens": 6}, nil,
			TruthRecord{MaxTokens: 6, Prompt: "Be brief.\nHi"}},
		{"messages", "/v1/messages", map[string]any{"system": "Be brief.", "max_tokens": 3, "messages": user("Hi", "Hello", "Bye")},
			anthropicHeader, TruthRecord{MaxTokens: 3, Prompt: "Be brief.\nHi\nHello\nBye"}},
		{"rejected", "/v1/chat/completions", map[string]any{"messages": []any{}, "max_tokens": 3}, nil, TruthRecord{Status: 400}},
		{"long, first", "/v1/chat/completions", map[string]any{"max_tokens": 2, "messages": user(long + "one")}, nil,
			TruthRecord{MaxTokens: 2, Prompt: long + "one"}},
		{"long, again", "/v1/chat/completions", map[string]any{"max_tokens": 2, "messages": user(long + "two")}, nil,
			TruthRecord{MaxTokens: 2, Prompt: long + "two"}},
	}
	var usages []map[string]any
	for _, tt := range tests {
		w := serve(s, http.MethodPost, tt.path, body(t, tt.req), tt.header)
		var resp struct {
			Usage map[string]any `json:"usage"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &resp)
		usages = append(usages, resp.Usage)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	recs := truthRecords(t, &log)
	if len(recs) != len(tests) {
		t.Fatalf("%d records, want %d", len(recs), len(tests))
	}
	for i, tt := range tests {
		got, want := recs[i], tt.want
		want.PromptTokens, want.CachedTokens = usageTokens(usages[i])
		if want.Status == 0 {
			want.Status = http.StatusOK
		}
		if got.Status != want.Status || got.MaxTokens != want.MaxTokens || !samePtr(got.MinTokens, want.MinTokens) ||
			!samePtr(got.IgnoreEOS, want.IgnoreEOS) || got.Prompt != want.Prompt ||
			got.PromptTokens != want.PromptTokens || got.CachedTokens != want.CachedTokens {
			t.Errorf("%s: record %s\nwant status %d, max_tokens %d, min_tokens %s, ignore_eos %s, prompt %q, %d prompt tokens, %d cached",
				tt.name, jsonOf(got), want.Status, want.MaxTokens, jsonOf(want.MinTokens), jsonOf(want.IgnoreEOS), want.Prompt,
				want.PromptTokens, want.CachedTokens)
		}
	}
	if r := recs[len(recs)-1]; r.CachedTokens == 0 || r.PromptTokens == 0 {
		t.Errorf("the second long prompt: %d of %d prompt tokens cached, want some", r.CachedTokens, r.PromptTokens)
	}
}

// usageTokens are a usage object's prompt and cached tokens, in any
// API's words.
func usageTokens(u map[string]any) (prompt, cached int) {
	num := func(v any) int { f, _ := v.(float64); return int(f) }
	if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
		cached = num(d["cached_tokens"])
	}
	if d, ok := u["input_tokens_details"].(map[string]any); ok {
		cached = num(d["cached_tokens"])
	}
	if _, ok := u["cache_read_input_tokens"]; ok {
		cached = num(u["cache_read_input_tokens"])
		return num(u["input_tokens"]) + cached, cached
	}
	return num(u["prompt_tokens"]) + num(u["input_tokens"]), cached
}

func samePtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// Without TruthPrompts no prompt is written; the counts always are, and
// the extensions only when sent.
func TestTruthLogLine(t *testing.T) {
	var log bytes.Buffer
	s := New(zeroCost(Config{TruthLog: &log}))
	serve(s, http.MethodPost, "/v1/chat/completions", chatBody(t, "Hello", map[string]any{"max_tokens": 2}), nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(log.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, log.Bytes())
	}
	for _, key := range []string{"max_tokens", "prompt_tokens", "cached_tokens", "arrival", "status", "tokens", "e2e_ms", "complete"} {
		if _, ok := line[key]; !ok {
			t.Errorf("no %q in %s", key, log.Bytes())
		}
	}
	for _, key := range []string{"prompt", "min_tokens", "ignore_eos"} {
		if _, ok := line[key]; ok {
			t.Errorf("%q in %s", key, log.Bytes())
		}
	}
	if line["max_tokens"] != 2.0 || line["prompt_tokens"] != float64(CountTokens("Hello")+messageOverhead+replyPrimer) {
		t.Errorf("line %s: want max_tokens 2 and the prompt's tokens", log.Bytes())
	}
}
