package toxitest

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line it reads with the same line, until the
// test ends; it returns its address.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip sends a line through c and returns how long its echo took.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	return time.Since(start)
}

func TestProxyPassesBytesAndLatencyDelaysThem(t *testing.T) {
	s := Start(t)
	listen := s.Proxy(t, echoServer(t))
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if d := roundTrip(t, c, r); d > 50*time.Millisecond {
		t.Errorf("without toxics the echo took %v", d)
	}

	// Added while the connection is open: it applies to it at once.
	name := s.AddToxic(t, listen, Toxic{Type: "latency", Attributes: map[string]any{"latency": 100}})
	if d := roundTrip(t, c, r); d < 100*time.Millisecond || d > 300*time.Millisecond {
		t.Errorf("a 100 ms downstream latency: the echo took %v", d)
	}
	s.RemoveToxic(t, listen, name)
	if d := roundTrip(t, c, r); d > 50*time.Millisecond {
		t.Errorf("after removing the toxic the echo took %v", d)
	}
}

func TestUpstreamTimeoutStopsTheLink(t *testing.T) {
	s := Start(t)
	listen := s.Proxy(t, echoServer(t))
	s.AddToxic(t, listen, Toxic{Type: "timeout", Stream: Upstream, Attributes: map[string]any{"timeout": 0}})
	c, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.Read(make([]byte, 8)); err == nil {
		t.Errorf("a stopped link echoed %d bytes", n)
	}
}
