package sim

import (
	"encoding/json"
	goldenfile "github.com/llmload/llmload/engine/golden"
	"regexp"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
)

// created holds wall-clock times, the one part of a response that varies.
var created = regexp.MustCompile(`"created":\d+`)

// checkGolden compares got, with times masked, to testdata/name.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, []byte(created.ReplaceAllString(got, `"created":0`)))
}

// events splits an SSE body into its data payloads.
func events(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]any
	}{
		{"completion.golden", map[string]any{"max_tokens": 6}},
		{"stream.golden", map[string]any{"max_tokens": 6, "stream": true, "stream_options": map[string]any{"include_usage": true}}},
	}
	for _, tt := range tests {
		s := New(zeroCost(Config{Seed: 7}))
		w := serve(s, "POST", "/v1/chat/completions", chatBody(t, "Say something.", tt.extra), nil)
		s.Close()
		checkGolden(t, tt.name, w.Body.String())
	}
}

func TestStreamShape(t *testing.T) {
	tests := []struct {
		name           string
		perChunk       int
		includeUsage   bool
		wantContentEvs int
	}{
		{"one token per chunk", 1, true, 10},
		{"three tokens per chunk", 3, true, 4},
		{"no usage", 1, false, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(zeroCost(Config{TokensPerChunk: tt.perChunk, StopFraction: -1}))
			defer s.Close()
			extra := map[string]any{"max_tokens": 10, "stream": true}
			if tt.includeUsage {
				extra["stream_options"] = map[string]any{"include_usage": true}
			}
			w := serve(s, "POST", "/v1/chat/completions", chatBody(t, "hello", extra), nil)
			if got, want := w.Header().Get("Content-Type"), "text/event-stream"; got != want {
				t.Fatalf("Content-Type = %q, want %q", got, want)
			}
			checkStream(t, events(t, w.Body.String()), tt.wantContentEvs, tt.includeUsage)
		})
	}
}

// checkStream checks the order of a stream's events: role, content,
// finish, optional usage, [DONE].
func checkStream(t *testing.T, evs []string, contents int, withUsage bool) {
	t.Helper()
	tail := 2 // finish and [DONE]
	if withUsage {
		tail++
	}
	if got, want := len(evs), 1+contents+tail; got != want {
		t.Fatalf("%d events, want %d: %q", got, want, evs)
	}
	chunks := make([]openai.ChatCompletionStreamResponse, len(evs)-1)
	for i := range chunks {
		if err := json.Unmarshal([]byte(evs[i]), &chunks[i]); err != nil {
			t.Fatalf("event %d %q: %v", i, evs[i], err)
		}
	}
	if d := chunks[0].Choices[0].Delta; d.Role != "assistant" || d.Content != "" {
		t.Errorf("first delta = %+v, want role assistant and no content", d)
	}
	for i, c := range chunks[1 : 1+contents] {
		if ch := c.Choices[0]; ch.Delta.Content == "" || ch.FinishReason != "" {
			t.Errorf("content event %d = %+v, want text and no finish_reason", i, ch)
		}
	}
	if got, want := chunks[1+contents].Choices[0].FinishReason, openai.FinishReasonLength; got != want {
		t.Errorf("finish_reason = %q, want %q", got, want)
	}
	if withUsage {
		u := chunks[len(chunks)-1]
		if u.Usage == nil || u.Usage.CompletionTokens != 10 || u.Choices == nil || len(u.Choices) != 0 {
			t.Errorf("usage event = %s, want usage with 10 completion tokens and choices []", evs[len(evs)-2])
		}
		if !strings.Contains(evs[len(evs)-2], `"choices":[]`) {
			t.Errorf("usage event %s lacks an empty choices array", evs[len(evs)-2])
		}
	}
	if got, want := evs[len(evs)-1], "[DONE]"; got != want {
		t.Errorf("last event = %q, want %q", got, want)
	}
}

