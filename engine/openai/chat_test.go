package openai

import (
	"context"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

func chatReq() *engine.ChatRequest {
	return &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}, MaxTokens: 16}
}

// want is what a table case expects of a Result; fields left zero are
// checked as zero, except message which is a substring.
type want struct {
	class        string
	message      string
	status       int
	text         string
	textEvents   int
	outputTokens int
	source       string // TokensSource
	client       int    // ClientOutputTokens
	reasoning    int    // ReasoningTokens
	inputTokens  int
	inputSource  string
	finish       string
	ttft         bool // TTFT measured
	ttfc         bool // TTFC measured
	e2e          bool // E2E measured
	streamed     bool
}

func checkResult(t *testing.T, r *engine.Result, w want) {
	t.Helper()
	class, msg := "", ""
	if r.Err != nil {
		class, msg = r.Err.Class, r.Err.Message
	}
	if got, want := class, w.class; got != want {
		t.Errorf("class = %q (%q), want %q", got, msg, want)
	}
	if !strings.Contains(msg, w.message) {
		t.Errorf("message = %q, want it to contain %q", msg, w.message)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"Status", r.Status, w.status}, {"Text", r.Text, w.text}, {"TextEvents", r.TextEvents, w.textEvents},
		{"OutputTokens", r.OutputTokens, w.outputTokens}, {"TokensSource", r.TokensSource, w.source},
		{"ClientOutputTokens", r.ClientOutputTokens, w.client}, {"ReasoningTokens", r.ReasoningTokens, w.reasoning},
		{"InputTokens", r.InputTokens, w.inputTokens}, {"InputTokensSource", r.InputTokensSource, w.inputSource},
		{"FinishReason", r.FinishReason, w.finish}, {"Streamed", r.Streamed, w.streamed},
		{"TTFT measured", r.TTFT > 0, w.ttft}, {"TTFC measured", r.TTFC > 0, w.ttfc}, {"E2E measured", r.E2E > 0, w.e2e},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got, want := len(r.ITL), max(r.TextEvents-1, 0); got != want && r.Streamed {
		t.Errorf("len(ITL) = %d, want %d", got, want)
	}
	if r.TTFC != 0 && r.TTFC < r.TTFT {
		t.Errorf("TTFC = %v before TTFT = %v", r.TTFC, r.TTFT)
	}
}

// okStream is a complete stream of n tokens in the vLLM shape.
func okStream(tokens ...string) []string {
	out := []string{roleChunk()}
	for _, tok := range tokens {
		out = append(out, contentChunk(tok))
	}
	return append(out, finishChunk("stop"), usageChunk(7, len(tokens)), done())
}

// Streams of streamCases, built from known payloads.
func usageRaw(raw string) string {
	return ev(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + raw + `}`)
}

func reasoningChunk(field, s string) string {
	return ev(`{"choices":[{"index":0,"delta":{"` + field + `":"` + s + `"}}]}`)
}

// helloWith is "Hello, world" in three events (3 tokens by usage and by
// cl100k_base), ended by the given usage object.
func helloWith(usage string) script {
	return script{steps: steps(0, roleChunk(), contentChunk("Hello"), contentChunk(","), contentChunk(" world"),
		finishChunk("stop"), usageRaw(usage), done())}
}

