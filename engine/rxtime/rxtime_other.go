//go:build !linux

package rxtime

import (
	"context"
	"net"
	"time"
)

// Available says connections here keep the kernel's receive times.
const Available = false

// Conn is never made where the kernel's receive times are not read.
type Conn struct{ net.Conn }

// Dial returns d's DialContext.
func Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.DialContext
}

func wrap(c net.Conn) net.Conn { return c }

// Arrival reports no time.
func (c *Conn) Arrival() (time.Time, bool) { return time.Time{}, false }

// Unacked reports nothing: the kernel's TCP_INFO is read on Linux only.
func (c *Conn) Unacked() (notsent, inflight int, ok bool) { return 0, 0, false }
