package openai

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/rxtime"
)

// stamp takes t0 where DESIGN.md puts it: the moment a request is handed
// to its connection. net/http's request writer reports it through
// httptrace's WroteHeaders (in the VU's goroutine with h1, in the
// connection's writer goroutine with net/http's transport), called once
// the headers are in the connection's buffer, just before they are
// flushed to the socket; a
// request resent on a fresh connection (a keep-alive race) is stamped
// again, and the last stamp is the one the answer belongs to. A clock
// read before the transport would instead count the time the request
// waited for a connection and for the CPU: in a burst of a thousand VUs
// starting at once, tens of milliseconds that are the client's, not the
// server's.
//
// The connection the request got is kept too: where it keeps the kernel's
// receive times (rxtime.Conn), now stamps the response's bytes with them.
// That holds only while the connection carries this one stream, as
// HTTP/1.1 does. An HTTP/2 connection carries many: its reader goroutine
// reads whichever stream's frames come next, so the kernel's time of the
// connection's latest read may belong to another stream's bytes, later
// than this one's. A response over HTTP/2 therefore drops the connection
// (shared), and its events are stamped when the client reads them, in
// user space, as on a platform without receive times.
//
// The TLS handshake of a new connection is timed too (handshake), with
// the hooks that tlsTrace adds.
//
// A body of engine.LargeBody bytes or more is uploaded when the peer has
// acknowledged it, not when it was written: the kernel's send buffer
// takes megabytes at once, so on a slow link the write returns long
// before the body is across (see awaitAck).
type stamp struct {
	wrote atomic.Pointer[time.Time] // the latest WroteHeaders; nil before it
	// sent is when the latest request's body was written whole
	// (WroteRequest without an error); nil before.
	sent atomic.Pointer[time.Time]
	// acked is when the peer had acknowledged the body (awaitAck), or the
	// response's first byte where that came while it waited; nil when
	// the body was not watched or the wait ended otherwise.
	acked atomic.Pointer[time.Time]
	// awaiting counts the waits running: a request resent on a fresh
	// connection starts its own while the first one's ends.
	awaiting atomic.Int32
	// watch asks for the acknowledgement of this request's body (set
	// before the request is sent); done ends the wait with the request.
	watch  bool
	done   <-chan struct{}
	h2     atomic.Bool // the connection speaks HTTP/2 (ALPN): its bytes are many streams'
	conn   atomic.Pointer[rxtime.Conn]
	reused atomic.Bool
	// tlsStart is the latest TLSHandshakeStart, in Unix ns; tls the
	// duration of the latest handshake that succeeded.
	tlsStart, tls atomic.Int64
}

// trace returns the hooks that stamp s; withTLS adds the handshake's,
// for a client that speaks TLS.
func (s *stamp) trace(withTLS bool) *httptrace.ClientTrace {
	t := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			s.reused.Store(info.Reused)
			s.conn.Store(rxtime.Of(info.Conn))
			if tc, ok := info.Conn.(*tls.Conn); ok && s.watch { // ConnectionState allocates: only where it matters
				s.h2.Store(tc.ConnectionState().NegotiatedProtocol == "h2")
			}
		},
		WroteHeaders: func() {
			now := time.Now()
			s.wrote.Store(&now)
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				now := time.Now()
				s.sent.Store(&now)
				s.startAckWait()
			}
		},
	}
	if s.watch {
		t.GotFirstResponseByte = func() {
			if s.awaiting.Load() > 0 {
				now := time.Now()
				s.acked.CompareAndSwap(nil, &now)
			}
		}
	}
	if withTLS {
		t.TLSHandshakeStart = func() { s.tlsStart.Store(time.Now().UnixNano()) }
		t.TLSHandshakeDone = func(_ tls.ConnectionState, err error) {
			if start := s.tlsStart.Load(); err == nil && start != 0 {
				s.tls.Store(max(time.Now().UnixNano()-start, 1))
			}
		}
	}
	return t
}

