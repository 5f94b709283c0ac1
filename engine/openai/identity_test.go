package openai

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// headerSeen records the traceparent of every request it answers.
type headerSeen struct {
	mu   sync.Mutex
	seen []string
	next http.Handler
}

// got is what it has seen so far.
func (h *headerSeen) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

func (h *headerSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Get("Traceparent"))
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

func chatHi() *engine.ChatRequest {
	return &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}}
}

// Every request carries a W3C traceparent of its own, version 00 with the
// sampled flag, whose trace id is the one the result records.
func TestTraceparentPerRequest(t *testing.T) {
	h := &headerSeen{next: script{steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), done())}}
	c := testClient(t, serve(t, h).URL+"/v1")
	ids := map[string]bool{}
	for range 20 {
		res := c.Chat(context.Background(), chatHi())
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		ids[res.TraceID] = true
	}
	if len(ids) != 20 {
		t.Errorf("%d distinct trace ids over 20 requests", len(ids))
	}
	for _, v := range h.got() {
		m := traceparentRE.FindStringSubmatch(v)
		if m == nil {
			t.Fatalf("traceparent %q is not a version-00 sampled one", v)
		}
		if !ids[m[1]] {
			t.Errorf("the server saw trace id %s, which no result records", m[1])
		}
		if m[2] == "0000000000000000" || m[1] == zeroTraceID {
			t.Errorf("an all-zero id in %q", v)
		}
	}
}

func TestTraceContextOffAndUsersOwn(t *testing.T) {
	const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name        string
		cfg         func(*Config)
		reqHeader   string
		wantHeader  string // "" absent; "*" one of llmload's own
		wantTraceID string // "*" any valid
	}{
		{"off", func(c *Config) { c.NoTraceContext = true }, "", "", ""},
		{"the target's own is sent as written", func(c *Config) { c.Headers = []plan.Header{{Name: "traceparent", Value: own}} }, "", own, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"the request's own, with trace context off", func(c *Config) { c.NoTraceContext = true }, own, own, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"a user's malformed one is sent, but no id is recorded", func(*Config) {}, "00-xyz-01", "00-xyz-01", ""},
		{"on", func(*Config) {}, "", "*", "*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &headerSeen{next: script{steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), done())}}
			c := testClient(t, serve(t, h).URL+"/v1", tt.cfg)
			req := chatHi()
			if tt.reqHeader != "" {
				req.Headers = []engine.Header{{Name: "traceparent", Value: tt.reqHeader}}
			}
			res := c.Chat(context.Background(), req)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			got := h.got()[0]
			switch {
			case tt.wantHeader == "*" && !traceparentRE.MatchString(got), tt.wantHeader != "*" && got != tt.wantHeader:
				t.Errorf("server saw traceparent %q, want %q", got, tt.wantHeader)
			}
			switch {
			case tt.wantTraceID == "*" && len(res.TraceID) != 32, tt.wantTraceID != "*" && res.TraceID != tt.wantTraceID:
				t.Errorf("recorded trace id %q, want %q", res.TraceID, tt.wantTraceID)
			}
		})
	}
}

func TestTraceIDOf(t *testing.T) {
	tests := []struct{ in, want string }{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "4bf92f3577b34da6a3ce929d0e0e4736"}, // a later version may add fields
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ""},                                 // version 00 may not
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},                                       // upper case
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := traceIDOf(tt.in); got != tt.want {
			t.Errorf("traceIDOf(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The server's own id of a request: the answer's id in every dialect,
// streamed or not, else a request-id header.
func TestRequestID(t *testing.T) {
	tests := []struct {
		name string
		s    script
		req  *engine.ChatRequest
		want string
	}{
		{"chat stream", script{steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), done())}, chatHi(), "c1"},
		{"chat stream: the body's id over the header's",
			script{header: map[string]string{"X-Request-Id": "gw-1"}, steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), done())}, chatHi(), "c1"},
		{"a header when the body has none",
			script{header: map[string]string{"X-Request-Id": "gw-1"}, steps: steps(0, ev(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`), finishChunk("stop"), done())}, chatHi(), "gw-1"},
		{"Anthropic's request-id", script{header: map[string]string{"Request-Id": "req_011"}, steps: steps(0, ev(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`), done())}, chatHi(), "req_011"},
		{"a vendor's <prefix>-request-id", script{header: map[string]string{"X-Vllm-Request-Id": "v-9"}, steps: steps(0, ev(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`), done())}, chatHi(), "v-9"},
		{"a non-string id is no id", script{steps: steps(0, ev(`{"id":17,"choices":[{"index":0,"delta":{"content":"a"}}]}`), done())}, chatHi(), ""},
		{"complete answer", script{header: map[string]string{"Content-Type": "application/json"}, steps: steps(0,
			`{"id":"chatcmpl-9","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)},
			&engine.ChatRequest{Model: "m", NoStream: true, Messages: []engine.Message{{Role: "user", Content: "hi"}}}, "chatcmpl-9"},
		{"responses", script{steps: steps(0, append(rHead(), rEnd("response.completed", "completed", "", 1, 1, 0))...)}, respondReq(), "resp_1"},
		{"messages", script{steps: steps(0, append([]string{mStart(3, 0), mBlock(0, `{"type":"text","text":""}`), mText("a")}, mStop("end_turn", 1)...)...)},
			&engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: "m", MaxTokens: 8, Messages: []engine.Message{{Role: "user", Content: "hi"}}}, "msg_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := testClient(t, serve(t, tt.s).URL+"/v1").Chat(context.Background(), tt.req)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.RequestID != tt.want {
				t.Errorf("request id %q, want %q", res.RequestID, tt.want)
			}
		})
	}
}

func BenchmarkNewTraceparent(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newTraceparent()
	}
}

// The preflight's requests carry a traceparent like any other, and the
// preflight says which, so that their spans can be told from the load's.
func TestPreflightTraceIDs(t *testing.T) {
	h := &headerSeen{next: script{steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"), usageChunk(3, 1), done())}}
	c := testClient(t, serve(t, h).URL+"/v1")
	info, err := c.Preflight(context.Background(), "m", engine.EndpointChat)
	if err != nil {
		t.Fatal(err)
	}
	seen := h.got()
	if len(seen) != 1 || len(info.TraceIDs) != 1 {
		t.Fatalf("%d requests seen, trace ids %q", len(seen), info.TraceIDs)
	}
	if m := traceparentRE.FindStringSubmatch(seen[0]); m == nil || m[1] != info.TraceIDs[0] {
		t.Errorf("the preflight sent traceparent %q, says it sent trace %q", seen[0], info.TraceIDs[0])
	}
}

// BenchmarkAnswerID is the once-per-request cost of reading the answer's
// id from a stream's first event.
func BenchmarkAnswerID(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-7f3a9c2e4b1d4f0e8a6b","object":"chat.completion.chunk","created":1733200000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`)
	b.ReportAllocs()
	for b.Loop() {
		if answerID(data) == "" {
			b.Fatal("no id")
		}
	}
}
