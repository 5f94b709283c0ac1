package main

import (
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ESpeculativeDecoding runs the simulator in its own process with
// speculative decoding (3 draft tokens a step, each accepted with
// probability 0.7 until the first rejection) and llmload against it with
// its /metrics: the server's acceptance, read from vLLM's spec-decode
// counters, and the client's own tokens per streamed chunk agree with
// each other and with the arithmetic of the drafts.
func TestE2ESpeculativeDecoding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary twice")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--spec-tokens", "3", "--spec-accept", "0.7")
	url := mock.mockURL(t)
	base := url
	stdout, stderr, code := runBinaryWithin(t, 3*time.Minute, nil, "run", "../../scenarios/chat_mix.lua", "--target", base,
		"--metrics-url", strings.TrimSuffix(base, "/v1")+"/metrics", "--set", "duration=3s", "--set", "max_tokens=64", "--out", out)
	if code != 0 {
		t.Fatalf("run exited %d:\n%s\n%s", code, stdout, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	res := loadResult(t, out)
	if res.GPU == nil || len(res.GPU.Stages) == 0 {
		t.Fatalf("no speculative-decoding figures in the result:\n%s", stdout)
	}
	// Per step: 1 + accepted drafts, accepted in order with p = 0.7 each:
	// 1 + 0.7 + 0.49 + 0.343 = 2.533 tokens, and 1.533 of 3 drafts taken.
	const wantLength, wantRate = 2.533, 1.533 / 3
	for _, s := range res.GPU.Stages {
		if s.Spec == nil || s.Spec.AcceptRate == nil || s.Spec.AcceptLength == nil || s.Chunks == nil {
			t.Errorf("stage %s: spec %+v, chunks %+v: want both sides", s.Stage, s.Spec, s.Chunks)
			continue
		}
		rate, length, chunk := *s.Spec.AcceptRate, *s.Spec.AcceptLength, s.Chunks.Mean
		t.Logf("%s: %.0f drafts, acceptance %.3f, accepted length %.3f; client %.3f tokens per chunk over %d requests",
			s.Stage, s.Spec.Drafts, rate, length, chunk, s.Chunks.Requests)
		// Hundreds of drafts a stage: a binomial share's standard error
		// is under 0.03; bounded at about 4 of them.
		if s.Spec.Drafts >= 200 && (math.Abs(rate-wantRate) > 0.12 || math.Abs(length-wantLength) > 0.35) {
			t.Errorf("stage %s: acceptance %.3f, length %.3f; want about %.3f and %.3f", s.Stage, rate, length, wantRate, wantLength)
		}
		// The first chunk (the prefill's one token) and an answer cut at
		// max_tokens pull the client's mean a little below the server's.
		if chunk > length+0.1 || chunk < length-0.6 {
			t.Errorf("stage %s: %.3f tokens per chunk seen by the client, the server's steps %.3f", s.Stage, chunk, length)
		}
	}
	if !strings.Contains(stdout, "speculative decoding:") || !strings.Contains(stdout, "tokens/chunk") {
		t.Errorf("summary lacks the speculative decoding:\n%s", stdout)
	}
}
