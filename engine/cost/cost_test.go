package cost

import (
	"math"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// prices of the tests: 3 per million input tokens, 0.3 cached, 15 output.
var prices = plan.Cost{InputPerMTok: 3, CachedInputPerMTok: 0.3, OutputPerMTok: 15, Currency: "USD"}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

func TestUsageOfAndPrice(t *testing.T) {
	chat := &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: "hello there"}}, MaxTokens: 50}
	counter := func(*engine.ChatRequest) (int, bool) { return 7, true }
	tests := []struct {
		name  string
		res   engine.Result
		count Counter
		want  Usage
		price float64 // by hand
	}{
		{"usage, no cache",
			engine.Result{Status: 200, InputTokens: 1000, InputTokensSource: "usage", OutputTokens: 200, TokensSource: "usage"}, nil,
			Usage{Input: 1000, Output: 200, InputFrom: "usage", OutputFrom: "usage", Billed: true},
			(1000*3 + 200*15) / 1e6},
		{"usage with cached tokens at the cached price",
			engine.Result{Status: 200, InputTokens: 1000, InputTokensSource: "usage", CachedTokens: 600, OutputTokens: 200, TokensSource: "usage"}, nil,
			Usage{Input: 1000, Cached: 600, Output: 200, InputFrom: "usage", OutputFrom: "usage", Billed: true},
			(400*3 + 600*0.3 + 200*15) / 1e6},
		{"tokenizer counts when the server sent no usage",
			engine.Result{Status: 200, InputTokens: 900, InputTokensSource: "tokenizer", OutputTokens: 180, TokensSource: "tokenizer"}, nil,
			Usage{Input: 900, Output: 180, InputFrom: "tokenizer", OutputFrom: "tokenizer", Billed: true},
			(900*3 + 180*15) / 1e6},
		{"text events for the output",
			engine.Result{Status: 200, InputTokens: 900, InputTokensSource: "tokenizer", OutputTokens: 40, TokensSource: "events"}, nil,
			Usage{Input: 900, Output: 40, InputFrom: "tokenizer", OutputFrom: "events", Billed: true},
			(900*3 + 40*15) / 1e6},
		{"no input count: the meter's counter",
			engine.Result{Status: 0, Err: &engine.Error{Class: engine.ErrTimeoutTTFT}}, counter,
			Usage{Input: 7, InputFrom: "tokenizer", Billed: true},
			7 * 3 / 1e6},
		{"no input count and no counter: the send-time bound",
			engine.Result{Status: 0, Err: &engine.Error{Class: engine.ErrCanceled}}, nil,
			Usage{Input: InputBound(chat), InputFrom: FromBound, Billed: true},
			float64(InputBound(chat)) * 3 / 1e6},
		{"a stream cut off after some text bills what came",
			engine.Result{Status: 200, Err: &engine.Error{Class: engine.ErrStreamTruncated}, InputTokens: 50, InputTokensSource: "tokenizer", OutputTokens: 3, TokensSource: "events"}, nil,
			Usage{Input: 50, Output: 3, InputFrom: "tokenizer", OutputFrom: "events", Billed: true},
			(50*3 + 3*15) / 1e6},
		{"a failed request with usage is billed by it",
			engine.Result{Status: 500, Err: &engine.Error{Class: "http_5xx:500"}, InputTokens: 20, InputTokensSource: "usage", TokensSource: "usage"}, nil,
			Usage{Input: 20, InputFrom: "usage", OutputFrom: "usage", Billed: true},
			20 * 3 / 1e6},
		{"an HTTP error without usage bills nothing",
			engine.Result{Status: 429, Err: &engine.Error{Class: "http_4xx:429"}}, counter, Usage{}, 0},
		{"a refused connection bills nothing",
			engine.Result{Err: &engine.Error{Class: engine.ErrConnRefused}}, counter, Usage{}, 0},
		{"a request never sent bills nothing",
			engine.Result{NotSent: true, Err: &engine.Error{Class: engine.ErrCanceled}}, counter, Usage{}, 0},
		{"cached tokens above the prompt are capped at it",
			engine.Result{Status: 200, InputTokens: 10, InputTokensSource: "usage", CachedTokens: 50, TokensSource: "usage"}, nil,
			Usage{Input: 10, Cached: 10, InputFrom: "usage", OutputFrom: "usage", Billed: true},
			10 * 0.3 / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UsageOf(&tt.res, chat, tt.count)
			if got != tt.want {
				t.Errorf("UsageOf = %+v, want %+v", got, tt.want)
			}
			if p := Price(prices, got); !near(p, tt.price) {
				t.Errorf("Price = %v, want %v", p, tt.price)
			}
		})
	}
}

