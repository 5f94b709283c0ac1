//go:build linux

package openai

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// saturated returns the address of a loopback listener whose accept queue
// is full: it never accepts, and Linux drops further SYNs, so a connect to
// it hangs until the dialer gives up. It skips the test if the kernel
// answers anyway.
func saturated(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("socket:", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skip("bind:", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip("listen:", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Skip("getsockname:", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return addr
		}
		if err != nil {
			t.Skip("filling the accept queue:", err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	t.Skip("the kernel kept accepting connections")
	return ""
}

func TestChatConnectTimeout(t *testing.T) {
	addr := saturated(t)
	c := testClient(t, "http://"+addr+"/v1", func(c *Config) { c.ConnectTimeout = 200 * time.Millisecond })
	r := c.Chat(context.Background(), chatReq())
	if r.Err == nil || r.Err.Class != engine.ErrTimeoutConnect {
		t.Fatalf("Err = %v, want timeout_connect", r.Err)
	}
}
