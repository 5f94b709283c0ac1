package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/localserver"
	"github.com/llmload/llmload/engine/selfcheck"
)

// requestFloorEnv makes the test binary the request floor (see
// floorRequests) instead of running tests: "ADDR RATE SECONDS CONNS".
const requestFloorEnv = "LLMLOAD_FLOOR_REQUESTS"

// BenchmarkRequestCost is llmload's client CPU per short request in the
// open model (scenarios/rate_bench.lua: a 2-token streamed chat, constant
// arrivals) at 1,000, 2,000 and 4,000 requests a second, beside the
// floor: the same requests at the same rate, written as prepared bytes and
// read to the chunked body's end over kept-alive connections by a
// goroutine each, paced by one goroutine that sleeps until each start — no
// Lua, no request building, no parsing, no timing, no records. The server
// is llmload mock with no delays, on core 0, and each client on core 1
// when taskset is there; the mock's own CPU per request is reported too,
// since it bounds the rate a core can serve.
//
//	go test -run '^$' -bench RequestCost -benchtime 3x ./cmd/llmload/
//
// Each op is a pair, the floor then llmload; it reports the medians over
// the pairs of µs/req (llmload), floor-µs/req, x-floor (the pairs'
// ratios), server-µs/req (the mock's CPU over llmload's run, per request)
// and lag-p99-ms (llmload's schedule lag).
func BenchmarkRequestCost(b *testing.B) {
	const seconds, conns = 10, 200
	server, client := pinned(0), pinned(1)
	for _, rate := range []int{1000, 2000, 4000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			mock := startCommand(b, server[0], append(server[1:], binary, "mock", "--addr", "127.0.0.1:0",
				"--max-batch", "100000", "--prefill-base", "-1ns", "--prefill-per-token", "-1ns",
				"--decode-base", "-1ns", "--decode-per-seq", "-1ns")...)
			target := mock.mockURL(b)
			addr := strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/v1")
			// The mock's CPU, read as llmload's self-check reads a local
			// server's.
			srvProcs, note := localserver.Find(context.Background(), []string{target})
			if srvProcs == nil {
				b.Skipf("the mock's process: %s", note)
			}
			var own, floor, ratio, srv, lag []float64
			for range b.N {
				out := runFloor(b, client, requestFloorEnv, fmt.Sprintf("%s %d %d %d", addr, rate, seconds, conns))
				var cpu float64
				var done int64
				if _, err := fmt.Sscan(out, &cpu, &done); err != nil || done == 0 {
					b.Fatalf("request floor printed %q: %v", out, err)
				}
				floor = append(floor, 1e6*cpu/float64(done))

				res := filepath.Join(b.TempDir(), "rate.json")
				run := exec.Command(client[0], append(client[1:], binary, "run", "../../scenarios/rate_bench.lua", "--target", target,
					"--set", fmt.Sprint("rate=", rate), "--set", fmt.Sprint("duration=", seconds, "s"), "--out", res, "-q")...)
				run.Env = cleanEnv()
				before, _ := srvProcs.CPU()
				if out, err := run.CombinedOutput(); err != nil {
					b.Fatalf("llmload: %v\n%s", err, out)
				}
				after, _ := srvProcs.CPU()
				served := (after - before).Seconds()
				r, err := readResult(res)
				if err != nil {
					b.Fatal(err)
				}
				var requests int64
				var p99 float64
				for _, s := range r.Stages {
					requests += s.Requests
					p99 = max(p99, s.ScheduleLag.P99)
				}
				if requests == 0 || r.Run.Process == nil {
					b.Fatalf("llmload sent %d requests (process %+v)", requests, r.Run.Process)
				}
				own = append(own, 1e6*r.Run.Process.CPUS()/float64(requests))
				ratio = append(ratio, own[len(own)-1]/floor[len(floor)-1])
				srv = append(srv, 1e6*served/float64(requests))
				lag = append(lag, p99)
			}
			b.ReportMetric(median(own), "µs/req")
			b.ReportMetric(median(floor), "floor-µs/req")
			b.ReportMetric(median(ratio), "x-floor")
			b.ReportMetric(median(srv), "server-µs/req")
			b.ReportMetric(median(lag), "lag-p99-ms")
			b.ReportMetric(0, "ns/op") // the time of a run is the schedule's, not a cost
		})
	}
}

// floorRequests is the request floor: CONNS kept-alive connections to
// ADDR, RATE streamed chat requests a second for SECONDS, each written as
// prepared bytes by whichever connection's goroutine is free and read to
// the chunked body's last chunk, nothing parsed. It prints the CPU
// seconds the process used and the requests answered, and returns the
// exit code.
func floorRequests(spec string) int {
	var addr string
	var rate, seconds, n int
	if _, err := fmt.Sscan(spec, &addr, &rate, &seconds, &n); err != nil || rate <= 0 || seconds <= 0 || n <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want ADDR RATE SECONDS CONNS (%v)\n", requestFloorEnv, spec, err)
		return 2
	}
	// The body rate_bench.lua's ping sends, usage asked for as llmload
	// asks, so that both clients read the same answers.
	body := `{"messages":[{"role":"user","content":"ping"}],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`
	req := floorRequest(addr, body)
	conns, err := dialFloor(addr, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	u0, _ := selfcheck.ReadUsage()
	starts := make(chan struct{})
	var wg sync.WaitGroup
	var failed sync.Once
	code := 0
	quit := make(chan struct{}) // closed at the first failure, so the pacer stops
	fail := func(err error) {
		failed.Do(func() { fmt.Fprintln(os.Stderr, err); code = 1; close(quit) })
	}
	var done atomic.Int64
	for _, c := range conns {
		wg.Go(func() {
			defer c.Close()
			for range starts {
				if err := c.exchange(req); err != nil {
					fail(err)
					return
				}
				done.Add(1)
			}
		})
	}
	t0 := time.Now()
	every := time.Second / time.Duration(rate)
pace:
	for i := range rate * seconds {
		if d := time.Until(t0.Add(time.Duration(i) * every)); d > 0 {
			time.Sleep(d)
		}
		select {
		case starts <- struct{}{}:
		case <-quit:
			break pace
		}
	}
	close(starts)
	wg.Wait()
	u1, _ := selfcheck.ReadUsage()
	cpu := u1.CPU() - u0.CPU()
	fmt.Println(cpu.Seconds(), done.Load())
	return code
}
