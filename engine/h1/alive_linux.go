//go:build linux

package h1

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// alive reports whether an idle connection can carry a request: nothing
// to read on it, neither the server's close nor stray bytes. net/http
// learns this from a reader goroutine parked on every idle connection;
// one non-blocking peek when the connection is taken costs less.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	err = raw.Control(func(fd uintptr) {
		for {
			_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if err == unix.EINTR {
				continue
			}
			ok = err == unix.EAGAIN // n == 0 is the server's close, n > 0 bytes nobody asked for
			return
		}
	})
	return err == nil && ok
}
