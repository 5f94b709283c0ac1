//go:build linux

package rxtime

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// connect dials a loopback server that runs serve on its end of the one
// connection, and returns the client's end; both close with the test.
func connect(t testing.TB, serve func(c net.Conn)) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			serve(c)
		}
	}()
	nc, err := Dial(&net.Dialer{})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// stamped dials a Conn; it skips the test where the kernel gives none.
func stamped(t testing.TB, serve func(c net.Conn)) *Conn {
	t.Helper()
	nc := connect(t, serve)
	c, ok := nc.(*Conn)
	if !ok {
		t.Skipf("the kernel refused SO_TIMESTAMPNS: %T", nc)
	}
	return c
}

// retried runs attempt until it reports a receive time: the kernel turns
// receive stamping on for the whole machine lazily, once a first socket
// asks for it, so the very first packets after that may carry none.
func retried(t *testing.T, attempt func() bool) {
	t.Helper()
	for range 20 {
		if attempt() {
			return
		}
		// The kernel enables receive stamps machine-wide from a work
		// queue once a socket asks, and disables them the same way when
		// the last such socket closes: the next attempt waits for it.
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("no read carried a receive time in 20 attempts")
}

// TestArrival: bytes read late still carry the time they reached the
// socket, so a reader that was kept from the CPU does not stretch the
// latencies it stamps.
func TestArrival(t *testing.T) { retried(t, func() bool { return exchange(t) }) }

// exchange sends a request, reads the answer late and checks its stamp;
// false when the kernel stamped nothing yet.
func exchange(t *testing.T) bool {
	t.Helper()
	sent := make(chan time.Time, 1)
	c := stamped(t, func(c net.Conn) {
		// Answer a request, as a server does: bytes sent before the
		// client turned stamps on would carry none.
		if _, err := c.Read(make([]byte, 1)); err != nil {
			return
		}
		sent <- time.Now()
		_, _ = c.Write([]byte("data: x\n\n"))
		time.Sleep(50 * time.Millisecond)
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close() // a reset
	})
	if _, err := c.Write([]byte("?")); err != nil {
		t.Fatal(err)
	}
	at := <-sent
	const late = 300 * time.Millisecond
	time.Sleep(late) // the reader is busy elsewhere
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	readAt := time.Now()
	if err != nil || string(buf[:n]) != "data: x\n\n" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	arrived, ok := c.Arrival()
	if !ok {
		if got := Stamp(c, at); got.Before(readAt) {
			t.Errorf("Stamp without a stamp = %v before the read: want now", readAt.Sub(got))
		}
		return false
	}
	if arrived.Before(at) || readAt.Sub(arrived) < late-50*time.Millisecond {
		t.Errorf("arrival %v after the write, read %v after arrival; want ≥ 0 and ≈ %v", arrived.Sub(at), readAt.Sub(arrived), late)
	}
	if got := Stamp(c, at); got.Sub(arrived).Abs() > time.Microsecond {
		t.Errorf("Stamp = %v, want the arrival %v", got, arrived)
	}
	if got := Stamp(c, readAt); got.Before(readAt) {
		t.Error("Stamp went below its floor")
	}
	_, err = c.Read(buf)
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Errorf("after a reset: %v (%T), want a net.OpError wrapping ECONNRESET", err, err)
	}
	return true
}

func TestEOF(t *testing.T) {
	nc := connect(t, func(c net.Conn) {
		_, _ = c.Write([]byte("ab"))
		_ = c.Close()
	})
	got, err := io.ReadAll(nc)
	if err != nil || string(got) != "ab" {
		t.Errorf("ReadAll = %q, %v; want ab, nil", got, err)
	}
	if n, err := nc.Read(nil); n != 0 || err != nil {
		t.Errorf("Read(nil) = %d, %v", n, err)
	}
}

func TestRxTimeMalformed(t *testing.T) {
	for _, oob := range [][]byte{nil, make([]byte, 3), make([]byte, 64)} {
		if _, ok := rxTime(oob); ok {
			t.Errorf("rxTime(%v) found a time", oob)
		}
	}
}

// TestWriteToKeepsStamps: copying the connection reads through Read, so
// the copy's bytes carry their receive time.
func TestWriteToKeepsStamps(t *testing.T) {
	retried(t, func() bool {
		c := stamped(t, func(c net.Conn) {
			_, _ = c.Read(make([]byte, 1))
			_, _ = c.Write([]byte("payload"))
			_ = c.Close()
		})
		if _, err := c.Write([]byte("?")); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if n, err := c.WriteTo(&b); err != nil || n != 7 || b.String() != "payload" {
			t.Errorf("WriteTo = %d, %v, %q", n, err, b.String())
		}
		_, ok := c.Arrival()
		return ok
	})
}

// FuzzRxTime: any control-message bytes (as aligned as the kernel's)
// give a time or none, never a panic or a read out of bounds.
func FuzzRxTime(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 32))
	good := make([]byte, syscall.CmsgSpace(16))
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&good[0]))
	h.Level, h.Type = syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS
	h.SetLen(syscall.CmsgLen(16))
	good[syscall.CmsgLen(0)] = 7
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		var oob struct {
			_   uint64 // aligns buf as the kernel aligns control messages
			buf [64]byte
		}
		n := copy(oob.buf[:], data)
		rxTime(oob.buf[:n])
	})
}

// TestUnacked: what the peer has not taken is unacknowledged, in the
// send queue or in flight, until the peer reads it; then nothing is, and
// a closed connection says nothing.
func TestUnacked(t *testing.T) {
	release := make(chan struct{})
	c := stamped(t, func(s net.Conn) {
		<-release
		_, _ = io.Copy(io.Discard, s)
	})
	// More than the peer's receive buffer and our send buffer hold: the
	// write ends only once the peer reads, so it runs beside the test.
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 16<<20))
		wrote <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		notsent, inflight, ok := c.Unacked()
		if !ok {
			t.Fatal("no TCP_INFO on an open connection")
		}
		if notsent > 0 || inflight > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing unacknowledged while the peer reads nothing")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		notsent, inflight, _ := c.Unacked()
		if notsent == 0 && inflight == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes queued and %d segments in flight after the peer read everything", notsent, inflight)
		}
		time.Sleep(time.Millisecond)
	}
	c.Close()
	if _, _, ok := c.Unacked(); ok {
		t.Error("a closed connection reported TCP_INFO")
	}
}
