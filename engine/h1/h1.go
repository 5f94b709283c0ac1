// Package h1 is an HTTP/1.1 client transport that does each exchange in
// the caller's goroutine.
//
// net/http's Transport gives every connection two goroutines of its own,
// a reader and a writer, and hands each request and response between
// them and the caller. A load generator holds one connection per stream:
// at 10,000 streams those goroutines' stacks alone are some 160 MB, and
// the handoffs are a third of the CPU a short request costs. Here the
// caller writes the request and reads the response itself, through
// net/http's own request writer and response reader (http.Request.Write,
// http.ReadResponse), so the protocol is net/http's; only the connection
// pool is ours.
//
// Its scope is what a load test's target needs: http and https URLs, a
// direct connection, HTTP/1.1. A request that goes through a proxy, or to
// another scheme, is handed to Fallback.
package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Transport is an http.RoundTripper for HTTP/1.1 with a pool of
// keep-alive connections. Its fields are set before first use.
type Transport struct {
	// Dial opens a TCP connection; the request's context carries its
	// httptrace hooks (DNS, connect).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSClientConfig is cloned for each https connection. "h2" is
	// dropped from its NextProtos: this transport speaks HTTP/1.1 only.
	TLSClientConfig     *tls.Config
	TLSHandshakeTimeout time.Duration // 0: no bound but the request's context
	// MaxIdleConnsPerHost bounds the idle connections kept per host;
	// more are closed when their answer ends. 0 keeps none.
	MaxIdleConnsPerHost int
	IdleConnTimeout     time.Duration // an idle connection older than this is closed, not reused; 0: no limit
	WriteBufferSize     int           // 0: 4 KB
	ReadBufferSize      int           // 0: 4 KB
	// Proxy picks a request's proxy, as http.Transport's does; a request
	// with one goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)
	// Fallback does the requests this transport does not: proxied ones
	// and schemes other than http and https. Nil refuses them.
	Fallback http.RoundTripper

	mu   sync.Mutex
	idle map[string][]*conn // by scheme and address; the most recently used last
	// writers are write buffers, held only while a request is written: a
	// connection spends nearly all its life reading, or idle.
	writers sync.Pool
}

// writer is a write buffer of WriteBufferSize bytes onto w.
func (t *Transport) writer(w io.Writer) *bufio.Writer {
	if bw, ok := t.writers.Get().(*bufio.Writer); ok {
		bw.Reset(w)
		return bw
	}
	return bufio.NewWriterSize(w, size(t.WriteBufferSize))
}

// conn is one connection and its buffers.
type conn struct {
	key    string
	nc     net.Conn // the *tls.Conn for https
	raw    net.Conn // the TCP connection under it
	br     *bufio.Reader
	lim    limitReader // under br: bounds an answer's head
	w      countingWriter
	reused bool
	idleAt time.Time
	closed atomic.Bool
}

// countingWriter counts the bytes the connection took, to tell a request
// that never reached the server from one that did.
// Its error is kept too: net/http's request writer reports an error of
// the body's copy as one reading the body, a type of its own without
// Unwrap, where a reset connection must read as one.
//
// With watch set (a large body over plain TCP), a write that waits longer
// than answerCheck looks whether the server has answered meanwhile: a
// server may refuse a body (a 413) before reading it, and then neither
// read it nor hang up, where the write would wait until the request's
// timeout. net/http's reader goroutine would have read that answer.
type countingWriter struct {
	c     net.Conn
	n     int64
	err   error
	watch bool
}

// errAnswered ends the write of a request whose answer came first.
var errAnswered = errors.New("h1: the server answered before it took the whole request")

// answerCheck is how long a watched write waits before it looks for an
// answer: once per answerCheck of a write held up, a peek.
const answerCheck = 100 * time.Millisecond

func (w *countingWriter) Write(p []byte) (int, error) {
	var n int
	var err error
	if w.watch {
		n, err = w.watched(p)
	} else {
		n, err = w.c.Write(p)
	}
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

// watched writes p, looking for an answer whenever the write has waited
// answerCheck.
func (w *countingWriter) watched(p []byte) (int, error) {
	total := 0
	for {
		w.c.SetWriteDeadline(time.Now().Add(answerCheck))
		n, err := w.c.Write(p)
		total += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			w.c.SetWriteDeadline(time.Time{})
			return total, err
		}
		if pending(w.c) {
			w.c.SetWriteDeadline(time.Time{})
			return total, errAnswered
		}
		p = p[n:]
	}
}