// streamCases are streams with what the default client (cl100k_base, the
// prompt "hi" of 1 token) must make of them.
func streamCases() map[string]struct {
	script script
	want   want
} {
	ok := func(text string, events, tokens, client int, source string) want {
		return want{status: 200, text: text, textEvents: events, outputTokens: tokens, source: source, client: client,
			inputTokens: 7, inputSource: engine.TokensFromUsage, finish: "stop", ttft: events > 0, ttfc: events > 0,
			e2e: true, streamed: true}
	}
	// noUsage is ok for a stream without usage: the prompt is counted.
	noUsage := func(w want) want {
		w.inputTokens, w.inputSource = 1, engine.TokensFromTokenizer
		return w
	}
	failed := func(class, message, text string, events, client int) want {
		source := engine.TokensFromTokenizer
		if client < events {
			source = engine.TokensFromEvents
		}
		return want{class: class, message: message, status: 200, text: text, textEvents: events,
			outputTokens: max(client, events), source: source, client: client, inputTokens: 1,
			inputSource: engine.TokensFromTokenizer, ttft: events > 0, ttfc: events > 0, streamed: true}
	}
	return map[string]struct {
		script script
		want   want
	}{
		"complete stream": {
			script{steps: steps(time.Millisecond, okStream("Hello", ",", " world")...)},
			ok("Hello, world", 3, 3, 3, engine.TokensFromUsage),
		},
		"byte by byte": {
			script{byteWise: true, steps: steps(0, okStream("Hello", ",", " world")...)},
			ok("Hello, world", 3, 3, 3, engine.TokensFromUsage),
		},
		"empty choices and keep-alive comments": {
			script{steps: steps(0, roleChunk(), ": ping\n\n", ev(`{"choices":[]}`), contentChunk("a"),
				":keep-alive\n", contentChunk("b"), finishChunk("stop"), usageChunk(7, 2), done())},
			ok("ab", 2, 2, 1, engine.TokensFromUsage),
		},
		"CRLF line endings": {
			script{steps: steps(0, crlf(okStream("x", "y")...)...)},
			ok("xy", 2, 2, 1, engine.TokensFromUsage),
		},
		"CR line endings": {
			script{steps: steps(0, cr(okStream("x", "y")...)...)},
			ok("xy", 2, 2, 1, engine.TokensFromUsage),
		},
		"multi-line data": {
			script{steps: steps(0, roleChunk(),
				"data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"z\"}}]}\n\n",
				finishChunk("stop"), usageChunk(7, 1), done())},
			ok("z", 1, 1, 1, engine.TokensFromUsage),
		},
		"multi-token chunks": {
			script{steps: steps(0, roleChunk(), contentChunk("one two"), contentChunk(" three four"),
				finishChunk("stop"), usageChunk(7, 4), done())},
			ok("one two three four", 2, 4, 4, engine.TokensFromUsage),
		},
		"whitespace-only chunks are text": {
			script{steps: steps(0, okStream(" ", "\n")...)},
			ok(" \n", 2, 2, 1, engine.TokensFromUsage),
		},
		"no usage: tokenizer": {
			script{steps: steps(0, roleChunk(), contentChunk("Hello"), contentChunk(","), contentChunk(" world"),
				finishChunk("stop"), done())},
			noUsage(ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer)),
		},
		"no usage, tokenizer below events: events": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), contentChunk("b"), finishChunk("length"), done())},
			noUsage(want{status: 200, text: "ab", textEvents: 2, outputTokens: 2, source: engine.TokensFromEvents,
				client: 1, finish: "length", ttft: true, ttfc: true, e2e: true, streamed: true}),
		},
		"usage below event count is ignored": {
			script{steps: steps(0, roleChunk(), contentChunk("Hello"), contentChunk(","), contentChunk(" world"),
				finishChunk("stop"), usageChunk(7, 2), done())},
			ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer),
		},
		"negative usage is ignored": {
			helloWith(`{"prompt_tokens":-7,"completion_tokens":-3}`),
			noUsage(ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer)),
		},
		"zero usage with text is ignored": {
			helloWith(`{"prompt_tokens":7,"completion_tokens":0}`),
			ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer),
		},
		"absurd usage is ignored": {
			helloWith(`{"prompt_tokens":7,"completion_tokens":47}`),
			ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer),
		},
		"large but plausible usage is kept": {
			helloWith(`{"prompt_tokens":7,"completion_tokens":46}`),
			ok("Hello, world", 3, 46, 3, engine.TokensFromUsage),
		},
		"fractional, string and huge usage are ignored": {
			helloWith(`{"prompt_tokens":"7","completion_tokens":2.5,"total_tokens":1e400}`),
			noUsage(ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer)),
		},
		"integral float usage is kept": {
			helloWith(`{"prompt_tokens":7.0,"completion_tokens":3e0}`),
			ok("Hello, world", 3, 3, 3, engine.TokensFromUsage),
		},
		"usage of the wrong type is ignored": {
			helloWith(`[3]`),
			noUsage(ok("Hello, world", 3, 3, 3, engine.TokensFromTokenizer)),
		},
		"null usage after usage keeps it": {
			script{steps: steps(0, roleChunk(), contentChunk("Hello"), contentChunk(","), contentChunk(" world"),
				usageChunk(7, 3), finishChunk("stop"), done())},
			ok("Hello, world", 3, 3, 3, engine.TokensFromUsage),
		},
		"missing [DONE] after finish_reason": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), usageChunk(7, 1))},
			ok("a", 1, 1, 1, engine.TokensFromUsage),
		},
		"[DONE] without blank line at EOF": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), "data: [DONE]")},
			noUsage(want{status: 200, text: "a", textEvents: 1, outputTokens: 1, source: engine.TokensFromTokenizer,
				client: 1, ttft: true, ttfc: true, e2e: true, streamed: true}),
		},
		"[DONE] with no prior chunk": {
			script{steps: steps(0, done())},
			failed(engine.ErrStreamMalformed, "[DONE] before any chunk", "", 0, 0),
		},
		"cut [DONE] with no prior chunk": {
			script{steps: steps(0, "data: [DONE]")},
			failed(engine.ErrStreamMalformed, "[DONE] before any chunk", "", 0, 0),
		},
		"text after finish_reason is timed": {
			script{steps: steps(0, roleChunk(), finishChunk("stop"), contentChunk("late"), done())},
			noUsage(want{status: 200, text: "late", textEvents: 1, outputTokens: 1, source: engine.TokensFromTokenizer,
				client: 1, finish: "stop", ttft: true, ttfc: true, e2e: true, streamed: true}),
		},
		"finish_reason and no text": {
			script{steps: steps(0, roleChunk(), finishChunk("length"), usageChunk(7, 0), done())},
			want{status: 200, source: engine.TokensFromUsage, inputTokens: 7, inputSource: engine.TokensFromUsage,
				finish: "length", e2e: true, streamed: true},
		},
		"reasoning counts for TTFT but is not text": {
			script{steps: steps(0, roleChunk(), reasoningChunk("reasoning_content", "think"), reasoningChunk("reasoning", "more"),
				contentChunk("answer"), finishChunk("stop"), usageChunk(7, 3), done())},
			func() want { w := ok("answer", 3, 3, 3, engine.TokensFromUsage); w.reasoning = 2; return w }(),
		},
		"reasoning tokens from usage": {
			script{steps: steps(0, roleChunk(), reasoningChunk("reasoning_content", "think"), contentChunk("answer"),
				finishChunk("stop"), usageRaw(`{"prompt_tokens":7,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}`), done())},
			func() want { w := ok("answer", 2, 9, 2, engine.TokensFromUsage); w.reasoning = 6; return w }(),
		},
		"reasoning tokens above completion tokens are ignored": {
			script{steps: steps(0, roleChunk(), reasoningChunk("reasoning_content", "think"), contentChunk("answer"),
				finishChunk("stop"), usageRaw(`{"prompt_tokens":7,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":10}}`), done())},
			func() want { w := ok("answer", 2, 9, 2, engine.TokensFromUsage); w.reasoning = 1; return w }(),
		},
		"reasoning only: no TTFC": {
			script{steps: steps(0, roleChunk(), reasoningChunk("reasoning_content", "think"), finishChunk("length"),
				usageChunk(7, 1), done())},
			want{status: 200, textEvents: 1, outputTokens: 1, source: engine.TokensFromUsage, client: 1, reasoning: 1,
				inputTokens: 7, inputSource: engine.TokensFromUsage, finish: "length", ttft: true, e2e: true, streamed: true},
		},
		"missing [DONE] without finish_reason": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), contentChunk("b"))},
			failed(engine.ErrStreamTruncated, "", "ab", 2, 1),
		},
		"last event cut before its blank line": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), strings.TrimSuffix(finishChunk("stop"), "\n"))},
			failed(engine.ErrStreamTruncated, "inside an event", "a", 1, 1),
		},
		"error object mid-stream": {
			script{steps: steps(0, roleChunk(), contentChunk("a"),
				ev(`{"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}`))},
			failed(engine.ErrAPI, "CUDA out of memory", "a", 1, 1),
		},
		"vLLM error object": {
			script{steps: steps(0, ev(`{"object":"error","message":"context too long","type":"BadRequestError","code":400}`))},
			failed(engine.ErrAPI, "context too long", "", 0, 0),
		},
		"error event type": {
			script{steps: steps(0, "event: error\ndata: {\"message\":\"overloaded\"}\n\n")},
			failed(engine.ErrAPI, "overloaded", "", 0, 0),
		},
		"invalid event JSON": {
			script{steps: steps(0, roleChunk(), contentChunk("a"), ev(`{"choices":[{"delta":`), done())},
			failed(engine.ErrStreamMalformed, "undecodable event", "a", 1, 1),
		},
		"wrong JSON type": {
			script{steps: steps(0, ev(`{"choices":"none"}`))},
			failed(engine.ErrStreamMalformed, "", "", 0, 0),
		},
		"HTML instead of a stream": {
			script{header: map[string]string{"Content-Type": "text/html"},
				steps: steps(0, "<html><body>gateway</body></html>")},
			func() want {
				w := failed(engine.ErrStreamMalformed, "not an event stream (Content-Type text/html)", "", 0, 0)
				w.streamed = false
				return w
			}(),
		},
		"compressed stream": {
			script{header: map[string]string{"Content-Encoding": "gzip"}, steps: steps(0, "\x1f\x8b")},
			want{class: engine.ErrStreamMalformed, message: "Content-Encoding gzip", status: 200, streamed: true},
		},
	}
}

