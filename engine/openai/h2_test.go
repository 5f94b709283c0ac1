package openai

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/rxtime"
)

// protoRecorder serves h and keeps the HTTP major version of every
// request it saw.
type protoRecorder struct {
	h     http.Handler
	major chan int
}

func (p protoRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case p.major <- r.ProtoMajor:
	default:
	}
	p.h.ServeHTTP(w, r)
}

// h2cServer is a loopback server for h that speaks HTTP/1.1 and HTTP/2
// in clear text (prior knowledge), with the stream limit maxStreams (0:
// the default).
func h2cServer(t *testing.T, h http.Handler, maxStreams int) string {
	return serve(t, h, func(s *http.Server) {
		s.Protocols = new(http.Protocols)
		s.Protocols.SetHTTP1(true)
		s.Protocols.SetUnencryptedHTTP2(true)
		s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	}).URL
}

// h2Server is a loopback HTTPS server for h that negotiates HTTP/2, with
// a certificate of pki.
func h2Server(t *testing.T, pki *testPKI, h http.Handler, maxStreams int) string {
	t.Helper()
	return serveTLS(t, h, &tls.Config{Certificates: []tls.Certificate{pki.server("127.0.0.1")}}, true, func(s *http.Server) {
		s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	}).URL
}

// timedStream is a first text 200 ms after the role chunk, then nine
// more 20 ms apart, written a byte at a time.
func timedStream() script {
	writes := []step{{write: roleChunk()}, {wait: 200 * time.Millisecond, write: contentChunk("t0")}}
	for range 9 {
		writes = append(writes, step{wait: 20 * time.Millisecond, write: contentChunk("t")})
	}
	return script{steps: append(writes, steps(0, finishChunk("stop"), usageChunk(12, 10), done())...), byteWise: true}
}

// TestHTTP2Streams: with http2 (TLS, ALPN) or h2c the server sees HTTP/2,
// and a stream written byte by byte comes out as over HTTP/1.1: the same
// text and tokens, TTFT some ten times the mean ITL as scripted, ITL
// within the stream's own span. Timings are compared as ratios only.
func TestHTTP2Streams(t *testing.T) {
	pki := newPKI(t, "test")
	tests := map[string]struct {
		url   func(http.Handler) string
		edit  func(*Config)
		major int
	}{
		"http/1.1": {func(h http.Handler) string { return serve(t, h).URL }, func(*Config) {}, 1},
		"h2 over TLS": {func(h http.Handler) string { return h2Server(t, pki, h, 0) },
			func(c *Config) { c.HTTP2, c.TLS.CACert = true, pki.CAFile }, 2},
		"h2c": {func(h http.Handler) string { return h2cServer(t, h, 0) }, func(c *Config) { c.H2C = true }, 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := protoRecorder{h: timedStream(), major: make(chan int, 1)}
			c := testClient(t, tt.url(rec)+"/v1", tt.edit)
			r := c.Chat(context.Background(), chatReq())
			if got := <-rec.major; got != tt.major {
				t.Errorf("server saw HTTP/%d, want HTTP/%d", got, tt.major)
			}
			checkResult(t, r, want{status: 200, text: "t0ttttttttt", textEvents: 10, outputTokens: 10, source: engine.TokensFromUsage,
				client: 7, inputTokens: 12, inputSource: engine.TokensFromUsage, finish: "stop", ttft: true, ttfc: true, e2e: true, streamed: true})
			var sum time.Duration
			for _, d := range r.ITL {
				sum += d
			}
			if ratio := float64(r.TTFT) / float64(sum/9); ratio < 4 || ratio > 25 {
				t.Errorf("TTFT %v is %.1f times the mean ITL %v, want about 10", r.TTFT, ratio, sum/9)
			}
			if sum > r.E2E-r.TTFT || r.TTFB > r.TTFT {
				t.Errorf("ITL sum %v beyond E2E − TTFT %v, or TTFB %v after TTFT %v", sum, r.E2E-r.TTFT, r.TTFB, r.TTFT)
			}
		})
	}
}

