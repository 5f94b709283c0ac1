// Package rxtime stamps what a TCP connection reads with the time the
// kernel received it. With SO_TIMESTAMPNS (Linux) every recvmsg also
// returns when the newest bytes it read reached the socket, so a read
// that comes late — its goroutine waited for a busy CPU — still says when
// the bytes arrived. The client stamps stream events with it, so the wait
// for the CPU is not counted into TTFT, ITL and E2E; the simulator stamps
// a request's arrival with it, so its truth log counts the time a request
// queued before its handler ran. Elsewhere Arrival reports no time and
// callers fall back to time.Now.
//
// A Conn also says, from the kernel's TCP_INFO, how much of what was
// written to it the peer has yet to acknowledge: a large request body
// is uploaded when its peer has it, not when the kernel's send buffer
// took it, which on a slow link is most of a second earlier.
package rxtime

import (
	"crypto/tls"
	"net"
	"time"
)

// Of returns the *Conn under c, also beneath TLS; nil when there is none.
func Of(c net.Conn) *Conn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	rc, _ := c.(*Conn)
	return rc
}

// Listener is a net.Listener whose accepted connections are *Conn where
// the kernel gives receive times.
type Listener struct{ net.Listener }

// Accept waits for the next connection.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrap(c), nil
}

// Stamp is the time to stamp c's latest read with: the kernel's receive
// time, or now when c keeps none or its time is before floor (bytes
// cannot arrive before what caused them). c may be nil.
func Stamp(c *Conn, floor time.Time) time.Time {
	if c != nil {
		if at, ok := c.Arrival(); ok && !at.Before(floor) {
			return at
		}
	}
	return time.Now()
}