func TestChatStreams(t *testing.T) {
	for name, tt := range streamCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.script)
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			checkResult(t, r, tt.want)
		})
	}
}

// TestChatByteWiseIdentical writes every stream of streamCases one byte
// per write and flush, and wants the same result as from whole writes:
// an event split across TCP reads at any byte boundary changes nothing.
func TestChatByteWiseIdentical(t *testing.T) {
	for name, tt := range streamCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := tt.script
			sc.byteWise = true
			srv := serve(t, sc)
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			checkResult(t, r, tt.want)
		})
	}
}

func crlf(s ...string) []string {
	for i := range s {
		s[i] = strings.ReplaceAll(s[i], "\n", "\r\n")
	}
	return s
}

func cr(s ...string) []string {
	for i := range s {
		s[i] = strings.ReplaceAll(s[i], "\n", "\r")
	}
	return s
}

func TestChatHTTPErrors(t *testing.T) {
	tests := map[string]struct {
		status  int
		body    string
		class   string
		message string
	}{
		"401 OpenAI shape": {401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"http_4xx:401", "Incorrect API key provided"},
		"404 vLLM shape": {404, `{"object":"error","message":"The model 'x' does not exist.","type":"NotFoundError","param":null,"code":404}`,
			"http_4xx:404", "The model 'x' does not exist."},
		"429 plain error string":       {429, `{"error":"rate limited"}`, "http_4xx:429", "rate limited"},
		"500 FastAPI detail":           {500, `{"detail":"Internal Server Error"}`, "http_5xx:500", "Internal Server Error"},
		"503 text body":                {503, "upstream connect error\n", "http_5xx:503", "upstream connect error"},
		"502 empty body":               {502, "", "http_5xx:502", "Bad Gateway"},
		"400 long body is truncated":   {400, strings.Repeat("x", 5000), "http_4xx:400", strings.Repeat("x", 200) + "…"},
		"301 redirect is not followed": {301, "", "http_3xx:301", "Moved Permanently"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tt.status == 301 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			checkResult(t, r, want{class: tt.class, message: tt.message, status: tt.status})
			if r.TTFB <= 0 {
				t.Errorf("TTFB = %v, want it measured", r.TTFB)
			}
			if got, want := len(r.Err.Message), 204; got > want {
				t.Errorf("len(message) = %d, want at most %d", got, want)
			}
		})
	}
}

