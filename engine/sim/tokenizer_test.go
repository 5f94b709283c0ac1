package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/tokenize"
)

func codec(t testing.TB, name string) tokenize.Codec {
	t.Helper()
	c, err := tokenize.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chatUsage sends a non-streamed chat request and returns its usage.
func chatUsage(t *testing.T, s *Server, body string) (prompt, cached int) {
	t.Helper()
	w := serve(s, http.MethodPost, "/v1/chat/completions", body, nil)
	var resp struct {
		Usage struct {
			PromptTokens  int `json:"prompt_tokens"`
			PromptDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &resp) != nil {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if d := resp.Usage.PromptDetails; d != nil {
		cached = d.CachedTokens
	}
	return resp.Usage.PromptTokens, cached
}

// With a tokenizer, prompt tokens are the codec's count of each message's
// text plus the chat template's tokens, on every chat-shaped API; a
// completions prompt is prefilled as it is, without a template, so a
// prompt built to n tokens is n tokens at the server.
func TestTokenizerCountsPromptTokens(t *testing.T) {
	for _, name := range []string{"cl100k_base", "o200k_base"} {
		c := codec(t, name)
		s := New(zeroCost(Config{Tokenizer: name}))
		system, question := "You are a terse assistant.", "什么是机器学习？ Explain KV caches, briefly — 2 lines."
		want := c.Count(system) + c.Count(question) + 2*messageOverhead + replyPrimer
		tests := []struct {
			path, body string
			header     map[string]string
			want       int
		}{
			{"/v1/chat/completions", body(t, map[string]any{"max_tokens": 2, "messages": []map[string]any{
				{"role": "system", "content": system}, {"role": "user", "content": question}}}), nil, want},
			{"/v1/completions", body(t, map[string]any{"max_tokens": 2, "prompt": question}), nil, c.Count(question)},
			{"/v1/responses", body(t, map[string]any{"max_output_tokens": 2, "instructions": system, "input": question}), nil, want},
			{"/v1/messages", body(t, map[string]any{"max_tokens": 2, "system": system, "messages": []map[string]any{
				{"role": "user", "content": question}}}), anthropicHeader, want},
			{"/v1/embeddings", body(t, map[string]any{"input": []string{system, question}}), nil, c.Count(system) + c.Count(question)},
		}
		for _, tt := range tests {
			w := serve(s, http.MethodPost, tt.path, tt.body, tt.header)
			var resp struct {
				Usage map[string]any `json:"usage"`
			}
			if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &resp) != nil {
				t.Fatalf("%s %s: status %d: %s", name, tt.path, w.Code, w.Body)
			}
			got := resp.Usage["prompt_tokens"]
			if got == nil { // Anthropic's input_tokens leaves the cached ones out
				read, _ := resp.Usage["cache_read_input_tokens"].(float64)
				got = resp.Usage["input_tokens"].(float64) + read
			}
			if got != float64(tt.want) {
				t.Errorf("%s %s: prompt tokens %v, want %d (usage %v)", name, tt.path, got, tt.want, resp.Usage)
			}
		}
		s.Close()
	}
}

// words is n one-token words of cl100k_base, each with its leading space.
func words(word string, n int) string { return strings.Repeat(" "+word, n) }

// Two prompts that share their first k tokens share the blocks those
// tokens and the template's 3 tokens before the text fill: the second
// finds floor((3+k)/16) blocks in the cache, as in vLLM.
func TestTokenizerPrefixCacheHits(t *testing.T) {
	const tail = 60 // tokens after the shared ones, so that no prompt is cached whole
	c := codec(t, "cl100k_base")
	tests := []struct {
		shared, want int
	}{
		{0, 0},
		{12, 0},
		{13, BlockTokens},
		{15, BlockTokens},
		{16, BlockTokens},
		{29, 2 * BlockTokens},
		{100, 6 * BlockTokens},
	}
	for _, tt := range tests {
		first := words("alpha", tt.shared) + words("red", tail)
		second := words("alpha", tt.shared) + words("blue", tail)
		if got := commonPrefix(c.Encode(first), c.Encode(second)); got != tt.shared {
			t.Fatalf("the prompts share %d tokens, want %d", got, tt.shared)
		}
		s := New(zeroCost(Config{Tokenizer: "cl100k_base"}))
		chatUsage(t, s, chatBody(t, first, map[string]any{"max_tokens": 1}))
		prompt, cached := chatUsage(t, s, chatBody(t, second, map[string]any{"max_tokens": 1}))
		if cached != tt.want || prompt != tt.shared+tail+messageOverhead+replyPrimer {
			t.Errorf("sharing %d tokens: %d of %d prompt tokens cached, want %d of %d",
				tt.shared, cached, prompt, tt.want, tt.shared+tail+messageOverhead+replyPrimer)
		}
		if got := s.Stats().CachedTokens; got != int64(tt.want) {
			t.Errorf("sharing %d tokens: Stats().CachedTokens = %d, want %d", tt.shared, got, tt.want)
		}
		s.Close()
	}
}

func commonPrefix(a, b []uint) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// A prompt seen before is cached up to its last token, never whole, so
// its prefill still computes one; a system prompt shared across users is
// reused by all of them.
func TestTokenizerPrefixCacheWholeAndSystem(t *testing.T) {
	// n words and 7 template tokens: 16 tokens are one block, but not
	// cacheable whole; 32 are two, of which one is cacheable.
	for _, n := range []int{9, 10, 25, 29, 200} {
		s := New(zeroCost(Config{Tokenizer: "cl100k_base"}))
		b := chatBody(t, words("alpha", n), map[string]any{"max_tokens": 1})
		chatUsage(t, s, b)
		prompt, cached := chatUsage(t, s, b)
		if want := (prompt - 1) / BlockTokens * BlockTokens; cached != want {
			t.Errorf("%d words twice: %d of %d cached, want %d", n, cached, prompt, want)
		}
		s.Close()
	}
	s := New(zeroCost(Config{Tokenizer: "cl100k_base"}))
	defer s.Close()
	system := words("policy", 61) // 3 + 61 + 1 = 65 tokens: 4 blocks, and the 65th token
	for i, want := range []int{0, 4 * BlockTokens, 4 * BlockTokens} {
		b := body(t, map[string]any{"max_tokens": 1, "messages": []map[string]any{
			{"role": "system", "content": system}, {"role": "user", "content": fmt.Sprintf("user %d asks", i)}}})
		if _, cached := chatUsage(t, s, b); cached != want {
			t.Errorf("user %d: %d cached, want %d", i, cached, want)
		}
	}
}

// A prompt far beyond the context is rejected without being encoded
// whole; one near the window is counted exactly.
func TestTokenizerContextWindow(t *testing.T) {
	s := New(zeroCost(Config{Tokenizer: "cl100k_base", MaxContext: 1000}))
	defer s.Close()
	tests := []struct {
		words, maxTokens, status int
		message                  string
	}{
		{900, 50, http.StatusOK, ""},
		{992, 1, http.StatusOK, ""},             // 999 tokens
		{993, 0, http.StatusBadRequest, "1000"}, // 1000 tokens: no room
		{950, 60, http.StatusBadRequest, "you requested 1017 tokens (957 in the messages, 60 in the completion)"},
		{200_000, 1, http.StatusBadRequest, "more than 1000 tokens"},
	}
	for _, tt := range tests {
		extra := map[string]any{}
		if tt.maxTokens > 0 {
			extra["max_tokens"] = tt.maxTokens
		}
		w := serve(s, http.MethodPost, "/v1/chat/completions", chatBody(t, words("alpha", tt.words), extra), nil)
		if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.message) {
			t.Errorf("%d words, max_tokens %d: status %d, %.300s; want %d with %q", tt.words, tt.maxTokens, w.Code, w.Body, tt.status, tt.message)
		}
	}
	if ids, whole := encodeWithin(codec(t, "cl100k_base"), words("alpha", 200_000), 1000); whole || len(ids) > 20_000 {
		t.Errorf("a 200,000-token text against a room of 1,000: %d tokens encoded, whole %v", len(ids), whole)
	}
	w := serve(s, http.MethodPost, "/v1/embeddings", body(t, map[string]any{"input": words("alpha", 200_000)}), nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "has more than 1000 tokens") {
		t.Errorf("an overlong embedding input: %d %s", w.Code, w.Body)
	}
}

func TestConfigTokenizer(t *testing.T) {
	for _, name := range []string{"", TokenizerNone, "cl100k_base", "o200k_base"} {
		if err := (Config{Tokenizer: name}).Validate(); err != nil {
			t.Errorf("Tokenizer %q: %v", name, err)
		}
	}
	for _, name := range []string{"cl100k", "testdata/missing/tokenizer.json"} {
		err := (Config{Tokenizer: name}).Validate()
		if err == nil || !strings.Contains(err.Error(), "tokenizer") {
			t.Errorf("Tokenizer %q: Validate() = %v, want a tokenizer error", name, err)
		}
		if c := (Config{Tokenizer: name}).withDefaults(); c.codec != nil {
			t.Errorf("Tokenizer %q: a codec after withDefaults", name)
		}
	}
	if c := (Config{Tokenizer: TokenizerNone}).withDefaults(); c.codec != nil {
		t.Error("Tokenizer none: a codec after withDefaults")
	}
}

// Every API reports the cached tokens in its own usage, streamed and
// not, and llmload's client reads them into Result.CachedTokens; the
// truth log agrees.
func TestCachedTokensThroughTheClient(t *testing.T) {
	var log bytes.Buffer
	s := New(zeroCost(Config{Tokenizer: "cl100k_base", TruthLog: &log, TruthPrompts: true}))
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := openai.New(openai.Config{BaseURL: base, Tokenizer: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	reqs := map[string]func(text string) *engine.ChatRequest{
		"chat": func(text string) *engine.ChatRequest {
			return &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: text}}, MaxTokens: 3}
		},
		"completions": func(text string) *engine.ChatRequest {
			return &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Prompt: text, MaxTokens: 3}
		},
		"responses": func(text string) *engine.ChatRequest {
			return &engine.ChatRequest{Endpoint: engine.EndpointResponses, Prompt: text, MaxTokens: 3}
		},
		"messages": func(text string) *engine.ChatRequest {
			return &engine.ChatRequest{Endpoint: engine.EndpointMessages, Messages: []engine.Message{{Role: "user", Content: text}}, MaxTokens: 3}
		},
	}
	cl := codec(t, "cl100k_base")
	want := map[string]int{} // cached tokens by prompt
	for name, req := range reqs {
		for _, stream := range []bool{true, false} {
			// A pair of prompts of their own, sharing 100 words and more.
			prefix := fmt.Sprintf("[%s, stream %v]", name, stream) + words("alpha", 100)
			shared := commonPrefix(cl.Encode(prefix+" first"), cl.Encode(prefix+" second"))
			for i, text := range []string{prefix + " first", prefix + " second"} {
				r := req(text)
				r.NoStream = !stream
				res := c.Chat(context.Background(), r)
				want[text] = []int{0, (messageOverhead - 1 + shared) / BlockTokens * BlockTokens}[i]
				if res.Err != nil || res.CachedTokens != want[text] || res.InputTokensSource != engine.TokensFromUsage {
					t.Errorf("%s (stream %v) request %d: err %v, %d cached tokens, input %d from %s; want %d cached",
						name, stream, i+1, res.Err, res.CachedTokens, res.InputTokens, res.InputTokensSource, want[text])
				}
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	recs := truthRecords(t, &log)
	if len(recs) != len(want) {
		t.Fatalf("%d truth records, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		if w, ok := want[r.Prompt]; !ok || r.CachedTokens != w || r.PromptTokens <= 100 {
			t.Errorf("truth record of %.30q: %d of %d prompt tokens cached, want %d", r.Prompt, r.CachedTokens, r.PromptTokens, w)
		}
	}
}

func truthRecords(t *testing.T, log *bytes.Buffer) []TruthRecord {
	t.Helper()
	var recs []TruthRecord
	dec := json.NewDecoder(log)
	for dec.More() {
		var r TruthRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}
