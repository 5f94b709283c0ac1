//go:build linux

package h1

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// canPeek says pending reports what waits on a connection.
const canPeek = true

// alive reports whether an idle connection can carry a request: nothing
// to read on it, neither the server's close nor stray bytes. net/http
// learns this from a reader goroutine parked on every idle connection;
// one non-blocking peek when the connection is taken costs less.
func alive(c net.Conn) bool { return !pending(c) }

// pending reports whether a read of c would not wait: bytes, the peer's
// close or an error are there, or c cannot be looked at.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	waits := false
	var b [1]byte
	err = raw.Control(func(fd uintptr) {
		for {
			_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if err == unix.EINTR {
				continue
			}
			waits = err == unix.EAGAIN // n == 0 is the peer's close, n > 0 bytes
			return
		}
	})
	return err != nil || !waits
}
