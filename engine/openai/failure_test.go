package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// hijack answers with raw bytes and then closes the connection: with a
// reset (RST) when rst is set, else with an orderly FIN.
func hijack(raw string, rst bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_, _ = buf.WriteString(raw)
		_ = buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok && rst {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}
}

const streamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// chunked frames s as one HTTP/1.1 chunk.
func chunked(s string) string {
	return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n"
}

func TestChatConnectionFailures(t *testing.T) {
	tests := map[string]struct {
		handler http.Handler
		classes []string // acceptable classes: the kernel decides some races
	}{
		"closed mid-stream": {
			hijack(streamHead+chunked(roleChunk()+contentChunk("a")), false),
			[]string{engine.ErrStreamTruncated},
		},
		"reset mid-stream": {
			hijack(streamHead+chunked(roleChunk()+contentChunk("a")), true),
			[]string{engine.ErrConnReset},
		},
		"closed mid-chunk": {
			hijack(streamHead+"100\r\n"+roleChunk(), false),
			[]string{engine.ErrStreamTruncated},
		},
		"closed before any response": {
			hijack("", false),
			[]string{engine.ErrConnReset},
		},
		"reset before any response": {
			hijack("", true),
			[]string{engine.ErrConnReset},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
			if r.Err == nil {
				t.Fatalf("Err = nil, want one of %v", tt.classes)
			}
			found := false
			for _, c := range tt.classes {
				found = found || r.Err.Class == c
			}
			if !found {
				t.Errorf("class = %q (%s), want one of %v", r.Err.Class, r.Err.Message, tt.classes)
			}
		})
	}
}

func TestChatTimeouts(t *testing.T) {
	short := 150 * time.Millisecond
	tests := map[string]struct {
		script script
		cfg    func(*Config)
		class  string
		text   string
	}{
		"no headers within TTFT": {
			script{steps: []step{{wait: time.Hour}}},
			func(c *Config) { c.TTFTTimeout = short },
			engine.ErrTimeoutTTFT, "",
		},
		"role chunk and pings but no text within TTFT": {
			script{steps: steps(20*time.Millisecond, roleChunk(), ": ping\n\n", ": ping\n\n", ": ping\n\n"), hold: true},
			func(c *Config) { c.TTFTTimeout = short },
			engine.ErrTimeoutTTFT, "",
		},
		"stall after the first token": {
			script{steps: steps(0, roleChunk(), contentChunk("a")), hold: true},
			func(c *Config) { c.IdleTimeout = short },
			engine.ErrTimeoutIdle, "a",
		},
		"comments do not keep a stalled stream alive": {
			script{steps: append(steps(0, roleChunk(), contentChunk("a")),
				steps(50*time.Millisecond, ": ping\n\n", ": ping\n\n", ": ping\n\n", ": ping\n\n", ": ping\n\n")...), hold: true},
			func(c *Config) { c.IdleTimeout = short },
			engine.ErrTimeoutIdle, "a",
		},
		"steady tokens past the total": {
			script{steps: append(steps(0, roleChunk()), steps(20*time.Millisecond, repeat(contentChunk("t"), 500)...)...)},
			func(c *Config) { c.TotalTimeout = 3 * short },
			engine.ErrTimeoutTotal, "",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.script)
			start := time.Now()
			r := testClient(t, srv.URL+"/v1", tt.cfg).Chat(context.Background(), chatReq())
			if r.Err == nil || r.Err.Class != tt.class {
				t.Fatalf("Err = %v, want class %s", r.Err, tt.class)
			}
			// The other deadlines are 10s or more: ending well before
			// them shows that the short one fired, not a later one.
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Chat returned after %v, want about %v", elapsed, short)
			}
			if tt.text != "" && r.Text != tt.text {
				t.Errorf("Text = %q, want %q", r.Text, tt.text)
			}
			if r.E2E != 0 || r.TPOT != 0 {
				t.Errorf("E2E = %v, TPOT = %v; want both unset for a failed request", r.E2E, r.TPOT)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestChatTimeoutMeasuredFromStart(t *testing.T) {
	srv := serve(t, script{steps: steps(0, roleChunk()), hold: true})
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.TTFTTimeout = 200 * time.Millisecond })
	start := time.Now()
	r := c.Chat(context.Background(), chatReq())
	elapsed := time.Since(start)
	if r.Err == nil || r.Err.Class != engine.ErrTimeoutTTFT {
		t.Fatalf("Err = %v, want timeout_ttft", r.Err)
	}
	if elapsed < 200*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("Chat returned after %v, want about 200ms", elapsed)
	}
}

func TestChatConnRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	r := testClient(t, "http://"+addr+"/v1").Chat(context.Background(), chatReq())
	if r.Err == nil || r.Err.Class != engine.ErrConnRefused {
		t.Fatalf("Err = %v, want conn_refused", r.Err)
	}
	if r.Status != 0 || r.TTFB != 0 {
		t.Errorf("Status = %d, TTFB = %v; want both unset", r.Status, r.TTFB)
	}
	if strings.Contains(r.Err.Message, "Post ") {
		t.Errorf("message %q repeats the URL", r.Err.Message)
	}
}