func TestChatNonStreamingAnswer(t *testing.T) {
	tests := map[string]struct {
		body string
		want want
	}{
		"completion": {
			`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`,
			want{status: 200, text: "Hi there", textEvents: 1, outputTokens: 3, client: 2, inputTokens: 5,
				inputSource: engine.TokensFromUsage, source: engine.TokensFromUsage, finish: "stop", e2e: true},
		},
		"error object with 200": {
			`{"error":{"message":"model overloaded","type":"server_error"}}`,
			want{class: engine.ErrAPI, message: "model overloaded", status: 200},
		},
		"not JSON": {
			`{"choices":`,
			want{class: engine.ErrStreamMalformed, message: "undecodable completion", status: 200},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, script{header: map[string]string{"Content-Type": "application/json; charset=utf-8"},
				steps: steps(0, tt.body)})
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			checkResult(t, r, tt.want)
		})
	}
}

func TestChatInvalidRequest(t *testing.T) {
	c := testClient(t, "http://127.0.0.1:1/v1")
	nan := math.NaN()
	tests := map[string]*engine.ChatRequest{
		"nil request":     nil,
		"NaN temperature": {Model: "m", Temperature: &nan},
		"NaN extra":       {Model: "m", Extra: map[string]any{"x": nan}},
		"func extra":      {Model: "m", Extra: map[string]any{"model": func() {}}},
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			r := c.Chat(context.Background(), req)
			if r.Err == nil || r.Err.Class != engine.ErrInvalidRequest {
				t.Fatalf("Err = %v, want class %s", r.Err, engine.ErrInvalidRequest)
			}
			if !r.Start.IsZero() {
				t.Errorf("Start = %v, want zero: nothing was sent", r.Start)
			}
		})
	}
}

