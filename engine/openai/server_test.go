package openai

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one action of a scripted response: wait, then write and flush.
type step struct {
	wait  time.Duration
	write string
}

// script is a fake endpoint's answer, written byte for byte as given.
type script struct {
	status int               // 0: 200
	header map[string]string // Content-Type defaults to text/event-stream
	steps  []step
	// byteWise writes and flushes one byte at a time, so the client sees
	// every possible split of lines and events.
	byteWise bool
	// hold keeps the response open after the last step until the client
	// goes away.
	hold bool
}

func (s script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.header["Content-Type"]; !ok {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	status := s.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for _, st := range s.steps {
		if !sleep(r, st.wait) {
			return
		}
		if !s.write(w, rc, st.write) {
			return
		}
	}
	if s.hold {
		<-r.Context().Done()
	}
}

func (s script) write(w http.ResponseWriter, rc *http.ResponseController, text string) bool {
	parts := []string{text}
	if s.byteWise {
		parts = strings.Split(text, "")
	}
	for _, p := range parts {
		if _, err := w.Write([]byte(p)); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil {
			return false
		}
	}
	return true
}

// sleep waits d unless the client goes away first.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// serve starts a loopback server for h that lives as long as the test;
// edit may configure it before it starts.
func serve(t testing.TB, h http.Handler, edit ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	for _, e := range edit {
		e(srv.Config)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// testClient returns a client for base with short default timeouts, so
// that a test that goes wrong fails in seconds rather than minutes.
func testClient(t testing.TB, base string, edit ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: base, ConnectTimeout: 5 * time.Second, TTFTTimeout: 10 * time.Second,
		IdleTimeout: 10 * time.Second, TotalTimeout: 20 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	// Preflight's retries wait on a fake clock, so that a test of a
	// failing server does not sleep through the backoff.
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	c.sleep, c.now = clk.sleep, clk.now
	return c
}

// fakeClock is a clock that sleeping advances at once. Safe for
// concurrent use.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
	f.slept = append(f.slept, d)
	return ctx.Err()
}

func (f *fakeClock) sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.slept)
}

// Event payloads in the shape vLLM and OpenAI send them.

func ev(data string) string { return "data: " + data + "\n\n" }

func roleChunk() string {
	return ev(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`)
}

func contentChunk(s string) string {
	return ev(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":null}`, s))
}

func finishChunk(reason string) string {
	return ev(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":%q}],"usage":null}`, reason))
}

func usageChunk(prompt, completion int) string {
	return ev(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, completion, prompt+completion))
}

func done() string { return ev("[DONE]") }

// steps turns payloads into steps written gap apart.
func steps(gap time.Duration, writes ...string) []step {
	out := make([]step, len(writes))
	for i, w := range writes {
		out[i] = step{wait: gap, write: w}
	}
	return out
}
