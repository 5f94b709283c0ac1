package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer accepts connections on loopback and gives each to handle in
// its own goroutine; it counts the connections it accepted.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int32
	wg    sync.WaitGroup
	mu    sync.Mutex
	open  []net.Conn // closed at the test's end, which idle clients would not
}

func newRawServer(t testing.TB, handle func(n int, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(s.conns.Add(1))
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(n, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/v1/x" }

// readRequest reads one request and its body from br; false at the
// connection's end.
func readRequest(br *bufio.Reader) (*http.Request, bool) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, false
	}
	io.Copy(io.Discard, req.Body)
	return req, true
}

// answers serves every request on a connection with one of the raw
// answers, in turn, the last repeated.
func answers(raw ...string) func(int, net.Conn) {
	return func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			if _, ok := readRequest(br); !ok {
				return
			}
			if _, err := io.WriteString(c, raw[min(i, len(raw)-1)]); err != nil {
				return
			}
		}
	}
}

func newTransport() *Transport {
	return &Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, ReadBufferSize: 2 << 10, WriteBufferSize: 1 << 10}
}

func post(t *testing.T, tr http.RoundTripper, ctx context.Context, u string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	return tr.RoundTrip(req)
}

// TestBodies reads answers of every framing, and reuses the connection
// only where the answer allows it.
func TestBodies(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		body   string
		conns  int32 // for two requests
		once   bool  // the server closes the connection after one answer
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", 1, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", "hello", 1, false},
		{"chunked, trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", "hello", 1, false},
		{"empty", "HTTP/1.1 204 No Content\r\n\r\n", "", 1, false},
		{"no length: ends with the connection", "HTTP/1.1 200 OK\r\n\r\nhello", "hello", 2, true},
		{"connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", "hello", 2, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", 2, false},
		{"bytes beyond the answer", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA", "hello", 2, false},
		{"an early hint first", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handle := answers(tt.answer)
			if tt.once {
				handle = func(_ int, c net.Conn) {
					readRequest(bufio.NewReader(c))
					io.WriteString(c, tt.answer)
				}
			}
			srv := newRawServer(t, handle)
			tr := newTransport()
			for i := range 2 {
				resp, err := post(t, tr, context.Background(), srv.url())
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(got) != tt.body {
					t.Fatalf("request %d: body %q, %v; want %q", i, got, err, tt.body)
				}
			}
			if n := srv.conns.Load(); n != tt.conns {
				t.Errorf("%d connections for two requests, want %d", n, tt.conns)
			}
		})
	}
}

// TestServerClosedIdle: a connection the server closed while it was idle
// is not handed to the next request.
func TestServerClosedIdle(t *testing.T) {
	srv := newRawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// and hangs up, as llama.cpp's server does after each answer
	})
	tr := newTransport()
	for i := range 3 {
		resp, err := post(t, tr, context.Background(), srv.url())
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond) // the server's FIN arrives
	}
	if n := srv.conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

// TestClosedWithoutAnswer: a reused connection that the server closes
// without answering is tried again on a fresh one for an idempotent
// request only; a POST the server may have acted on is a failure.
func TestClosedWithoutAnswer(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		header  string
		retried bool
	}{
		{"GET", http.MethodGet, "", true},
		{"POST", http.MethodPost, "", false},
		{"POST with an idempotency key", http.MethodPost, "Idempotency-Key", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var served atomic.Int32
			srv := newRawServer(t, func(n int, c net.Conn) {
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					if _, ok := readRequest(br); !ok {
						return
					}
					if n == 1 && i == 1 {
						return // the second request on the first connection: closed unanswered
					}
					served.Add(1)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			})
			tr := newTransport()
			do := func() error {
				req, _ := http.NewRequest(tt.method, srv.url(), strings.NewReader("x"))
				if tt.header != "" {
					req.Header.Set(tt.header, "k1")
				}
				resp, err := tr.RoundTrip(req)
				if err != nil {
					return err
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				return err
			}
			if err := do(); err != nil {
				t.Fatal(err)
			}
			err := do()
			if tt.retried && (err != nil || srv.conns.Load() != 2 || served.Load() != 2) {
				t.Errorf("err %v, %d connections, %d served; want the request answered on a second connection", err, srv.conns.Load(), served.Load())
			}
			if !tt.retried && (!errors.Is(err, io.EOF) || srv.conns.Load() != 1) {
				t.Errorf("err %v, %d connections; want EOF on the one connection, not sent again", err, srv.conns.Load())
			}
		})
	}
}