func TestChatSendsRequest(t *testing.T) {
	type seen struct {
		header http.Header
		path   string
		query  string
		body   string
	}
	got := make(chan seen, 1)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		buf := make([]byte, 512)
		for {
			n, err := r.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- seen{r.Header.Clone(), r.URL.Path, r.URL.RawQuery, b.String()}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(strings.Join(okStream("a"), "")))
	}))
	zero := 0.0
	req := chatReq()
	req.Temperature = &zero
	tests := map[string]struct {
		base, key, auth, path, query string
	}{
		"with key":              {srv.URL + "/v1/", "sk-test", "Bearer sk-test", "/v1/chat/completions", ""},
		"without key":           {srv.URL + "/v1", "", "", "/v1/chat/completions", ""},
		"pasted full endpoint":  {srv.URL + "/v1/chat/completions", "", "", "/v1/chat/completions", ""},
		"pasted completions":    {srv.URL + "/v1/completions/", "", "", "/v1/chat/completions", ""},
		"query is kept (Azure)": {srv.URL + "/openai?api-version=2024-10-21", "", "", "/openai/chat/completions", "api-version=2024-10-21"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testClient(t, tt.base, func(c *Config) { c.APIKey = tt.key })
			if r := c.Chat(context.Background(), req); r.Err != nil {
				t.Errorf("Chat: %v", r.Err) // not fatal: the handler waits for <-got
			}
			s := <-got
			for h, want := range map[string]string{"Authorization": tt.auth, "Accept": "text/event-stream",
				"Content-Type": "application/json", "Accept-Encoding": "identity", "X-Idempotency-Key": ""} {
				if got := s.header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			if got, want := s.path, tt.path; got != want {
				t.Errorf("path = %q, want %q", got, want)
			}
			if got, want := s.query, tt.query; got != want {
				t.Errorf("query = %q, want %q", got, want)
			}
			for _, part := range []string{`"stream":true`, `"stream_options":{"include_usage":true}`, `"temperature":0`} {
				if !strings.Contains(s.body, part) {
					t.Errorf("body %s lacks %s", s.body, part)
				}
			}
		})
	}
}

