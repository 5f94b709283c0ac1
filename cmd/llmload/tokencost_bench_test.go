package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine/selfcheck"
)

// floorEnv makes the test binary the floor reader (see floorRead) instead
// of running tests: "ADDR STREAMS REQUESTS MAX_TOKENS".
const floorEnv = "LLMLOAD_FLOOR_READ"

// BenchmarkTokenCost is llmload's client CPU per streamed token at 64,
// 256 and 1,024 streams, beside the floor: the same requests to the same
// server, read by a goroutine per connection with no HTTP parsing, no
// JSON and no timing — what Go's netpoller alone costs on this machine,
// measured in the same minute. The server (llmload mock in fixed-delay
// mode: first token after 200 ms, then one a 10 ms) runs on core 0 and
// each client on core 1 when taskset is there. Run it with
//
//	go test -run '^$' -bench TokenCost -benchtime 5x ./cmd/llmload/
//
// Each op is a pair, the floor then llmload; it reports the medians over
// the pairs of µs/token (llmload), floor-µs/token and x-floor, the pairs'
// ratios: on a shared machine the floor alone varies twofold from one
// run to the next, and a pair's two runs share their minute.
func BenchmarkTokenCost(b *testing.B) {
	const requests, maxTokens = 12, 64
	server, client := pinned(0), pinned(1)
	for _, n := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			mock := startCommand(b, server[0], append(server[1:], binary, "mock", "--addr", "127.0.0.1:0",
				"--fixed-ttft", "200ms", "--fixed-itl", "10ms")...)
			target := mock.mockURL(b)
			addr := strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/v1")
			var own, floor, ratio []float64
			for range b.N {
				// The floor first, then llmload, each in a process of its own.
				out := runFloor(b, client, floorEnv, fmt.Sprintf("%s %d %d %d", addr, n, requests, maxTokens))
				f := strings.Fields(out)
				cpu, _ := strconv.ParseFloat(f[0], 64)
				floor = append(floor, 1e6*cpu/float64(n*requests*maxTokens))

				res := filepath.Join(b.TempDir(), "scale.json")
				run := exec.Command(client[0], append(client[1:], binary, "run", "../../scenarios/scale_bench.lua", "--target", target,
					"--set", fmt.Sprint("vus=", n), "--set", fmt.Sprint("requests=", requests), "--set", fmt.Sprint("max_tokens=", maxTokens),
					"--out", res, "-q")...)
				run.Env = cleanEnv()
				if out, err := run.CombinedOutput(); err != nil {
					b.Fatalf("llmload: %v\n%s", err, out)
				}
				r, err := readResult(res)
				if err != nil {
					b.Fatal(err)
				}
				var tokens int64
				for _, s := range r.Stages {
					tokens += s.OutputTokens
				}
				if want := int64(n * requests * maxTokens); tokens != want || r.Run.Process == nil {
					b.Fatalf("llmload read %d tokens, want %d (process %+v)", tokens, want, r.Run.Process)
				}
				own = append(own, 1e6*r.Run.Process.CPUS()/float64(tokens))
				ratio = append(ratio, own[len(own)-1]/floor[len(floor)-1])
			}
			b.ReportMetric(median(own), "µs/token")
			b.ReportMetric(median(floor), "floor-µs/token")
			b.ReportMetric(median(ratio), "x-floor")
			b.ReportMetric(0, "ns/op") // the time of a run is the schedule's, not a cost
		})
	}
}

// pinned is the command prefix that runs a process on core, or nothing
// where taskset or a second core is missing.
func pinned(core int) []string {
	if _, err := exec.LookPath("taskset"); err != nil || runtime.NumCPU() < 2 {
		return []string{"env"}
	}
	return []string{"taskset", "-c", strconv.Itoa(core)}
}

// floorRead is the floor reader: STREAMS connections to ADDR, each sending
// REQUESTS streamed chat requests one after another and reading each
// answer to its end (the chunked body's last chunk) with a goroutine per
// connection, nothing parsed. It prints the CPU seconds the reading took
// and returns the exit code.
func floorRead(spec string) int {
	var addr string
	var n, requests, maxTokens int
	if _, err := fmt.Sscan(spec, &addr, &n, &requests, &maxTokens); err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", floorEnv, spec, err)
		return 2
	}
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"count to a hundred"}],"max_tokens":%d,"stream":true}`, maxTokens)
	req := floorRequest(addr, body)
	conns, err := dialFloor(addr, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	u0, _ := selfcheck.ReadUsage()
	var wg sync.WaitGroup
	var failed sync.Once
	code := 0
	for _, c := range conns {
		wg.Go(func() {
			defer c.Close()
			for range requests {
				if err := c.exchange(req); err != nil {
					failed.Do(func() { fmt.Fprintln(os.Stderr, err); code = 1 })
					return
				}
			}
		})
	}
	wg.Wait()
	u1, _ := selfcheck.ReadUsage()
	cpu := u1.CPU() - u0.CPU()
	fmt.Println(cpu.Seconds())
	return code
}

// floorRequest is a streamed chat request to addr as the floors write
// it: prepared bytes.
func floorRequest(addr, body string) []byte {
	return []byte(fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body))
}

// lastChunk ends a chunked body.
var lastChunk = []byte("\r\n0\r\n\r\n")

// floorConn is a floor's kept-alive connection: it writes a request and
// reads the answer to its chunked body's last chunk, nothing parsed.
type floorConn struct {
	net.Conn
	buf, tail []byte
}

// dialFloor opens n floor connections to addr.
func dialFloor(addr string, n int) ([]*floorConn, error) {
	conns := make([]*floorConn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			for _, open := range conns[:i] {
				open.Close()
			}
			return nil, err
		}
		conns[i] = &floorConn{Conn: c, buf: make([]byte, 4096), tail: make([]byte, 0, 2*len(lastChunk)+4096)}
	}
	return conns, nil
}

// exchange writes req and reads its answer to the end.
func (c *floorConn) exchange(req []byte) error {
	if _, err := c.Write(req); err != nil {
		return err
	}
	c.tail = c.tail[:0]
	for !bytes.HasSuffix(c.tail, lastChunk) {
		k, err := c.Read(c.buf)
		if err != nil {
			return err
		}
		c.tail = append(c.tail[:0], c.tail[max(0, len(c.tail)-len(lastChunk)):]...)
		c.tail = append(c.tail, c.buf[:k]...)
	}
	return nil
}

// runFloor runs this test binary as a floor (env set to spec) under the
// client's command prefix and returns what it printed.
func runFloor(b *testing.B, client []string, env, spec string) string {
	b.Helper()
	cmd := exec.Command(client[0], append(client[1:], os.Args[0])...)
	cmd.Env = append(os.Environ(), env+"="+spec)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s=%q: %v\n%s", env, spec, err, out)
	}
	return string(out)
}