// TestCancelMidBody: canceling the request's context ends a read that
// waits for the next chunk, with the context's error, and closes the
// connection.
func TestCancelMidBody(t *testing.T) {
	closed := make(chan struct{})
	srv := newRawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		c.Read(make([]byte, 1)) // returns when the client closes
		close(closed)
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, newTransport(), ctx, srv.url())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v, want context.Canceled", err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection stayed open")
	}
	resp.Body.Close()
}

// TestCloseEarly: a body closed before its end closes its connection, and
// the next request dials another; a read after Close fails.
func TestCloseEarly(t *testing.T) {
	srv := newRawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, ok := readRequest(br); !ok {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
		}
	})
	tr := newTransport()
	for i := range 2 {
		resp, err := post(t, tr, context.Background(), srv.url())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		io.ReadFull(resp.Body, buf)
		resp.Body.Close()
		if _, err := resp.Body.Read(buf); !errors.Is(err, http.ErrBodyReadAfterClose) {
			t.Errorf("request %d: read after Close: %v", i, err)
		}
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestRefused: what the transport does not send.
func TestRefused(t *testing.T) {
	srv := newRawServer(t, answers("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	proxy, _ := url.Parse("http://127.0.0.1:1")
	tests := []struct {
		name   string
		tr     *Transport
		mutate func(*http.Request)
		want   string
	}{
		{"a line break in a header", newTransport(), func(r *http.Request) { r.Header.Set("X-A", "a\r\nX-Evil: 1") }, "invalid header field value"},
		{"a space in a header's name", newTransport(), func(r *http.Request) { r.Header["X A"] = []string{"1"} }, "invalid header field name"},
		{"another scheme without a fallback", newTransport(), func(r *http.Request) { r.URL.Scheme = "ftp" }, "no fallback"},
		{"a proxy without a fallback", &Transport{Proxy: http.ProxyURL(proxy)}, func(*http.Request) {}, "no fallback"},
		{"no host", newTransport(), func(r *http.Request) { r.URL.Host = "" }, "no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.url(), strings.NewReader("x"))
			tt.mutate(req)
			_, err := tt.tr.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
	if n := srv.conns.Load(); n != 0 {
		t.Errorf("%d connections made, want none", n)
	}
}

// fallbackFunc is a RoundTripper that records it was asked.
type fallbackFunc struct{ used atomic.Int32 }

func (f *fallbackFunc) RoundTrip(*http.Request) (*http.Response, error) {
	f.used.Add(1)
	return &http.Response{StatusCode: 299, Body: http.NoBody}, nil
}

// TestFallback: proxied requests and other schemes go to the fallback.
func TestFallback(t *testing.T) {
	proxy, _ := url.Parse("http://127.0.0.1:1")
	for name, tr := range map[string]*Transport{
		"proxied":      {Proxy: http.ProxyURL(proxy)},
		"proxy failed": {Proxy: func(*http.Request) (*url.URL, error) { return nil, errors.New("bad proxy") }},
	} {
		fb := &fallbackFunc{}
		tr.Fallback = fb
		resp, err := tr.RoundTrip(httptest.NewRequest(http.MethodGet, "http://example.invalid/", nil))
		if err != nil || resp.StatusCode != 299 || fb.used.Load() != 1 {
			t.Errorf("%s: %v, %v, fallback asked %d times", name, resp, err, fb.used.Load())
		}
	}
	fb := &fallbackFunc{}
	tr := &Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }, Fallback: fb}
	req := httptest.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	req.URL.Scheme = "unix"
	if _, err := tr.RoundTrip(req); err != nil || fb.used.Load() != 1 {
		t.Errorf("another scheme: %v, fallback asked %d times", err, fb.used.Load())
	}
}

// TestTrace: the hooks come in order, the second request's connection
// reused.
func TestTrace(t *testing.T) {
	srv := newRawServer(t, answers("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	tr := newTransport()
	for i, wantReused := range []bool{false, true} {
		var events []string
		var reused bool
		trace := &httptrace.ClientTrace{
			GetConn:              func(string) { events = append(events, "GetConn") },
			ConnectStart:         func(string, string) { events = append(events, "ConnectStart") },
			GotConn:              func(i httptrace.GotConnInfo) { reused = i.Reused; events = append(events, "GotConn") },
			WroteHeaders:         func() { events = append(events, "WroteHeaders") },
			WroteRequest:         func(httptrace.WroteRequestInfo) { events = append(events, "WroteRequest") },
			GotFirstResponseByte: func() { events = append(events, "GotFirstResponseByte") },
			Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
				events = append(events, fmt.Sprint(code))
				return nil
			},
		}
		resp, err := post(t, tr, httptrace.WithClientTrace(context.Background(), trace), srv.url())
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "GetConn ConnectStart GotConn WroteHeaders WroteRequest GotFirstResponseByte 103"
		if wantReused {
			want = "GetConn GotConn WroteHeaders WroteRequest GotFirstResponseByte 103"
		}
		if got := strings.Join(events, " "); got != want || reused != wantReused {
			t.Errorf("request %d: %s (reused %v), want %s (reused %v)", i, got, reused, want, wantReused)
		}
	}
}

// TestTLS speaks HTTP/1.1 over TLS even where the configuration offers h2,
// says so in the response, and reuses the connection.
func TestTLS(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	tr := newTransport()
	tr.TLSClientConfig = cfg
	var handshakes int
	for range 2 {
		trace := &httptrace.ClientTrace{TLSHandshakeDone: func(tls.ConnectionState, error) { handshakes++ }}
		ctx := httptrace.WithClientTrace(context.Background(), trace)
		resp, err := post(t, tr, ctx, srv.URL+"/v1")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "HTTP/1.1" || resp.TLS == nil || resp.TLS.NegotiatedProtocol == "h2" {
			t.Errorf("served over %q, TLS %v", got, resp.TLS)
		}
	}
	if conns.Load() != 1 || handshakes != 1 {
		t.Errorf("%d connections, %d handshakes; want 1, 1", conns.Load(), handshakes)
	}
	if cfg.NextProtos[0] != "h2" {
		t.Error("the caller's TLS configuration was changed")
	}
}

// TestHandshakeTimeout: a server that never answers the handshake is a
// handshake timeout, told apart from the request's own deadline.
func TestHandshakeTimeout(t *testing.T) {
	srv := newRawServer(t, func(_ int, c net.Conn) { c.Read(make([]byte, 1<<16)); time.Sleep(2 * time.Second) })
	tr := newTransport()
	tr.TLSHandshakeTimeout = 100 * time.Millisecond
	u := strings.Replace(srv.url(), "http:", "https:", 1)
	_, err := post(t, tr, context.Background(), u)
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("err %v, want a TLS handshake timeout", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	tr.TLSHandshakeTimeout = time.Minute
	if _, err := post(t, tr, ctx, u); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v under the request's deadline, want it", err)
	}
}

// TestPoolBound: no more idle connections are kept than the bound, and an
// idle one past its timeout is closed, not reused.
func TestPoolBound(t *testing.T) {
	srv := newRawServer(t, answers("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	tr := newTransport()
	tr.MaxIdleConnsPerHost = 1
	var resps []*http.Response
	for range 3 { // at once: three connections
		resp, err := post(t, tr, context.Background(), srv.url())
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	for _, r := range resps {
		io.ReadAll(r.Body)
		r.Body.Close()
	}
	key, _, _ := target(resps[0].Request.URL)
	if n := len(tr.idle[key]); n != 1 {
		t.Errorf("%d idle, want 1", n)
	}
	tr.IdleConnTimeout = time.Millisecond
	time.Sleep(20 * time.Millisecond)
	resp, err := post(t, tr, context.Background(), srv.url())
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := srv.conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4: the idle one had timed out", n)
	}
	tr.CloseIdleConnections()
	if n := len(tr.idle[key]); n != 0 {
		t.Errorf("%d idle after CloseIdleConnections", n)
	}
}

// TestNoGoroutinePerConnection is why the package exists: streams in
// flight hold no goroutine of the transport's. Only the server's one per
// connection is counted.
func TestNoGoroutinePerConnection(t *testing.T) {
	const streams = 50
	release := make(chan struct{})
	srv := newRawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n")
		<-release
		io.WriteString(c, "0\r\n\r\n")
	})
	tr := newTransport()
	tr.MaxIdleConnsPerHost = streams
	before := runtime.NumGoroutine()
	var resps []*http.Response
	for range streams {
		resp, err := post(t, tr, context.Background(), srv.url())
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	during := runtime.NumGoroutine() - before
	close(release)
	for _, r := range resps {
		io.ReadAll(r.Body)
		r.Body.Close()
	}
	if during > streams+5 {
		t.Errorf("%d goroutines for %d streams; want the server's %d and no more than a few others", during, streams, streams)
	}
}
