package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/history"
)

// TestHistoryImportJudgesAsTheRunDid: a run that failed its baseline gate
// says so in its file (run.gate), and history import stores it as
// gate_failed, never as a baseline; a file imported twice is stored once.
func TestHistoryImportJudgesAsTheRunDid(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	fast, slow := gateServer(t, "100ms"), gateServer(t, "150ms")
	dir := t.TempDir()
	script := writeScript(t, historyScript)
	base, next := filepath.Join(dir, "base.json"), filepath.Join(dir, "next.json")
	if out, code := histRun(t, fast, script, "--out", base); code != exitOK {
		t.Fatalf("base run: exit %d\n%s", code, out)
	}
	out, code := histRun(t, slow, script, "--out", next, "--baseline", base, "--metrics", "ttft.p50")
	if code != exitThreshold {
		t.Fatalf("gated run: exit %d, want %d\n%s", code, exitThreshold, out)
	}
	if r := wantComplete(t, next); !strings.Contains(r.Run.Gate, "regress") {
		t.Errorf("run.gate = %q, want the gate's failure", r.Run.Gate)
	}
	dsn := "sqlite:" + filepath.Join(dir, "h.db")
	out, code = histCmd(t, "history", "import", "--history", dsn, base, next)
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	wantIn(t, "import", out, base+": stored as run 1 (passed)", next+": stored as run 2 (gate_failed)")
	out, code = histCmd(t, "history", "import", "--history", dsn, next)
	if code != exitOK {
		t.Fatalf("import again: exit %d\n%s", code, out)
	}
	wantIn(t, "import again", out, next+": stored already, as run 2: skipped")
	if runs := listRuns(t, dsn); len(runs) != 2 {
		t.Errorf("list: %d runs, want 2: %v", len(runs), runIDs(runs))
	}
	// The gate-failed run is no baseline: history:last is run 1.
	out, code = histRun(t, fast, script, "--history", dsn, "--baseline", "history:last")
	if code != exitOK {
		t.Fatalf("history:last run: exit %d\n%s", code, out)
	}
	wantIn(t, "history:last", out, "history:last (run 1 of ")
}

// TestHistoryReadersNeedAStore: the commands that read refuse a SQLite
// file that does not exist, and do not create it.
func TestHistoryReadersNeedAStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"list"}, {"show", "last"}, {"trend", "ttft.p99"}, {"check"}, {"export"}, {"prune", "--keep", "3"},
	} {
		out, code := histCmd(t, append(append([]string{"history"}, args...), "--history", "sqlite:"+path)...)
		if code != exitError || !strings.Contains(out, "no such file") {
			t.Errorf("history %s: exit %d, want %d naming no such file\n%s", args[0], code, exitError, out)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("history %s created %s", args[0], path)
		}
	}
}

// TestHistorySegmentUnderEnv: a CI that sets LLMLOAD_HISTORY for every
// job still runs segments (the merge stores the run); an explicit
// --history on a segment is refused.
func TestHistorySegmentUnderEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	url := gateServer(t, "100ms")
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "h.db")
	script := writeScript(t, historyScript)
	args := []string{"run", "--quiet", "--target", url + "/v1", "--model", "m", "--segment", "0/2", "--seed", "7",
		"--out", filepath.Join(dir, "s0.json"), script}
	stdout, stderr, code := runBinary(t, append(noCI, "LLMLOAD_HISTORY="+dsn), args...)
	if code != exitOK {
		t.Fatalf("segment under LLMLOAD_HISTORY: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "history: stored") {
		t.Errorf("a segment was stored:\n%s%s", stdout, stderr)
	}
	out, code := histCmd(t, append([]string{"run", "--history", dsn}, args[1:]...)...)
	if code != exitUsage || !strings.Contains(out, "--history stores whole runs") {
		t.Errorf("segment with --history: exit %d, want %d\n%s", code, exitUsage, out)
	}
	// The other segment, then the merge under the same variable, as the
	// merge Job of llmload k8s --history-secret runs: the whole run is
	// stored, with the labels given.
	args[7], args[11] = "1/2", filepath.Join(dir, "s1.json")
	if stdout, stderr, code := runBinary(t, append(noCI, "LLMLOAD_HISTORY="+dsn), args...); code != exitOK {
		t.Fatalf("segment 1/2: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runBinary(t, append(noCI, "LLMLOAD_HISTORY="+dsn), "merge", "--quiet", "--label", "suite=k8s",
		filepath.Join(dir, "s0.json"), filepath.Join(dir, "s1.json"))
	if code != exitOK {
		t.Fatalf("merge under LLMLOAD_HISTORY: exit %d\n%s%s", code, stdout, stderr)
	}
	// The same merge again, as a merge pod retried after a disruption
	// runs it: the run is stored once.
	stdout, stderr, code = runBinary(t, append(noCI, "LLMLOAD_HISTORY="+dsn), "merge", "--quiet", "--label", "suite=k8s",
		filepath.Join(dir, "s0.json"), filepath.Join(dir, "s1.json"))
	if code != exitOK || !strings.Contains(stdout+stderr, "history: stored already, as run 1") {
		t.Errorf("the same merge again: exit %d, want 0 and \"stored already\"\n%s%s", code, stdout, stderr)
	}
	runs := listRuns(t, dsn)
	if len(runs) != 1 || runs[0].Source != "merge" || runs[0].Segments != 2 || runs[0].Labels["suite"] != "k8s" {
		t.Errorf("stored under LLMLOAD_HISTORY: %+v, want the one merged run of 2 segments labelled suite=k8s", runs)
	}
}

// makeStore creates an empty store at dsn, as a first run would.
func makeStore(t *testing.T, dsn string) {
	t.Helper()
	st, err := history.OpenDSN(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}
