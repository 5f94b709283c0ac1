//go:build linux

package rxtime

import (
	"context"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Available says connections here keep the kernel's receive times.
const Available = true

// Conn is a TCP connection whose reads keep the kernel's receive time of
// the bytes they returned (see the package doc). A read that returns bytes
// which arrived over time keeps the latest arrival, never later than the
// read itself.
type Conn struct {
	*net.TCPConn
	raw  syscall.RawConn
	last atomic.Int64 // kernel receive time of the latest read, Unix ns; 0 when none was given

	// One read's arguments and results, for recv: a method value made
	// once, so that a read allocates no closure.
	recvFn  func(fd uintptr) bool
	p       []byte
	n, oobn int
	rerr    error
	oob     [64]byte
}

// Dial returns d's DialContext with receive times turned on; where the
// kernel refuses them the plain connection is returned.
func Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
}

// wrap turns receive times on for c, or returns c as it is.
func wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	rc := &Conn{TCPConn: tc, raw: raw}
	rc.recvFn = rc.recv
	return rc
}

// Read is net.Conn's Read through recvmsg, keeping the receive time. Like
// any net.Conn's, it is called by one goroutine at a time.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.p = p
	err := c.raw.Read(c.recvFn)
	n, oobn, rerr := c.n, c.oobn, c.rerr
	c.p, c.rerr = nil, nil
	if err == nil && rerr != nil {
		err = os.NewSyscallError("recvmsg", rerr)
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	if ns, ok := rxTime(c.oob[:oobn]); ok {
		c.last.Store(ns)
	}
	return n, nil
}

// WriteTo copies through Read, so that a copy keeps the receive times
// (the embedded TCPConn's WriteTo would splice around them).
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{c})
}

// recv is one recvmsg attempt for syscall.RawConn.Read: false to wait
// until the socket is readable.
func (c *Conn) recv(fd uintptr) bool {
	for {
		c.n, c.oobn, _, _, c.rerr = syscall.Recvmsg(int(fd), c.p, c.oob[:], 0)
		if c.rerr != syscall.EINTR {
			return c.rerr != syscall.EAGAIN
		}
	}
}

// Arrival is the kernel's receive time of the latest read, as a time with
// a monotonic reading (so that it subtracts like time.Now's); ok is false
// when no read carried one.
func (c *Conn) Arrival() (time.Time, bool) {
	ns := c.last.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	now := time.Now()
	ago := time.Duration(now.UnixNano() - ns)
	if ago < 0 || ago > time.Minute {
		return time.Time{}, false // the wall clock stepped: trust only the monotonic one
	}
	return now.Add(-ago), true
}

// Unacked reports what the peer has yet to acknowledge of the bytes
// written to c: notsent bytes still queued in the kernel, and inflight
// segments sent and not acknowledged. ok is false when the kernel does not
// say (the connection is closed).
func (c *Conn) Unacked() (notsent, inflight int, ok bool) {
	var info *unix.TCPInfo
	var gerr error
	if err := c.raw.Control(func(fd uintptr) {
		info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || gerr != nil {
		return 0, 0, false
	}
	return int(info.Notsent_bytes), int(info.Unacked), true
}

// rxTime finds the SCM_TIMESTAMPNS message among control messages,
// walking them in place: syscall.ParseSocketControlMessage would allocate
// on every read.
func rxTime(oob []byte) (int64, bool) {
	head := syscall.CmsgLen(0)
	for len(oob) >= head {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < head || l > len(oob) {
			return 0, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS &&
			l-head >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[head]))
			return ts.Nano(), true
		}
		next := syscall.CmsgSpace(l - head)
		if next >= len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}