// startAckWait begins awaitAck for a watched body on a connection that
// carries only this request (not HTTP/2, whose bytes are many streams').
// It is called from the transport's writer, before its last flush: a body
// that the peer has all but one segment of already is not waited for.
func (s *stamp) startAckWait() {
	c := s.conn.Load()
	if !s.watch || c == nil || s.h2.Load() {
		return
	}
	if notsent, inflight, ok := c.Unacked(); !ok || notsent == 0 && inflight <= 1 {
		return
	}
	s.awaiting.Add(1)
	go s.awaitAck(c, time.Now())
}

// ackWaits counts the uploads awaiting their acknowledgement, in every
// request: their polls space out as they grow many.
var ackWaits atomic.Int64

// awaitAck polls the connection's TCP_INFO until the peer has
// acknowledged all of the body but its last segment (which a receiver
// may acknowledge only with its answer, as delayed ACKs do), and keeps
// that time in acked. It stops at the response's first byte (which sets
// acked itself), at the request's end or on a closed connection. The
// poll's interval grows with the wait, a 64th of it between 250 µs and
// 5 ms, so that the time is within about 2% of a long upload; and with
// the uploads waiting at once, by one part in 64 for each, so that a
// thousand slow uploads poll some 12,000 times a second rather than
// 200,000 (each within about 8% of a one-second upload).
func (s *stamp) awaitAck(c *rxtime.Conn, from time.Time) {
	ackWaits.Add(1)
	defer ackWaits.Add(-1)
	defer s.awaiting.Add(-1)
	t := time.NewTimer(250 * time.Microsecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if s.acked.Load() != nil {
			return
		}
		notsent, inflight, ok := c.Unacked()
		if !ok {
			return
		}
		now := time.Now()
		if notsent == 0 && inflight <= 1 {
			s.acked.CompareAndSwap(nil, &now)
			return
		}
		t.Reset(ackPoll(now.Sub(from), ackWaits.Load()))
	}
}

// ackPoll is the wait before the next poll of an upload that has waited
// so long, with uploads waiting at once.
func ackPoll(waited time.Duration, uploads int64) time.Duration {
	d := min(max(waited/64, 250*time.Microsecond), 5*time.Millisecond)
	return d + d*time.Duration(max(uploads-1, 0))/64
}

// upload is the time from t0 to the body's upload: acknowledged by the
// peer where it was watched (see awaitAck), else its last byte written;
// 0 when it was not written whole. An acknowledgement older than the
// latest write was an earlier attempt's, on a connection that then failed.
func (s *stamp) upload(t0 time.Time) time.Duration {
	at, sent := s.acked.Load(), s.sent.Load()
	if at == nil || sent != nil && at.Before(*sent) {
		at = sent
	}
	if at == nil || t0.IsZero() {
		return 0
	}
	return max(at.Sub(t0), 0)
}

// handshake is the TLS handshake's part of Connect: 0 for a connection
// the request found open, or one without TLS. A request whose own dial
// lost the race to another connection freed meanwhile gets that one
// (GotConn's Reused) and no handshake time.
func (s *stamp) handshake() time.Duration {
	if s.reused.Load() {
		return 0
	}
	return time.Duration(s.tls.Load())
}

// handshook reports that a TLS handshake completed for the request.
func (s *stamp) handshook() bool { return s.tls.Load() > 0 }

// shared says the response came over a connection that other streams
// share (HTTP/2): from now on, events are stamped in user space.
func (s *stamp) shared() { s.conn.Store(nil) }

// now is when the bytes of the response's latest read arrived: the
// kernel's receive time where the connection has one (and carries only
// this stream), else the time of the call. It never goes before t0.
func (s *stamp) now(t0 time.Time) time.Time { return rxtime.Stamp(s.conn.Load(), t0) }

// from returns t0 and the time from issued to it. A request that never
// reached a connection has t0 = issued.
func (s *stamp) from(issued time.Time) (t0 time.Time, connect time.Duration) {
	p := s.wrote.Load()
	if p == nil || p.Before(issued) {
		return issued, 0
	}
	return *p, p.Sub(issued)
}
