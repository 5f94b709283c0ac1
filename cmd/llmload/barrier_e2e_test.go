package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/barrier"
)

// barrierScenario gives each of three segments a VU.
const barrierScenario = `
local llm = require("llmload")
options = { stages = { { name = "c3", target = 3, duration = "1s" } } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
end
`

// barrierRun is the command line of segment i/n at the barrier bar,
// writing dir/seg-i.json.
func barrierRun(script, bar, dir string, i, n int, extra ...string) []string {
	return append([]string{"run", script, "--segment", fmt.Sprintf("%d/%d", i, n), "--seed", "7", "--barrier", bar, "-q",
		"--out", filepath.Join(dir, fmt.Sprintf("seg-%d.json", i))}, extra...)
}

// waitExit waits, a minute at most, for s to exit.
func waitExit(t *testing.T, s *started, what string) {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		t.Fatalf("%s still running after a minute:\n%s", what, s.stderr.String())
	}
}

// Three segment processes, one started 1.5 s after the others, start
// their load together at the barrier and merge; one started again after
// the others ran is refused and leaves the first attempt's result alone.
func TestE2EBarrierStartsSegmentsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary five times")
	}
	dir := t.TempDir()
	script := writeFile(t, dir, "b.lua", barrierScenario)
	bar := filepath.Join(dir, "run-barrier")
	var procs []*started
	for i := range 3 {
		if i == 2 {
			time.Sleep(1500 * time.Millisecond)
		}
		procs = append(procs, startCommand(t, binary, barrierRun(script, bar, dir, i, 3)...))
	}
	for i, p := range procs {
		waitExit(t, p, fmt.Sprintf("segment %d", i))
		if p.code != exitOK {
			t.Fatalf("segment %d exited %d:\n%s", i, p.code, p.stderr.String())
		}
	}
	files := segmentFiles(dir, 3)
	var planned time.Time
	var first, last time.Time
	for i, f := range files {
		seg := loadResult(t, f).Run.Segment
		if i == 0 {
			planned, first, last = seg.PlannedStart, seg.ActualStart, seg.ActualStart
		}
		if !seg.PlannedStart.Equal(planned) || seg.PlannedStart.IsZero() {
			t.Errorf("segment %d planned %v, segment 0 %v: want one instant", i, seg.PlannedStart, planned)
		}
		first, last = minTime(first, seg.ActualStart), maxTime(last, seg.ActualStart)
	}
	if spread := last.Sub(first); spread > 250*time.Millisecond {
		t.Errorf("segments started %v apart, want together", spread)
	}
	stdout, stderr, code := runBinary(t, nil, append([]string{"merge", "--wait", "10s", "--barrier", bar}, files...)...)
	if code != exitOK || !strings.Contains(stdout, "merged  3 segments") {
		t.Fatalf("merge exited %d:\n%s\n%s", code, stdout, stderr)
	}

	// Up to the lead (2 s) past the start, a segment that finds the set
	// complete still joins, starting at once; after that it is late.
	time.Sleep(time.Until(planned.Add(2*barrier.DefaultLead + 500*time.Millisecond)))
	before, _ := os.ReadFile(files[1])
	_, stderr, code = runBinary(t, nil, barrierRun(script, bar, dir, 1, 3)...)
	if code != exitError || !strings.Contains(stderr, "segment 1/3 arrived too late") {
		t.Errorf("a segment started again: exit %d, %s", code, stderr)
	}
	if after, _ := os.ReadFile(files[1]); !bytes.Equal(before, after) {
		t.Error("the late segment overwrote the first attempt's result")
	}
}

// A segment that never starts makes the others give up after
// --barrier-timeout, naming it, without a result; the merge waiting
// beside them stops at their abort file.
func TestE2EBarrierTimesOutNamingTheMissingSegment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary three times")
	}
	dir := t.TempDir()
	script := writeFile(t, dir, "b.lua", barrierScenario)
	bar := filepath.Join(dir, "run-barrier")
	merge := startCommand(t, binary, append([]string{"merge", "--wait", "2m", "--barrier", bar}, segmentFiles(dir, 3)...)...)
	procs := []*started{
		startCommand(t, binary, barrierRun(script, bar, dir, 0, 3, "--barrier-timeout", "3s")...),
		startCommand(t, binary, barrierRun(script, bar, dir, 1, 3, "--barrier-timeout", "3s")...),
	}
	for i, p := range procs {
		waitExit(t, p, fmt.Sprintf("segment %d", i))
		if p.code != exitError || !strings.Contains(p.stderr.String(), "segment 2 was not ready within 3s") {
			t.Errorf("segment %d: exit %d, %s", i, p.code, p.stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("seg-%d.json", i))); err == nil {
			t.Errorf("segment %d wrote a result", i)
		}
	}
	waitExit(t, merge, "the merge")
	if got := merge.stderr.String(); merge.code != exitError || !strings.Contains(got, "gave up at the barrier: segment 2 was not ready") {
		t.Errorf("merge: exit %d, %s", merge.code, got)
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
