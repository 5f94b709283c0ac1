package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// cumChunk is a vLLM chunk with continuous usage: the cumulative
// completion count after it, or no usage when cum < 0.
func cumChunk(content string, cum int) string {
	usage := "null"
	if cum >= 0 {
		usage = fmt.Sprintf(`{"prompt_tokens":7,"completion_tokens":%d,"total_tokens":%d}`, cum, 7+cum)
	}
	return ev(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":%s}`,
		content, usage))
}

// continuousStream sends a role chunk with usage 0, then one text chunk per
// cumulative count, 5 ms apart, then the final usage.
func continuousStream(texts []string, cums []int, total int) http.Handler {
	writes := []string{cumChunk("", 0)}
	for i := range texts {
		writes = append(writes, cumChunk(texts[i], cums[i]))
	}
	sc := script{steps: append(steps(5*time.Millisecond, writes...), steps(0, finishChunk("stop"), usageChunk(7, total), done())...)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"continuous_usage_stats":true`) {
			http.Error(w, "continuous_usage_stats not asked for: "+string(body), http.StatusBadRequest)
			return
		}
		sc.ServeHTTP(w, r)
	})
}

func TestChatContinuousUsage(t *testing.T) {
	tests := map[string]struct {
		texts []string
		cums  []int
		ks    []int // tokens per gap (0: skipped); nil: TokenITL must be nil
	}{
		"one token per chunk":                {[]string{"a", "b", "c"}, []int{1, 2, 3}, []int{1, 1}},
		"two tokens per chunk":               {[]string{"ab", "cd", "ef"}, []int{2, 4, 6}, []int{2, 2}},
		"uneven chunks":                      {[]string{"a", "bcd", "ef"}, []int{1, 4, 6}, []int{3, 2}},
		"a chunk without a new token":        {[]string{"ab", "c", "de"}, []int{2, 2, 4}, []int{0, 2}},
		"a chunk without usage voids it":     {[]string{"ab", "cd", "ef"}, []int{2, -1, 6}, nil},
		"a count going backwards voids it":   {[]string{"ab", "cd", "ef"}, []int{2, 4, 3}, nil},
		"more tokens than text voids it":     {[]string{"ab", "cd"}, []int{2, 21}, nil},
		"as many tokens as bytes + 16":       {[]string{"ab", "cd"}, []int{2, 20}, []int{18}},
		"no usage in any chunk":              {[]string{"ab", "cd"}, []int{-1, -1}, nil},
		"a single text chunk has no gaps":    {[]string{"abc"}, []int{3}, nil},
		"first chunk without usage voids it": {[]string{"ab", "cd", "ef"}, []int{-1, 4, 6}, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			total := max(tt.cums[len(tt.cums)-1], len(tt.texts))
			srv := serve(t, continuousStream(tt.texts, tt.cums, total))
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.ContinuousUsage = true })
			r := c.Chat(context.Background(), chatReq())
			if r.Err != nil {
				t.Fatalf("Err = %v", r.Err)
			}
			if got, want := r.OutputTokens, total; got != want {
				t.Errorf("OutputTokens = %d, want %d", got, want)
			}
			if got, want := len(r.ITL), len(tt.texts)-1; got != want {
				t.Fatalf("len(ITL) = %d, want %d", got, want)
			}
			checkTokenITL(t, r, tt.ks)
		})
	}
}

// checkTokenITL checks that TokenITL holds, for each gap between text
// events, ks[i] copies of the gap divided by ks[i].
func checkTokenITL(t *testing.T, r *engine.Result, ks []int) {
	t.Helper()
	if ks == nil {
		if r.TokenITL != nil {
			t.Errorf("TokenITL = %v, want nil", r.TokenITL)
		}
		return
	}
	var want []time.Duration
	for i, k := range ks {
		for range k {
			want = append(want, r.ITL[i]/time.Duration(k))
		}
	}
	if got := fmt.Sprint(r.TokenITL); got != fmt.Sprint(want) {
		t.Errorf("TokenITL = %s, want %s (ITL %v)", got, fmt.Sprint(want), r.ITL)
	}
}

func TestChatFirstContent(t *testing.T) {
	const think = 60 * time.Millisecond
	tests := map[string]struct {
		steps []step
		gap   time.Duration // least TTFC − TTFT; 0: TTFC must equal TTFT
		none  bool          // no content: TTFC absent
	}{
		"reasoning first": {
			steps: []step{{write: roleChunk()}, {write: reasoningChunk("reasoning_content", "hmm")},
				{wait: think, write: reasoningChunk("reasoning", "so")}, {wait: think, write: contentChunk("yes")},
				{write: finishChunk("stop") + done()}},
			gap: 2 * think * 8 / 10,
		},
		"no reasoning": {
			steps: []step{{write: roleChunk()}, {wait: think, write: contentChunk("yes")}, {wait: think, write: contentChunk("!")},
				{write: finishChunk("stop") + done()}},
		},
		"completions text": {
			steps: []step{{wait: think, write: ev(`{"choices":[{"index":0,"text":"yes","finish_reason":null}]}`)},
				{write: finishChunk("stop") + done()}},
		},
		"reasoning only": {
			steps: []step{{write: roleChunk()}, {wait: think, write: reasoningChunk("reasoning_content", "hmm")},
				{write: finishChunk("length") + done()}},
			none: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, script{steps: tt.steps})
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			if r.Err != nil {
				t.Fatalf("Err = %v", r.Err)
			}
			switch {
			case tt.none:
				if r.TTFC != 0 || r.TTFT == 0 {
					t.Errorf("TTFT = %v, TTFC = %v; want TTFT only", r.TTFT, r.TTFC)
				}
			case tt.gap == 0:
				if r.TTFC != r.TTFT {
					t.Errorf("TTFC = %v, want TTFT = %v", r.TTFC, r.TTFT)
				}
			case r.TTFC-r.TTFT < tt.gap:
				t.Errorf("TTFC − TTFT = %v, want at least %v", r.TTFC-r.TTFT, tt.gap)
			}
		})
	}
}

func TestChatTokenizerNone(t *testing.T) {
	srv := serve(t, script{steps: steps(0, roleChunk(), contentChunk("Hello"), contentChunk(","), finishChunk("stop"), done())})
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
	r := c.Chat(context.Background(), chatReq())
	checkResult(t, r, want{status: 200, text: "Hello,", textEvents: 2, outputTokens: 2, source: engine.TokensFromEvents,
		finish: "stop", ttft: true, ttfc: true, e2e: true, streamed: true})
}

func TestChatTokenizers(t *testing.T) {
	// 你好 is one token in o200k_base, two in cl100k_base and four bytes
	// in the GPT-2 era encodings.
	tests := map[string]int{"": 2, "cl100k_base": 2, "o200k_base": 1, "p50k_base": 4, "r50k_base": 4}
	for name, tokens := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, script{steps: steps(0, roleChunk(), contentChunk("你好"), finishChunk("stop"), done())})
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.Tokenizer = name })
			r := c.Chat(context.Background(), chatReq())
			if got, want := r.ClientOutputTokens, tokens; got != want {
				t.Errorf("ClientOutputTokens = %d, want %d", got, want)
			}
		})
	}
}

// TestRunawayStreamIsCut checks that a server streaming without end stops
// being read once an answer passes MaxTextBytes, instead of growing the
// client's memory until the total timeout.
func TestRunawayStreamIsCut(t *testing.T) {
	chunk := ev(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q}}]}`, strings.Repeat("x", 64<<10)))
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.TotalTimeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := c.Chat(ctx, &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}})
	if res.Err == nil || res.Err.Class != engine.ErrStreamMalformed || !strings.Contains(res.Err.Message, "kept streaming") {
		t.Fatalf("Err = %v, want a stream_malformed cut", res.Err)
	}
	if len(res.Text) > MaxTextBytes+(64<<10) {
		t.Errorf("kept %d bytes of text", len(res.Text))
	}
}

func TestBareJSONErrorUnderEventStream(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `{"error":{"message":"context length exceeded","type":"invalid_request_error"}}`)
	}))
	res := testClient(t, srv.URL+"/v1").Chat(context.Background(), &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}})
	if res.Err == nil || res.Err.Class != engine.ErrAPI || res.Err.Message != "context length exceeded" {
		t.Errorf("Err = %v, want api_error with the server's message", res.Err)
	}
}
