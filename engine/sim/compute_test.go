//go:build unix

package sim

import (
	"net/http"
	"syscall"
	"testing"
	"time"
)

// processCPU is this test process's user plus system CPU time.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip("no getrusage:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// With CPUPerToken the simulator spends CPU on every token, as a server
// computing on the CPU does. The bound is generous (a quarter), since a
// busy machine gives the spinning goroutine only part of a core; without
// the spin, a zero-cost answer of 40 tokens takes a few milliseconds.
func TestCPUPerToken(t *testing.T) {
	const tokens, per = 40, 4 * time.Millisecond
	s := New(zeroCost(Config{CPUPerToken: per, StopFraction: -1}))
	defer s.Close()
	before := processCPU(t)
	rec := serve(s, http.MethodPost, "/v1/chat/completions", chatBody(t, "compute", map[string]any{"stream": true, "max_tokens": tokens}), nil)
	used := processCPU(t) - before
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if want := tokens * per / 4; used < want {
		t.Errorf("%d tokens at %v of CPU each used %v of CPU, want at least %v", tokens, per, used, want)
	}
}
