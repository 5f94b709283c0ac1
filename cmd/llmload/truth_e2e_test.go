package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ETruthHarness runs the README's accuracy harness at a small scale:
// the fixed-delay simulator in its own process logging the truth,
// scenarios/scale_bench.lua against it, and report --truth. The errors it
// prints are llmload's own; on loopback they stay far below a millisecond
// per percentile, bounded here generously for a busy machine.
func TestE2ETruthHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary twice")
	}
	dir := t.TempDir()
	truth, result := filepath.Join(dir, "truth.jsonl"), filepath.Join(dir, "scale.json")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "50ms", "--fixed-itl", "5ms", "--truth-log", truth)
	url := mock.mockURL(t)
	_, stderr, code := runBinary(t, nil, "run", "../../scenarios/scale_bench.lua", "--target", url,
		"--set", "vus=8", "--set", "requests=2", "--set", "max_tokens=16", "--out", result, "-q")
	if code != 0 {
		t.Fatalf("run exited %d:\n%s", code, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	stdout, stderr, code := runBinary(t, nil, "report", result, "--truth", truth, "-q")
	if code != 0 {
		t.Fatalf("report exited %d:\n%s", code, stderr)
	}
	t.Log(stdout)
	for _, want := range []string{"16 streamed answers in the run", "TTFT", "16/16", "µs per token", "peak RSS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// Every error column: "+0.123 ±0.064".
	for _, m := range regexp.MustCompile(`([+-]\d+\.\d+) ±`).FindAllStringSubmatch(stdout, -1) {
		if v, _ := strconv.ParseFloat(m[1], 64); v < -5 || v > 25 {
			t.Errorf("an error of %s ms against the server's own figures:\n%s", m[1], stdout)
		}
	}
	data, err := os.ReadFile(truth)
	if err != nil || strings.Count(string(data), "\n") < 16 {
		t.Errorf("truth log: %d lines, %v", strings.Count(string(data), "\n"), err)
	}
	// A log from another run is refused with the reason.
	if _, stderr, code := runBinary(t, nil, "report", result, "--truth", writeFile(t, dir, "other.jsonl",
		`{"arrival":"2001-01-01T00:00:00Z","status":200,"tokens":2,"ttft_ms":1,"e2e_ms":2,"complete":true}`+"\n"), "-q"); code != 1 ||
		!strings.Contains(stderr, "another run's log?") {
		t.Errorf("report with another run's log: exit %d, %s", code, stderr)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
