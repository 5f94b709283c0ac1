package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSegmentFlags(t *testing.T) {
	ok := writeScript(t, okScript)
	tests := []exitCase{
		{"segment not i/n", []string{"run", "--segment", "1", ok}, exitUsage, "want i/n"},
		{"segment beyond n", []string{"run", "--segment", "4/4", ok}, exitUsage, "must be below n"},
		{"segment zero n", []string{"run", "--segment", "0/0", ok}, exitUsage, "n must be between 1"},
		{"segment with baseline", []string{"run", "--segment", "0/2", "--baseline", "b.json", ok}, exitUsage, "compare the merged result"},
		{"start-at garbage", []string{"run", "--start-at", "soon", ok}, exitUsage, "RFC 3339"},
		{"start-at negative", []string{"run", "--start-at", "+-5s", ok}, exitUsage, "+DURATION"},
		{"more segments than VUs", []string{"run", "--segment", "1/2", "--seed", "1", ok}, exitError, "segment 1/2 gets no VU of this plan"},
		{"segment without a seed", []string{"run", "--segment", "1/2", ok}, exitUsage, "pass one --seed to all 2 segments, e.g. --seed "},
		{"barrier without segment", []string{"run", "--barrier", t.TempDir(), ok}, exitUsage, "give this run's --segment i/n too"},
		{"barrier and start-at", []string{"run", "--segment", "0/2", "--barrier", t.TempDir(), "--start-at", "+1s", ok}, exitUsage, "--barrier and --start-at both decide"},
		{"barrier timeout alone", []string{"run", "--barrier-timeout", "1m", ok}, exitUsage, "--barrier-timeout has no effect without --barrier"},
		{"barrier timeout zero", []string{"run", "--segment", "0/1", "--barrier", t.TempDir(), "--barrier-timeout", "0s", ok}, exitUsage, "must be positive"},
		{"merge barrier without wait", []string{"merge", "--barrier", t.TempDir(), "a.json"}, exitUsage, "--barrier has no effect without --wait"},
		{"start-at far away", []string{"run", "--start-at", "+72h", ok}, exitUsage, "more than 24h"},
		{"merge nothing", []string{"merge"}, exitUsage, "got none"},
		{"merge negative wait", []string{"merge", "--wait", "-1s", "a.json"}, exitUsage, "must not be negative"},
		{"merge missing file", []string{"merge", "/nonexistent/seg-0.json"}, exitError, "/nonexistent/seg-0.json"},
		{"merge not a result", []string{"merge", writeScript(t, "{}")}, exitError, "schema_version"},
		{"merge out dir missing", []string{"merge", "--out", "/nonexistent/dir/m.json", "a.json"}, exitError, "/nonexistent/dir"},
	}
	runExitCases(t, tests)
}

// A segment run holds at the barrier, records it, exits 0 although its
// own share fails a threshold, and says the gate is the merge's.
func TestSegmentRunIsNotItsOwnGate(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, strings.NewReplacer("options = {", `options = { thresholds = { ["ttft.p99"] = "< 1us" },`,
		"target = 1", "target = 2").Replace(okScript))
	out := filepath.Join(dir, "seg.json")
	at := time.Now().Add(1500 * time.Millisecond)
	stdout, stderr, code := runInProcess(t, "run", script, "--segment", "1/2", "--seed", "5", "--start-at", at.Format(time.RFC3339Nano), "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"segment 1/2 of a segmented run", "this segment's share only", "✗ ttft.p99"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "--start-at: the load starts at") {
		t.Errorf("stderr does not announce the barrier:\n%s", stderr)
	}
	res, err := readResult(out)
	if err != nil {
		t.Fatal(err)
	}
	seg := res.Run.Segment
	if seg == nil || seg.Index != 1 || seg.Count != 2 || res.Mergeable == nil || res.Mergeable.State == nil || res.Run.Plan == "" {
		t.Fatalf("segment %+v, mergeable %v, plan %q", seg, res.Mergeable, res.Run.Plan)
	}
	if !seg.PlannedStart.Equal(at.Truncate(0).UTC()) || seg.ActualStart.Before(seg.PlannedStart) {
		t.Errorf("planned %v, actual %v, want the barrier %v and not before it", seg.PlannedStart, seg.ActualStart, at.UTC())
	}
	if len(res.Mergeable.Thresholds) != 1 || res.Mergeable.Thresholds[0].Expr != "ttft.p99" {
		t.Errorf("mergeable thresholds %+v", res.Mergeable.Thresholds)
	}
}

