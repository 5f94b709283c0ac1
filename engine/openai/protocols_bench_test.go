//go:build unix

package openai

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchServerEnv makes the test binary the streaming server of
// BenchmarkStreamProtocols, in a process of its own, so that the
// benchmark's CPU time and allocations are the client's alone.
const benchServerEnv = "LLMLOAD_BENCH_STREAM_SERVER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(benchServerEnv); dir != "" {
		if err := runBenchServer(dir, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchAddrs is what the server process prints once it listens: a plain
// address (HTTP/1.1 and h2c), a TLS one (http/1.1 and h2 by ALPN), and
// its certificate's file.
type benchAddrs struct{ Plain, TLS, CA string }

// runBenchServer serves streams until stdin closes; each request gets
// ?n= content events (vLLM's shape), each written and flushed alone as a
// server streaming tokens does.
func runBenchServer(dir string, stdin io.Reader, stdout io.Writer) error {
	cert, caFile, err := selfSigned(dir)
	if err != nil {
		return err
	}
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	secure, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(benchStream), Protocols: new(http.Protocols),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go func() { _ = srv.Serve(plain) }()
	go func() { _ = srv.ServeTLS(secure, "", "") }()
	if err := json.NewEncoder(stdout).Encode(benchAddrs{plain.Addr().String(), secure.Addr().String(), caFile}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	return srv.Close()
}

// benchEvent is one content chunk as vLLM streams it.
const benchEvent = `data: {"id":"chatcmpl-8d3f0c6a2b1e4f5a9c7d","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"

func benchStream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for range n {
		_, _ = io.WriteString(w, benchEvent)
		_ = rc.Flush()
	}
	_, _ = io.WriteString(w, finishChunk("stop")+usageChunk(7, n)+done())
}

// selfSigned is a certificate for 127.0.0.1 that is its own CA, and the
// file it is written to in dir.
func selfSigned(dir string) (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	caFile := filepath.Join(dir, "bench-ca.pem")
	if err := os.WriteFile(caFile, pemBlock("CERTIFICATE", der), 0o600); err != nil {
		return tls.Certificate{}, "", err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile, nil
}

// startBenchServer runs the server process for the benchmark's length.
func startBenchServer(b *testing.B) benchAddrs {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+b.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	var addrs benchAddrs
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&addrs); err != nil {
		b.Fatal("bench server:", err)
	}
	return addrs
}

// Streams in flight together, and the tokens of each.
const (
	benchStreams = 64
	benchTokens  = 256
)

// BenchmarkStreamProtocols measures what the client spends per streamed
// token over HTTP/1.1 and HTTP/2, with TLS and without: 64 streams in
// flight together, 256 one-token events each, from a server in another
// process on loopback (so the CPU time and allocations are the client's
// alone). One op is one round of 64 streams; tokens are reported per
// token: wall time, the client process's CPU time, allocations, bytes.
//
//	go test -run '^$' -bench StreamProtocols -benchtime 20x ./engine/openai/
func BenchmarkStreamProtocols(b *testing.B) {
	srv := startBenchServer(b)
	for _, tc := range []struct {
		name, base string
		edit       func(*Config)
	}{
		{"http1.1+tls", "https://" + srv.TLS, func(c *Config) { c.TLS.CACert = srv.CA }},
		{"h2+tls", "https://" + srv.TLS, func(c *Config) { c.TLS.CACert, c.HTTP2 = srv.CA, true }},
		{"http1.1", "http://" + srv.Plain, func(*Config) {}},
		{"h2c", "http://" + srv.Plain, func(c *Config) { c.H2C = true }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := Config{BaseURL: tc.base + "/v1?n=" + strconv.Itoa(benchTokens), Tokenizer: TokenizerNone, MaxConns: benchStreams}
			tc.edit(&cfg)
			c, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdle()
			if _, err := c.Preflight(context.Background(), "m"); err != nil { // with http2: h2 was negotiated
				b.Fatal(err)
			}
			benchRound(b, c) // connections open before the clock starts
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			cpu0, start := cpuTime(b), time.Now()
			n := 0
			for b.Loop() {
				benchRound(b, c)
				n++
			}
			wall, cpu := time.Since(start), cpuTime(b)-cpu0
			runtime.ReadMemStats(&ms1)
			tokens := float64(n * benchStreams * benchTokens)
			b.ReportMetric(float64(wall.Microseconds())/tokens, "µs/token")
			b.ReportMetric(float64(cpu.Microseconds())/tokens, "cpu-µs/token")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/tokens, "allocs/token")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/tokens, "B/token")
		})
	}
}

// benchRound sends benchStreams streams at once and waits for them all.
func benchRound(b *testing.B, c *Client) {
	var wg sync.WaitGroup
	errs := make(chan string, benchStreams)
	for range benchStreams {
		wg.Go(func() {
			r := c.Chat(context.Background(), chatReq())
			if r.Err != nil || r.TextEvents != benchTokens {
				errs <- fmt.Sprintf("err %v, %d text events", r.Err, r.TextEvents)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		b.Fatal(e)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
