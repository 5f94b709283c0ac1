package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/llmload/llmload/engine"
)

// received is what a recording server saw of one request.
type received struct {
	ctype string
	body  []byte
}

// recorder answers every request with answer after recording it.
func recorder(answer script) (http.Handler, <-chan received) {
	got := make(chan received, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Header.Get("Content-Type"), body}
		answer.ServeHTTP(w, r)
	}), got
}

func TestChatSendsRawBodyVerbatim(t *testing.T) {
	badRequest := script{status: http.StatusBadRequest, header: map[string]string{"Content-Type": "application/json"},
		steps: []step{{write: `{"error":{"message":"invalid JSON body","type":"BadRequestError","code":400}}`}}}
	unsupported := script{status: http.StatusUnsupportedMediaType, steps: []step{{write: ""}}}
	tests := map[string]struct {
		raw       []byte
		ctype     string
		answer    script
		wantCType string
		want      want
	}{
		"truncated JSON": {raw: []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi`),
			answer: badRequest, wantCType: "application/json",
			want: want{class: "http_4xx:400", message: "invalid JSON body", status: 400}},
		"invalid UTF-8": {raw: []byte("{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\xfe\x80b\"}]}"),
			answer: badRequest, wantCType: "application/json",
			want: want{class: "http_4xx:400", message: "invalid JSON body", status: 400}},
		"text/plain, bare 415": {raw: []byte(`{"model":"m","stream":true,"messages":[]}`), ctype: "text/plain",
			answer: unsupported, wantCType: "text/plain",
			want: want{class: "http_4xx:415", message: "Unsupported Media Type", status: 415}},
		"empty raw body": {raw: []byte{}, answer: badRequest, wantCType: "application/json",
			want: want{class: "http_4xx:400", message: "invalid JSON body", status: 400}},
		"raw accepted and streamed": {raw: []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"\u200bhi"}]}`),
			answer:    helloWith(`{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}`),
			wantCType: "application/json",
			want: want{status: 200, text: "Hello, world", textEvents: 3, outputTokens: 3, source: engine.TokensFromUsage,
				client: 3, inputTokens: 3, inputSource: engine.TokensFromUsage, finish: "stop",
				ttft: true, ttfc: true, e2e: true, streamed: true}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			h, got := recorder(tt.answer)
			c := testClient(t, serve(t, h).URL+"/v1")
			req := chatReq()
			req.Raw, req.ContentType = tt.raw, tt.ctype
			checkResult(t, c.Chat(context.Background(), req), tt.want)
			seen := <-got
			if !bytes.Equal(seen.body, tt.raw) {
				t.Errorf("body = %q, want %q", seen.body, tt.raw)
			}
			if got, want := seen.ctype, tt.wantCType; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
		})
	}
}

func TestChatContentTypeOverride(t *testing.T) {
	h, got := recorder(script{steps: steps(0, okStream("a")...)})
	c := testClient(t, serve(t, h).URL+"/v1")
	req := chatReq()
	req.ContentType = "text/plain; charset=utf-8"
	if r := c.Chat(context.Background(), req); r.Err != nil {
		t.Errorf("Chat: %v", r.Err)
	}
	seen := <-got
	if got, want := seen.ctype, "text/plain; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	want, err := buildBody(chatReq(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seen.body, want) {
		t.Errorf("body = %s, want the normal JSON body %s", seen.body, want)
	}
}

func TestChatRejectsHeaderInjection(t *testing.T) {
	c := testClient(t, "http://127.0.0.1:1/v1")
	req := chatReq()
	req.ContentType = "text/plain\r\nX-Evil: 1"
	r := c.Chat(context.Background(), req)
	if r.Err == nil || r.Err.Class != engine.ErrInvalidRequest {
		t.Fatalf("Err = %v, want class %s", r.Err, engine.ErrInvalidRequest)
	}
	if !r.Start.IsZero() {
		t.Errorf("Start = %v, want zero: nothing was sent", r.Start)
	}
}

func TestBuildBodyRawIsVerbatim(t *testing.T) {
	raw := []byte("{\"model\":\"m\",\xff")
	req := &engine.ChatRequest{Model: "other", Messages: []engine.Message{{Role: "user", Content: "x"}},
		MaxTokens: 5, IgnoreEOS: true, Extra: map[string]any{"top_k": 1}, Raw: raw}
	for _, continuous := range []bool{false, true} {
		body, err := buildBody(req, continuous)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, raw) {
			t.Errorf("continuous=%t: body = %q, want %q", continuous, body, raw)
		}
	}
}