func TestChatCanceled(t *testing.T) {
	tests := map[string]struct {
		script script
		after  time.Duration
	}{
		"while waiting for headers": {script{steps: []step{{wait: time.Hour}}}, 100 * time.Millisecond},
		"while streaming":           {script{steps: steps(0, roleChunk(), contentChunk("a")), hold: true}, 100 * time.Millisecond},
		"before sending":            {script{steps: steps(0, done())}, 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.script)
			ctx, cancel := context.WithCancel(context.Background())
			if tt.after == 0 {
				cancel()
			} else {
				time.AfterFunc(tt.after, cancel)
			}
			defer cancel()
			r := testClient(t, srv.URL+"/v1").Chat(ctx, chatReq())
			if r.Err == nil || r.Err.Class != engine.ErrCanceled {
				t.Fatalf("Err = %v, want canceled", r.Err)
			}
		})
	}
}

func TestChatReusesConnection(t *testing.T) {
	tests := map[string]script{
		"after [DONE]":              {steps: steps(0, okStream("a", "b")...)},
		"after EOF past finish":     {steps: steps(0, roleChunk(), contentChunk("a"), finishChunk("stop"))},
		"after an HTTP error":       {status: 429, header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, `{"error":"slow down"}`)},
		"after a non-streamed body": {header: map[string]string{"Content-Type": "application/json"}, steps: steps(0, `{"choices":[]}`)},
	}
	for name, sc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conns := make(chan struct{}, 100)
			srv := serve(t, sc, func(s *http.Server) {
				s.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						conns <- struct{}{}
					}
				}
			})
			c := testClient(t, srv.URL+"/v1")
			for range 5 {
				c.Chat(context.Background(), chatReq())
			}
			if got, want := len(conns), 1; got != want {
				t.Errorf("connections = %d, want %d", got, want)
			}
		})
	}
}

func TestChatDrainIsBounded(t *testing.T) {
	// A server that keeps the stream open after [DONE] must cost at most
	// the drain grace, not an idle timeout.
	srv := serve(t, script{steps: steps(0, okStream("a")...), hold: true})
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.IdleTimeout = time.Minute })
	start := time.Now()
	r := c.Chat(context.Background(), chatReq())
	if r.Err != nil {
		t.Fatalf("Err = %v", r.Err)
	}
	if elapsed := time.Since(start); elapsed > 10*drainGrace {
		t.Errorf("Chat took %v, want about the drain grace %v", elapsed, drainGrace)
	}
	if r.E2E >= drainGrace {
		t.Errorf("E2E = %v includes the drain", r.E2E)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

type tlsTimeout struct{}

func (tlsTimeout) Error() string { return "net/http: TLS handshake timeout" }
func (tlsTimeout) Timeout() bool { return true }

func TestClassify(t *testing.T) {
	bg := context.Background()
	tests := map[string]struct {
		err   error
		phase phase
		want  string
	}{
		"unexpected EOF in body":   {fmt.Errorf("read: %w", io.ErrUnexpectedEOF), phaseBody, engine.ErrStreamTruncated},
		"unexpected EOF before":    {fmt.Errorf("read: %w", io.ErrUnexpectedEOF), phaseRequest, engine.ErrConnReset},
		"EOF before response":      {&url.Error{Op: "Post", URL: "u", Err: io.EOF}, phaseRequest, engine.ErrConnReset},
		"broken pipe":              {&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, phaseRequest, engine.ErrConnReset},
		"dial timeout":             {&net.OpError{Op: "dial", Err: timeoutErr{}}, phaseRequest, engine.ErrTimeoutConnect},
		"TLS handshake timeout":    {&url.Error{Op: "Post", URL: "u", Err: tlsTimeout{}}, phaseRequest, engine.ErrTimeoutConnect},
		"DNS failure":              {&net.DNSError{Err: "no such host", Name: "nowhere"}, phaseRequest, engine.ErrNetwork},
		"anything else is network": {errors.New("x509: certificate signed by unknown authority"), phaseRequest, engine.ErrNetwork},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := classify(bg, bg, tt.err, tt.phase, timeouts{}).Class; got != tt.want {
				t.Errorf("class = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassifyCauses(t *testing.T) {
	tm := timeouts{ttft: time.Second, idle: 2 * time.Second, total: 3 * time.Second}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := map[string]struct {
		parent context.Context
		cause  error
		class  string
		msg    string
	}{
		"ttft":                  {context.Background(), causeTTFT, engine.ErrTimeoutTTFT, "no text within 1s"},
		"idle":                  {context.Background(), causeIdle, engine.ErrTimeoutIdle, "no event for 2s"},
		"total":                 {context.Background(), causeTotal, engine.ErrTimeoutTotal, "longer than 3s"},
		"parent wins over ours": {canceled, causeIdle, engine.ErrCanceled, "context canceled"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(tt.parent)
			cancel(tt.cause)
			e := classify(tt.parent, ctx, context.Canceled, phaseBody, tm)
			if got, want := e.Class, tt.class; got != want {
				t.Errorf("class = %q, want %q", got, want)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", e.Message, tt.msg)
			}
		})
	}
}