// ReadFrom lets a large body go to the connection in large writes, not
// through the write buffer a few hundred bytes at a time.
func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.watch {
		// Write counts. 32 KB pieces, as net.TCPConn.ReadFrom writes: the
		// size shapes how a buffering proxy takes a body, and so the upload
		// figure (through Toxiproxy at 1,250 KB/s, a 1 MB body written in
		// 64 KB pieces was acknowledged after 0.27-0.37 s in three requests
		// of four, in 32 KB pieces after 0.71-0.76 s; the server had it at
		// about 0.85 s).
		return io.CopyBuffer(struct{ io.Writer }{w}, r, make([]byte, 32<<10))
	}
	n, err := io.Copy(w.c, r)
	w.n += n
	if err != nil {
		w.err = err // a read's error too, kept as the connection's only when it is one (see exchange)
	}
	return n, err
}

func (c *conn) close() {
	if c.closed.CompareAndSwap(false, true) {
		c.nc.Close()
	}
}

// MaxHeadBytes bounds the head of an answer (its status line and
// headers, 1xx answers' included): a server that sends headers without
// end fails its request rather than fill the memory.
const MaxHeadBytes = 1 << 20

// ErrHeadTooLarge is an answer whose head passed MaxHeadBytes.
var ErrHeadTooLarge = errors.New("h1: the server's answer has more than 1 MB of headers")

// limitReader reads from r while left > 0, or without end when left < 0.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if l.left == 0 {
		return 0, ErrHeadTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// watchedBody is the size from which a request's write looks for an early
// answer (see countingWriter): what a kernel's buffers take at once needs
// no watch.
const watchedBody = 256 << 10

// earlyAnswerWait bounds the wait for an answer on a connection whose
// request could not be written whole: one sent before the server hung up
// is in the kernel's buffer already.
const earlyAnswerWait = 100 * time.Millisecond

// HandshakeTimeoutError is a TLS handshake that TLSHandshakeTimeout cut.
type HandshakeTimeoutError struct{}

func (HandshakeTimeoutError) Error() string   { return "h1: TLS handshake timeout" }
func (HandshakeTimeoutError) Timeout() bool   { return true }
func (HandshakeTimeoutError) Temporary() bool { return true }

// RoundTrip does one exchange; see http.RoundTripper. A request whose
// kept-alive connection the server had closed, found so before any byte of
// it was written or, for an idempotent request, before any byte of an
// answer came, is sent once more on a fresh connection, as net/http does.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("h1: request without a URL")
	}
	if fb, ok := t.fallback(req); ok {
		if fb == nil {
			closeBody(req)
			return nil, errors.New("h1: no fallback transport for a " + req.URL.Scheme + " or proxied request")
		}
		return fb.RoundTrip(req)
	}
	if err := validHeader(req.Header); err != nil {
		closeBody(req)
		return nil, err
	}
	key, addr, host := target(req.URL)
	if host == "" {
		closeBody(req)
		return nil, errors.New("h1: no host in the request's URL")
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	for fresh := false; ; fresh = true {
		pc, err := t.get(ctx, req.URL.Scheme, key, addr, host, trace, fresh)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, retry, err := t.exchange(ctx, pc, req, trace)
		if err == nil {
			return resp, nil
		}
		if !retry || fresh || ctx.Err() != nil {
			return nil, err
		}
		if req, err = rewound(req); err != nil {
			return nil, err
		}
	}
}

// fallback reports whether req is for Fallback: a scheme other than http
// and https, or a proxy.
func (t *Transport) fallback(req *http.Request) (http.RoundTripper, bool) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return t.Fallback, true
	}
	if t.Proxy != nil {
		if p, err := t.Proxy(req); err != nil || p != nil {
			return t.Fallback, true // the fallback reports the proxy's error as it does
		}
	}
	return nil, false
}

// validHeader refuses what net/http's Transport refuses: a header line
// must not be able to add another.
func validHeader(h http.Header) error {
	for k, vv := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return errors.New("h1: invalid header field name " + strconv.Quote(k))
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return errors.New("h1: invalid header field value for " + strconv.Quote(k))
			}
		}
	}
	return nil
}

