package openai

import (
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/rxtime"
)

// stamp takes t0 where DESIGN.md puts it: the moment a request is handed
// to its connection. The transport's writer goroutine reports it through
// httptrace's WroteHeaders, called once the headers are in the
// connection's buffer, just before they are flushed to the socket; a
// request resent on a fresh connection (a keep-alive race) is stamped
// again, and the last stamp is the one the answer belongs to. A clock
// read before the transport would instead count the time the request
// waited for a connection and for the CPU: in a burst of a thousand VUs
// starting at once, tens of milliseconds that are the client's, not the
// server's.
//
// The connection the request got is kept too: where it keeps the kernel's
// receive times (rxtime.Conn), now stamps the response's bytes with them;
// and whether it was a kept-alive one (see send).
type stamp struct {
	wrote  atomic.Pointer[time.Time] // the latest WroteHeaders; nil before it
	conn   atomic.Pointer[rxtime.Conn]
	reused atomic.Bool // the latest connection had served a request before
}

// trace returns the hooks that stamp s.
func (s *stamp) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			s.conn.Store(rxtime.Of(info.Conn))
			s.reused.Store(info.Reused)
		},
		WroteHeaders: func() {
			now := time.Now()
			s.wrote.Store(&now)
		},
	}
}

// now is when the bytes of the response's latest read arrived: the
// kernel's receive time where the connection has one, else the time of
// the call. It never goes before t0.
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