// answer returns the text, finish reason and completion tokens of a
// non-streamed request.
func answer(t *testing.T, s *Server, body string) (string, openai.FinishReason, int) {
	t.Helper()
	w := serve(s, "POST", "/v1/chat/completions", body, nil)
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || w.Code != 200 {
		t.Fatalf("status %d, body %s: %v", w.Code, w.Body, err)
	}
	ch := resp.Choices[0]
	return ch.Message.Content, ch.FinishReason, resp.Usage.CompletionTokens
}

func TestStreamedTextEqualsAnswer(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	text, _, _ := answer(t, s, chatBody(t, "hello", map[string]any{"max_tokens": 30}))
	w := serve(s, "POST", "/v1/chat/completions", chatBody(t, "hello", map[string]any{"max_tokens": 30, "stream": true}), nil)
	var streamed strings.Builder
	for _, ev := range events(t, w.Body.String()) {
		var c openai.ChatCompletionStreamResponse
		if ev != "[DONE]" && json.Unmarshal([]byte(ev), &c) == nil && len(c.Choices) > 0 {
			streamed.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if got, want := streamed.String(), text; got != want {
		t.Errorf("streamed text = %q, want %q", got, want)
	}
}

func TestDeterminism(t *testing.T) {
	body := chatBody(t, "What is a queue?", map[string]any{"max_tokens": 40})
	other := chatBody(t, "What is a batch?", map[string]any{"max_tokens": 40})
	run := func(seed int64, bodies ...string) []string {
		s := New(zeroCost(Config{Seed: seed}))
		defer s.Close()
		var out []string
		for _, b := range bodies {
			text, _, _ := answer(t, s, b)
			out = append(out, text)
		}
		return out
	}
	a, b, c := run(1, body, other), run(1, other, body), run(2, body)
	if got, want := b[1], a[0]; got != want {
		t.Errorf("same seed, other order: %q, want %q", got, want)
	}
	if a[0] == a[1] {
		t.Errorf("different prompts got the same answer %q", a[0])
	}
	if c[0] == a[0] {
		t.Errorf("different seeds got the same answer %q", a[0])
	}
}

func TestOutputLengths(t *testing.T) {
	s := New(zeroCost(Config{MinOutputTokens: 5}))
	defer s.Close()
	const maxTokens = 50
	finishes := map[openai.FinishReason]int{}
	for i := range 200 {
		body := chatBody(t, strings.Repeat("q", i+1), map[string]any{"max_tokens": maxTokens})
		text, finish, n := answer(t, s, body)
		finishes[finish]++
		// A token is a word or a sentence's full stop.
		if got, want := len(strings.Fields(text))+strings.Count(text, "."), n; got != want {
			t.Errorf("%d words and stops for %d completion tokens", got, want)
		}
		switch {
		case finish == openai.FinishReasonLength && n != maxTokens,
			finish == openai.FinishReasonStop && (n < 5 || n >= maxTokens):
			t.Errorf("finish %q with %d tokens, max %d", finish, n, maxTokens)
		}
	}
	// StopFraction 0.25 of 200: both kinds appear (binomial tail < 1e-20).
	if finishes[openai.FinishReasonStop] < 20 || finishes[openai.FinishReasonLength] < 100 {
		t.Errorf("finish reasons %v, want about 50 stop and 150 length", finishes)
	}
}

// BenchmarkStream measures the server's own CPU cost of a 200-token stream,
// with the simulated time taken out.
func BenchmarkStream(b *testing.B) {
	s := New(zeroCost(Config{StopFraction: -1}))
	defer s.Close()
	body := `{"messages":[{"role":"user","content":"benchmark"}],"max_tokens":200,"stream":true,"stream_options":{"include_usage":true}}`
	b.ReportAllocs()
	for b.Loop() {
		if w := serve(s, "POST", "/v1/chat/completions", body, nil); w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*200), "ns/token")
}