func TestFromUsage(t *testing.T) {
	tests := []struct {
		u    Usage
		want bool
	}{
		{Usage{InputFrom: "usage", OutputFrom: "usage", Output: 3}, true},
		{Usage{InputFrom: "usage"}, true}, // embeddings: nothing generated
		{Usage{InputFrom: "usage", OutputFrom: "events", Output: 3}, false},
		{Usage{InputFrom: "tokenizer", OutputFrom: "usage", Output: 3}, false},
	}
	for _, tt := range tests {
		if got := tt.u.FromUsage(); got != tt.want {
			t.Errorf("%+v.FromUsage() = %v, want %v", tt.u, got, tt.want)
		}
	}
}

func TestWorstIgnoresTheCacheUnlessDearer(t *testing.T) {
	if got, want := Worst(prices, 1000, 100), (1000*3+100*15)/1e6; !near(got, want) {
		t.Errorf("Worst = %v, want %v", got, want)
	}
	dear := plan.Cost{InputPerMTok: 1, CachedInputPerMTok: 2, OutputPerMTok: 1}
	if got, want := Worst(dear, 1000, 0), 2000/1e6; !near(got, want) {
		t.Errorf("Worst with a dearer cache = %v, want %v", got, want)
	}
}

func TestInputBound(t *testing.T) {
	tests := []struct {
		name string
		req  engine.ChatRequest
		want int
	}{
		{"messages", engine.ChatRequest{Messages: []engine.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "什么是机器学习？"}}},
			RequestSlack + 2*MessageSlack + len("system") + len("be brief") + len("user") + len("什么是机器学习？")},
		{"completions prompt", engine.ChatRequest{Prompt: "once upon a time"}, RequestSlack + 16},
		{"embeddings inputs", engine.ChatRequest{Inputs: []string{"ab", "cde"}}, RequestSlack + 2*MessageSlack + 5},
		{"a raw body", engine.ChatRequest{Raw: []byte(`{"messages":`), Prompt: "ignored"}, RequestSlack + 12},
		{"tools", engine.ChatRequest{Tools: []any{map[string]any{"type": "function"}}}, RequestSlack + ToolsSlack + len(`[{"type":"function"}]`)},
	}
	for _, tt := range tests {
		if got := InputBound(&tt.req); got != tt.want {
			t.Errorf("%s: InputBound = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestInputBoundBoundsTheTokenizer holds the bound against a real
// tokenizer's count on text of every kind: it must never be below it.
func TestInputBoundBoundsTheTokenizer(t *testing.T) {
	codec := testCodec(t)
	for _, text := range []string{"hello world", "什么是机器学习？", "🙂🙂🙂 emoji", "a", "   spaces   ", "x\u200by"} {
		req := &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: text}}}
		if n, bound := PromptTokens(codec, req), InputBound(req); n > bound {
			t.Errorf("%q: %d tokens above the bound %d", text, n, bound)
		}
	}
}

func TestOutputBound(t *testing.T) {
	tests := []struct {
		name    string
		req     engine.ChatRequest
		want    int
		bounded bool
	}{
		{"max_tokens", engine.ChatRequest{MaxTokens: 200}, 200, true},
		{"none", engine.ChatRequest{}, 0, false},
		{"embeddings", engine.ChatRequest{Endpoint: engine.EndpointEmbeddings}, 0, true},
		{"extra's max_tokens replaces it", engine.ChatRequest{MaxTokens: 200, Extra: map[string]any{"max_tokens": int64(50)}}, 50, true},
		{"the larger of two limits", engine.ChatRequest{MaxTokens: 200, Extra: map[string]any{"max_completion_tokens": int64(500)}}, 500, true},
		{"a limit in extra only", engine.ChatRequest{Extra: map[string]any{"max_output_tokens": float64(64)}}, 64, true},
		{"extra's null lifts the limit", engine.ChatRequest{MaxTokens: 200, Extra: map[string]any{"max_tokens": nil}}, 0, false},
		{"n choices multiply it", engine.ChatRequest{MaxTokens: 100, Extra: map[string]any{"n": int64(3)}}, 300, true},
	}
	for _, tt := range tests {
		got, bounded := OutputBound(&tt.req)
		if got != tt.want || bounded != tt.bounded {
			t.Errorf("%s: OutputBound = %d, %v; want %d, %v", tt.name, got, bounded, tt.want, tt.bounded)
		}
	}
}

func TestMoneyAndShare(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 25: "25.00", 24.987: "24.99", 0.5: "0.500", 0.0123456: "0.0123", 0.000125: "0.000125"} {
		if got := Money(v); got != want {
			t.Errorf("Money(%v) = %q, want %q", v, got, want)
		}
	}
	for _, tt := range []struct {
		n, total int64
		want     string
	}{{98, 100, "98%"}, {2, 100, "2%"}, {1, 3, "33%"}, {1, 300, "0.3%"}, {1, 10000, "<0.1%"}, {0, 5, "0%"}} {
		if got := Share(tt.n, tt.total); got != tt.want {
			t.Errorf("Share(%d, %d) = %q, want %q", tt.n, tt.total, got, tt.want)
		}
	}
}
