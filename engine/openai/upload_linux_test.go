//go:build linux

package openai

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// slowReader serves h on a loopback listener whose connections take in
// at most 32 KB at a time (a small receive buffer, set on the listener so
// that accepted sockets inherit it), as a slow link's far end would: the
// client's kernel can buffer the body, but the peer acknowledges it only
// as fast as the handler reads.
// With cfg it speaks TLS (HTTP/1.1).
func slowReader(t *testing.T, h http.Handler, cfg *tls.Config) *httptest.Server {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = l
	if cfg != nil {
		srv.TLS = cfg
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// paced reads r.Body 16 KB at a time, every gap, and returns when the
// last byte was read.
func paced(r io.Reader, gap time.Duration) time.Time {
	buf := make([]byte, 16<<10)
	for {
		if _, err := io.ReadFull(r, buf); err != nil {
			return time.Now()
		}
		time.Sleep(gap)
	}
}

func TestUploadEndsWhenThePeerHasTheBody(t *testing.T) {
	const gap = 10 * time.Millisecond
	pki := newPKI(t, "test")
	for _, tc := range []struct {
		name   string
		prompt int // bytes of the prompt
		// early has the server send its headers this long before it
		// reads the body (0: it reads the body first, then answers).
		early time.Duration
		// slow says the body is read 16 KB every gap, after a first gap
		// (else at once, after 20 gaps: the kernel holds it meanwhile).
		slow bool
		tls  bool
	}{
		// 1 MB at 16 KB every 10 ms: about 0.65 s on the far end.
		{"a large body read slowly", 1 << 20, 0, true, false},
		// TLS adds its records' bytes, and the peer's kernel acknowledges them alike.
		{"over TLS", 1 << 20, 0, true, true},
		// Under engine.LargeBody the body is not watched: its upload is its write,
		// though the server reads it only 0.2 s later.
		{"a small body", 8 << 10, 0, false, false},
		// The server answers before it reads the body: the upload ends at
		// the answer's first byte at the latest.
		{"an answer before the body is read", 1 << 20, 100 * time.Millisecond, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64 // when the server had read the body, ns after t0's request arrived
			var cfg *tls.Config
			edit := func(c *Config) { c.Tokenizer = TokenizerNone }
			if tc.tls {
				cfg = &tls.Config{Certificates: []tls.Certificate{pki.server("127.0.0.1")}}
				edit = func(c *Config) { c.Tokenizer, c.TLS.CACert = TokenizerNone, pki.CAFile }
			}
			srv := slowReader(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				start := time.Now()
				if tc.early > 0 {
					time.Sleep(tc.early)
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
				}
				if tc.slow {
					time.Sleep(gap)
					read.Store(int64(paced(r.Body, gap).Sub(start)))
				} else {
					time.Sleep(20 * gap)
					_, _ = io.Copy(io.Discard, r.Body)
					read.Store(int64(time.Since(start)))
				}
				chatAnswer(10)(w, r)
			}), cfg)
			c := testClient(t, srv.URL, edit)
			req := &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: strings.Repeat("a", tc.prompt)}}}
			res := c.Chat(context.Background(), req)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			took := time.Duration(read.Load())
			t.Logf("upload %v, TTFB %v, TTFT %v; the server had the body after %v", res.Upload, res.TTFB, res.TTFT, took)
			if res.Upload > res.TTFB {
				t.Errorf("upload %v after the answer's first byte (%v)", res.Upload, res.TTFB)
			}
			switch {
			case tc.early > 0:
				if res.Upload < tc.early/2 {
					t.Errorf("upload %v: want the %v to the answer's first byte, not the write", res.Upload, tc.early)
				}
			case tc.slow:
				// The peer acknowledges what its 16 KB buffer holds before
				// the handler reads it: a gap or two early, on a slow machine more.
				if res.Upload < took*7/10 {
					t.Errorf("upload %v: want at least 70%% of the %v the server took to have the body", res.Upload, took)
				}
			default:
				if res.Upload > took/2 {
					t.Errorf("upload %v of a %d-byte body: want its write, well under the server's %v", res.Upload, tc.prompt, took)
				}
			}
		})
	}
}

// TestUploadOverHTTP2: an HTTP/2 connection carries other streams' bytes
// too, so its acknowledgements say nothing of one body: the upload is
// the body's last byte written, within TTFB, and the request is measured
// as over HTTP/1.1.
func TestUploadOverHTTP2(t *testing.T) {
	pki := newPKI(t, "test")
	url := h2Server(t, pki, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paced(r.Body, time.Millisecond)
		chatAnswer(10)(w, r)
	}), 0)
	c := testClient(t, url+"/v1", func(c *Config) { c.HTTP2, c.TLS.CACert, c.Tokenizer = true, pki.CAFile, TokenizerNone })
	req := &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: strings.Repeat("a", 1<<20)}}}
	res := c.Chat(context.Background(), req)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	t.Logf("upload %v, TTFB %v, TTFT %v", res.Upload, res.TTFB, res.TTFT)
	if res.Upload <= 0 || res.Upload > res.TTFB || res.TTFT <= 0 {
		t.Errorf("upload %v, TTFB %v, TTFT %v: want an upload within TTFB and a first token", res.Upload, res.TTFB, res.TTFT)
	}
}

func TestAckPoll(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		waited  time.Duration
		uploads int64
		want    time.Duration
	}{
		{0, 1, 250 * time.Microsecond},          // at first, the finest
		{64 * ms, 1, ms},                        // a 64th of the wait
		{10 * time.Second, 1, 5 * ms},           // at most 5 ms
		{64 * ms, 65, 2 * ms},                   // 64 more uploads: twice as far apart
		{time.Second, 1000, 5*ms + 5*ms*999/64}, // a thousand: about 83 ms
	} {
		if got := ackPoll(tc.waited, tc.uploads); got != tc.want {
			t.Errorf("ackPoll(%v, %d) = %v, want %v", tc.waited, tc.uploads, got, tc.want)
		}
	}
}