// --wait reads the files as they appear, and names the ones still missing
// when it is over.
func TestMergeWaitsForSegmentFiles(t *testing.T) {
	dir := t.TempDir()
	src := writeScript(t, okScript)
	seg := filepath.Join(dir, "seg-0.json")
	if _, stderr, code := runInProcess(t, "run", src, "--segment", "0/1", "--out", seg, "-q"); code != exitOK {
		t.Fatalf("segment run: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "late.json")
	sleeps := 0
	in, err := readSegments([]string{seg, late}, time.Minute, "", func(time.Duration) {
		sleeps++
		switch sleeps {
		case 1:
			os.WriteFile(late, data[:len(data)/2], 0o644) // half written: not yet a result
		case 2:
			os.WriteFile(late, data, 0o644)
		}
	})
	if err != nil || len(in) != 2 || in[1].Result == nil || sleeps != 2 {
		t.Fatalf("readSegments: %v (%d inputs, %d sleeps)", err, len(in), sleeps)
	}
	_, err = readSegments([]string{seg, filepath.Join(dir, "never.json")}, time.Millisecond, "", func(d time.Duration) { time.Sleep(d) })
	if err == nil || !strings.Contains(err.Error(), "--wait 1ms is over") || !strings.Contains(err.Error(), "never.json") {
		t.Errorf("err = %v", err)
	}
}

// fourVUs is okScript with a VU for each of four segments.
var fourVUs = strings.Replace(okScript, "target = 1", "target = 4", 1)

// Segments started by hand with one --seed always merge; without a seed
// each would draw its own, so a segment of several is refused before it
// runs, with a seed to pass to all.
func TestSegmentsNeedOneSeed(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, fourVUs)
	var files []string
	for i := range 4 {
		out := filepath.Join(dir, fmt.Sprintf("seg-%d.json", i))
		if _, stderr, code := runInProcess(t, "run", script, "--segment", fmt.Sprintf("%d/4", i), "--seed", "8812734", "--out", out, "-q"); code != exitOK {
			t.Fatalf("segment %d/4: exit %d: %s", i, code, stderr)
		}
		files = append(files, out)
	}
	if _, stderr, code := runInProcess(t, append([]string{"merge", "-q"}, files...)...); code != exitOK {
		t.Fatalf("merge of four segments with one seed: exit %d: %s", code, stderr)
	}

	out := filepath.Join(dir, "unseeded.json")
	_, stderr, code := runInProcess(t, "run", script, "--segment", "2/4", "--out", out)
	if code != exitUsage || !regexp.MustCompile(`e\.g\. --seed [1-9][0-9]* \(picked now\)`).MatchString(stderr) {
		t.Errorf("segment without a seed: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) || strings.Contains(stderr, "simulator") {
		t.Errorf("the unseeded segment ran (%v): %s", err, stderr)
	}
	// options.seed is a seed every segment shares.
	seeded := writeScript(t, strings.Replace(fourVUs, "options = {", "options = { seed = 9,", 1))
	if _, stderr, code := runInProcess(t, "run", seeded, "--segment", "1/4", "-q"); code != exitOK {
		t.Errorf("segment with options.seed: exit %d: %s", code, stderr)
	}
}

// With --barrier a merge's wait ends at once when a segment gave up
// there, naming it and why.
func TestMergeWaitStopsAtAnAbortFile(t *testing.T) {
	dir := t.TempDir()
	var sleeps int
	_, err := readSegments([]string{filepath.Join(dir, "seg-0.json")}, time.Hour, dir, func(time.Duration) {
		sleeps++
		os.WriteFile(filepath.Join(dir, "abort-3"), []byte(`{"index":3,"host":"pod-3","reason":"segment 1 was not ready within 10m0s (ready: 0, 2, 3)"}`), 0o644)
	})
	if err == nil || !strings.Contains(err.Error(), "segment 3 (on pod-3) gave up at the barrier: segment 1 was not ready within 10m0s") || sleeps != 1 {
		t.Errorf("after %d sleeps: %v", sleeps, err)
	}
}
