package openai

import (
	"context"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestChatTimingAccuracy checks the stamps against a server with known
// delays: the role chunk comes at once and must not count, the first token
// after 200 ms, then nine more 20 ms apart. Bounds are generous for a busy
// shared machine; they still catch a TTFT stamped at the role chunk (~0),
// a TPOT over the wrong count, or a timestamp taken per read batch.
func TestChatTimingAccuracy(t *testing.T) {
	writes := []step{{write: roleChunk()}, {wait: 200 * time.Millisecond, write: contentChunk("t0")}}
	for i := 1; i < 10; i++ {
		writes = append(writes, step{wait: 20 * time.Millisecond, write: contentChunk("t")})
	}
	writes = append(writes, steps(0, finishChunk("stop"), usageChunk(12, 10), done())...)
	srv := serve(t, script{steps: writes})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
	if r.Err != nil {
		t.Fatalf("Err = %v", r.Err)
	}
	within := func(name string, got, lo, hi time.Duration) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %v, want within [%v, %v]", name, got, lo, hi)
		}
	}
	within("TTFT", r.TTFT, 190*time.Millisecond, 300*time.Millisecond)
	within("TPOT", r.TPOT, 18*time.Millisecond, 40*time.Millisecond)
	if got, want := len(r.ITL), 9; got != want {
		t.Fatalf("len(ITL) = %d, want %d", got, want)
	}
	var sum time.Duration
	for _, d := range r.ITL {
		sum += d
	}
	within("mean ITL", sum/9, 18*time.Millisecond, 40*time.Millisecond)
	if got, want := r.OutputTokens, 10; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
	if got, want := r.TokensSource, engine.TokensFromUsage; got != want {
		t.Errorf("TokensSource = %q, want %q", got, want)
	}
	if !(r.TTFB < r.TTFT && r.TTFT < r.E2E) {
		t.Errorf("want TTFB < TTFT < E2E, got %v, %v, %v", r.TTFB, r.TTFT, r.E2E)
	}
	within("E2E - TTFT", r.E2E-r.TTFT, 9*18*time.Millisecond, 9*40*time.Millisecond)
}