// target is the pool's key, the address to dial and the host name for
// TLS, from a URL; the port defaults by scheme.
func target(u *url.URL) (key, addr, host string) {
	host = u.Hostname()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	addr = net.JoinHostPort(host, port)
	return u.Scheme + "://" + addr, addr, host
}

// rewound is req with its body again, for a resend; an error when the
// body cannot be had again.
func rewound(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("h1: the request's body cannot be sent again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// exchange writes req on pc and reads the answer's head. retry says the
// request may be sent again: pc was reused, and the server closed it
// before taking any of the request, or before answering an idempotent one.
func (t *Transport) exchange(ctx context.Context, pc *conn, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, bool, error) {
	stop := context.AfterFunc(ctx, pc.close)
	var werr error // the write's error, when the request went out only in part
	fail := func(err error, retry bool) (*http.Response, bool, error) {
		stop()
		pc.close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, cerr
		}
		if werr != nil {
			return nil, false, werr
		}
		return nil, retry && pc.reused, err
	}
	pc.w.n, pc.w.err = 0, nil
	pc.w.watch = canPeek && pc.nc == pc.raw && req.ContentLength >= watchedBody // TLS: a write past its deadline breaks the connection
	bw := t.writer(&pc.w)
	err := req.Write(bw) // calls WroteHeaders and WroteRequest, then we flush, as net/http's transport does
	if err == nil {
		err = bw.Flush()
	}
	var op *net.OpError
	if err != nil && (errors.As(pc.w.err, &op) || pc.w.err == errAnswered) {
		err = pc.w.err // the connection's error, not the body's
	}
	bw.Reset(nil)
	t.writers.Put(bw)
	if err != nil {
		if pc.w.n == 0 || ctx.Err() != nil {
			return fail(err, pc.w.n == 0 && (req.GetBody != nil || req.Body == nil || req.Body == http.NoBody))
		}
		// A server may answer before it has read the body (a 413, a 400)
		// and hang up; our write then fails, and its answer, sent before,
		// is what the user must see, as net/http's reader would have read
		// it meanwhile. Where no answer waits, the write's error stands.
		pc.nc.SetReadDeadline(time.Now().Add(earlyAnswerWait))
		werr = err
	}
	first := true
	pc.lim.left = MaxHeadBytes
	for {
		if _, err := pc.br.Peek(1); err != nil {
			return fail(err, first && err == io.EOF && idempotent(req))
		}
		if first && trace != nil && trace.GotFirstResponseByte != nil {
			trace.GotFirstResponseByte()
		}
		first = false
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return fail(err, false)
		}
		if code := resp.StatusCode; code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			if trace != nil && trace.Got1xxResponse != nil {
				if err := trace.Got1xxResponse(code, textproto.MIMEHeader(resp.Header)); err != nil {
					return fail(err, false)
				}
			}
			continue
		}
		pc.lim.left = -1
		if werr != nil {
			pc.nc.SetReadDeadline(time.Time{})
		}
		if tc, ok := pc.nc.(*tls.Conn); ok {
			st := tc.ConnectionState()
			resp.TLS = &st
		}
		b := &body{rc: resp.Body, t: t, pc: pc, ctx: ctx, stop: stop,
			keep: werr == nil && !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols}
		if resp.Body == http.NoBody {
			b.release(true)
			return resp, false, nil
		}
		resp.Body = b
		return resp, false, nil
	}
}

// idempotent is net/http's rule for resending after the server closed a
// reused connection without answering: a body the server may have acted
// on is sent again only for a method that allows it, or with an
// idempotency key.
func idempotent(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// body is a response's body: at its end the connection goes back to the
// pool, closed before it the connection is closed.
type body struct {
	rc   io.ReadCloser
	t    *Transport
	pc   *conn
	ctx  context.Context
	stop func() bool
	keep bool // the answer allows the connection to be reused
	// state is 0 while reading, 1 once the connection was given back or
	// closed at the end, 2 once Close was called.
	state atomic.Int32
}

func (b *body) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case 1:
		return 0, io.EOF
	case 2:
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.release(true)
	case err != nil:
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr
		}
		b.release(false)
	}
	return n, err
}

