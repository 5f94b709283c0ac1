// Package toxitest starts a real Toxiproxy for tests, as a faulty link
// between llmload and the server under test: this kernel has no netem, so
// latency, bandwidth, slicing, stalls, resets and cut streams come from
// Toxiproxy's toxics instead, on loopback. The server runs in its own
// process on a free port and stops when the test ends; each proxy listens
// on a free loopback port of its own; toxics are added and removed through
// Toxiproxy's HTTP API while the test runs.
package toxitest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// Directions of a toxic: Downstream is the server's answer on its way to
// the client, Upstream the client's request on its way to the server.
const (
	Downstream = "downstream"
	Upstream   = "upstream"
)

// Binary finds toxiproxy-server: $LLMLOAD_TOXIPROXY. Without it the test is
// skipped, or fails under CI=true, where .ci/run builds it.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("LLMLOAD_TOXIPROXY"); bin != "" {
		return bin
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no toxiproxy-server (LLMLOAD_TOXIPROXY unset): .ci/run builds it with .ci/toxiproxy.sh")
	}
	t.Skip("no toxiproxy-server: build it with `eval $(.ci/toxiproxy.sh)` (sets LLMLOAD_TOXIPROXY)")
	return ""
}

// Server is a running toxiproxy-server.
type Server struct {
	API     string // its HTTP API's base URL
	log     string // the file its output goes to
	client  *toxiproxy.Client
	proxies map[string]*toxiproxy.Proxy // by listen address
	n       atomic.Int64                // names proxies
}

// Start runs toxiproxy-server on 127.0.0.1 and a free port, waits until its
// API answers, and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	port := freePort(t)
	s := &Server{
		API:     "http://127.0.0.1:" + strconv.Itoa(port),
		log:     filepath.Join(t.TempDir(), "toxiproxy.log"),
		proxies: map[string]*toxiproxy.Proxy{},
	}
	out, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	// One line per connection at the default level: only warnings are
	// kept, for a failure message.
	cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start toxiproxy-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	s.client = toxiproxy.NewClient(s.API)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := s.client.Proxies(); err == nil {
			return s
		}
		select {
		case err := <-exited:
			t.Fatalf("toxiproxy-server exited (%v):\n%s", err, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy-server's API did not answer at %s within 15s:\n%s", s.API, s.Log())
		}
	}
}

// Log returns what the server logged so far, for a failure message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Proxy creates a proxy to upstream (host:port) listening on a free
// loopback port, and returns that port's address, host:port. It passes
// bytes unchanged until a toxic is added.
func (s *Server) Proxy(t testing.TB, upstream string) (listen string) {
	t.Helper()
	name := fmt.Sprintf("p%d", s.n.Add(1))
	p, err := s.client.CreateProxy(name, "127.0.0.1:0", upstream)
	if err != nil {
		t.Fatalf("create proxy to %s: %v\n%s", upstream, err, s.Log())
	}
	s.proxies[p.Listen] = p
	return p.Listen
}

// Toxic is one fault on a proxy's link: Type is Toxiproxy's toxic type
// (latency, bandwidth, slow_close, timeout, reset_peer, slicer,
// limit_data), Stream Downstream (the default) or Upstream, Toxicity the
// share of connections it applies to (0: all), Attributes its type's
// attributes, e.g. {"latency": 50, "jitter": 5} in milliseconds.
type Toxic struct {
	Name       string // default type_stream
	Type       string
	Stream     string
	Toxicity   float32
	Attributes map[string]any
}

// AddToxic adds a toxic to the proxy listening on listen and returns its
// name. It applies to connections open now and made later.
func (s *Server) AddToxic(t testing.TB, listen string, tox Toxic) (name string) {
	t.Helper()
	p := s.proxy(t, listen)
	stream := tox.Stream
	if stream == "" {
		stream = Downstream
	}
	name = tox.Name
	if name == "" {
		name = tox.Type + "_" + stream
	}
	toxicity := tox.Toxicity
	if toxicity == 0 {
		toxicity = 1
	}
	if _, err := p.AddToxic(name, tox.Type, stream, toxicity, tox.Attributes); err != nil {
		t.Fatalf("add toxic %s to %s: %v\n%s", name, listen, err, s.Log())
	}
	return name
}

// RemoveToxic removes the toxic named name from the proxy listening on
// listen; the link passes bytes unchanged again.
func (s *Server) RemoveToxic(t testing.TB, listen, name string) {
	t.Helper()
	if err := s.proxy(t, listen).RemoveToxic(name); err != nil {
		t.Fatalf("remove toxic %s from %s: %v\n%s", name, listen, err, s.Log())
	}
}

func (s *Server) proxy(t testing.TB, listen string) *toxiproxy.Proxy {
	t.Helper()
	p, ok := s.proxies[listen]
	if !ok {
		t.Fatalf("no proxy listens on %s", listen)
	}
	return p
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