func TestChatKeepsKeySecret(t *testing.T) {
	const key = "sk-very-secret-key-123"
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"key ` + key + ` is revoked"}}`))
	}))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey = key })
	r := c.Chat(context.Background(), chatReq())
	if r.Err == nil {
		t.Fatal("Err = nil, want http_4xx:401")
	}
	if strings.Contains(r.Err.Message, key) {
		t.Errorf("message %q contains the API key", r.Err.Message)
	}
	if got, want := r.Err.Message, "key [redacted] is revoked"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	cfg := Config{BaseURL: "http://u:p@h/v1", APIKey: key}
	for _, s := range []string{cfg.String(), cfg.GoString()} {
		if strings.Contains(s, key) || strings.Contains(s, "u:p") {
			t.Errorf("Config prints secrets: %s", s)
		}
	}
}

func TestChatConcurrent(t *testing.T) {
	srv := serve(t, script{steps: steps(time.Millisecond, okStream("a", "b", "c")...)})
	c := testClient(t, srv.URL+"/v1")
	const n = 40
	var wg sync.WaitGroup
	results := make([]*engine.Result, n)
	for i := range n {
		wg.Go(func() { results[i] = c.Chat(context.Background(), chatReq()) })
	}
	wg.Wait()
	for i, r := range results {
		if r.Err != nil || r.Text != "abc" || len(r.ITL) != 2 {
			t.Errorf("request %d: err %v, text %q, %d ITL samples", i, r.Err, r.Text, len(r.ITL))
		}
	}
}

func TestNew(t *testing.T) {
	tests := map[string]struct {
		cfg     Config
		wantErr string
	}{
		"ok":              {Config{BaseURL: "http://127.0.0.1:8000/v1"}, ""},
		"https":           {Config{BaseURL: "https://api.example.com/v1"}, ""},
		"empty":           {Config{}, "empty base URL"},
		"no scheme":       {Config{BaseURL: "127.0.0.1:8000/v1"}, "must start with http:// or https://"},
		"ftp":             {Config{BaseURL: "ftp://h/v1"}, "must start with http:// or https://"},
		"no host":         {Config{BaseURL: "http:///v1"}, "no host"},
		"bad URL":         {Config{BaseURL: "http://h:port/v1"}, "invalid base URL"},
		"negative":        {Config{BaseURL: "http://h/v1", IdleTimeout: -1}, "negative idle timeout"},
		"negative conns":  {Config{BaseURL: "http://h/v1", MaxConns: -1}, "negative MaxConns"},
		"secret redacted": {Config{BaseURL: "ftp://user:hunter2@h/v1?key=s3cret"}, "ftp://h/v1?key=REDACTED"},
		"tokenizer none":  {Config{BaseURL: "http://h/v1", Tokenizer: "none"}, ""},
		"tokenizer o200k": {Config{BaseURL: "http://h/v1", Tokenizer: "o200k_base", ContinuousUsage: true}, ""},
		"unknown tokenizer": {Config{BaseURL: "http://h/v1", Tokenizer: "gpt2"},
			`openai: unknown tokenizer "gpt2" (want one of cl100k_base, o200k_base, p50k_base, r50k_base or none)`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q leaks a credential", err)
			}
		})
	}
}