// Close ends the exchange; before the body's end it closes the connection
// (as net/http's does), whose rest would otherwise have to be read.
func (b *body) Close() error {
	if b.state.Swap(2) == 0 {
		b.stop()
		b.pc.close()
	}
	return nil
}

// release ends the exchange at the body's end (ok) or at an error.
func (b *body) release(ok bool) {
	if !b.state.CompareAndSwap(0, 1) {
		return
	}
	if !b.stop() || !ok || !b.keep || b.pc.br.Buffered() > 0 {
		b.pc.close() // canceled meanwhile, or bytes beyond the answer
		return
	}
	b.t.put(b.pc)
}

// get takes an idle connection for key, or dials one (fresh: always).
func (t *Transport) get(ctx context.Context, scheme, key, addr, host string, trace *httptrace.ClientTrace, fresh bool) (*conn, error) {
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(addr)
	}
	if !fresh {
		if pc, idle := t.takeIdle(key); pc != nil {
			if trace != nil && trace.GotConn != nil {
				trace.GotConn(httptrace.GotConnInfo{Conn: pc.nc, Reused: true, WasIdle: true, IdleTime: idle})
			}
			return pc, nil
		}
	}
	pc, err := t.dial(ctx, scheme, key, addr, host, trace)
	if err != nil {
		return nil, err
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: pc.nc})
	}
	return pc, nil
}

// takeIdle pops the most recently used idle connection of key that is
// still open, closing the stale ones it meets on the way.
func (t *Transport) takeIdle(key string) (*conn, time.Duration) {
	now := time.Now()
	for {
		t.mu.Lock()
		list := t.idle[key]
		if len(list) == 0 {
			t.mu.Unlock()
			return nil, 0
		}
		pc := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		t.mu.Unlock()
		idle := now.Sub(pc.idleAt)
		if (t.IdleConnTimeout > 0 && idle > t.IdleConnTimeout) || !alive(pc.raw) {
			pc.close()
			continue
		}
		pc.reused = true
		return pc, idle
	}
}

// put keeps pc for the next request to its host, or closes it when the
// pool is full.
func (t *Transport) put(pc *conn) {
	pc.idleAt = time.Now()
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	if list := t.idle[pc.key]; len(list) < t.MaxIdleConnsPerHost {
		t.idle[pc.key] = append(list, pc)
		pc = nil
	}
	t.mu.Unlock()
	if pc != nil {
		pc.close()
	}
}

// CloseIdleConnections closes the idle connections, and the fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			pc.close()
		}
	}
	if c, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// dial opens a connection to addr, with TLS for https.
func (t *Transport) dial(ctx context.Context, scheme, key, addr, host string, trace *httptrace.ClientTrace) (*conn, error) {
	dial := t.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	nc := raw
	if scheme == "https" {
		if nc, err = t.handshake(ctx, raw, host, trace); err != nil {
			raw.Close()
			return nil, err
		}
	}
	pc := &conn{key: key, nc: nc, raw: raw}
	pc.w.c = nc
	pc.lim.r = nc
	pc.br = bufio.NewReaderSize(&pc.lim, size(t.ReadBufferSize))
	return pc, nil
}

func size(n int) int {
	if n <= 0 {
		return 4 << 10
	}
	return n
}

// handshake does TLS over raw within TLSHandshakeTimeout.
func (t *Transport) handshake(ctx context.Context, raw net.Conn, host string, trace *httptrace.ClientTrace) (*tls.Conn, error) {
	cfg := t.TLSClientConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = slices.DeleteFunc(slices.Clone(cfg.NextProtos), func(p string) bool { return p == "h2" })
	tc := tls.Client(raw, cfg)
	hctx := ctx
	if t.TLSHandshakeTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, t.TLSHandshakeTimeout)
		defer cancel()
	}
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	err := tc.HandshakeContext(hctx)
	if err != nil && ctx.Err() == nil && hctx.Err() != nil {
		err = HandshakeTimeoutError{}
	}
	if trace != nil && trace.TLSHandshakeDone != nil {
		var st tls.ConnectionState
		if err == nil {
			st = tc.ConnectionState()
		}
		trace.TLSHandshakeDone(st, err)
	}
	if err != nil {
		return nil, err
	}
	return tc, nil
}