// barrier answers once n requests are in flight together, and counts
// the connections they came over.
type barrier struct {
	n       int32
	arrived atomic.Int32
	all     chan struct{}
	mu      sync.Mutex
	conns   map[string]bool
	majors  map[int]bool // HTTP major versions seen
}

func newBarrier(n int) *barrier {
	return &barrier{n: int32(n), all: make(chan struct{}), conns: map[string]bool{}, majors: map[int]bool{}}
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.conns[r.RemoteAddr] = true
	b.majors[r.ProtoMajor] = true
	b.mu.Unlock()
	if b.arrived.Add(1) == b.n {
		close(b.all)
	}
	select {
	case <-b.all:
	case <-r.Context().Done():
		return
	}
	script{steps: steps(0, okStream("a", "b")...)}.ServeHTTP(w, r)
}

// TestHTTP2ConcurrentStreams: MaxConns does not bound the streams in
// flight over HTTP/2: eight requests are all in flight together (the
// server answers none before), sharing connections, and a server's
// limit of three streams a connection opens further connections rather
// than queueing requests.
func TestHTTP2ConcurrentStreams(t *testing.T) {
	const n, limit = 8, 3
	pki := newPKI(t, "test")
	tests := map[string]struct {
		url  func(http.Handler) string
		edit func(*Config)
	}{
		"h2 over TLS": {func(h http.Handler) string { return h2Server(t, pki, h, limit) },
			func(c *Config) { c.HTTP2, c.TLS.CACert = true, pki.CAFile }},
		"h2c": {func(h http.Handler) string { return h2cServer(t, h, limit) }, func(c *Config) { c.H2C = true }},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := newBarrier(n)
			c := testClient(t, tt.url(b)+"/v1", func(c *Config) { tt.edit(c); c.MaxConns, c.Tokenizer = 1, TokenizerNone })
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			results := make([]*engine.Result, n)
			for i := range n {
				wg.Go(func() { results[i] = c.Chat(ctx, chatReq()) })
			}
			wg.Wait()
			for i, r := range results {
				if r.Err != nil || r.Text != "ab" {
					t.Errorf("request %d: err %v, text %q", i, r.Err, r.Text)
				}
			}
			if len(b.majors) != 1 || !b.majors[2] {
				t.Errorf("server saw HTTP major versions %v, want 2 alone", b.majors)
			}
			if got := len(b.conns); got < (n+limit-1)/limit || got >= n {
				t.Errorf("%d streams came over %d connections, want %d to %d (shared, %d a connection at most)",
					n, got, (n+limit-1)/limit, n-1, limit)
			}
		})
	}
}

// TestSharedConnectionStampsInUserSpace: a stamp keeps the kernel's
// receive time of its connection's reads until the connection turns out
// to be shared (HTTP/2); then it stamps with the time of the call.
func TestSharedConnectionStampsInUserSpace(t *testing.T) {
	if !rxtime.Available {
		t.Skip("no kernel receive times here")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // echoes each byte back
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = io.Copy(c, c)
		}
	}()
	nc, err := rxtime.Dial(&net.Dialer{})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	rc := rxtime.Of(nc)
	if rc == nil {
		t.Skip("the kernel refused SO_TIMESTAMPNS")
	}
	// The kernel turns receive stamps on lazily, machine-wide, once a
	// socket asks: the first packets may carry none.
	stamped := false
	for range 20 {
		if _, err := nc.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(nc, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		if _, stamped = rc.Arrival(); stamped {
			break
		}
		time.Sleep(10 * time.Millisecond) // the kernel's work queue turns the stamps on
	}
	if !stamped {
		t.Fatal("no read carried a receive time in 20 attempts")
	}
	floor := time.Now().Add(-time.Minute)
	afterRead := time.Now()
	var s stamp
	s.conn.Store(rc)
	if got := s.now(floor); !got.Before(afterRead) {
		t.Errorf("one stream's connection: stamp %v not before the read returned (%v): not the kernel's time", got, afterRead)
	}
	s.shared()
	if got := s.now(floor); got.Before(afterRead) {
		t.Errorf("shared connection: stamp %v before the call (after %v): still the connection's time", got, afterRead)
	}
}
