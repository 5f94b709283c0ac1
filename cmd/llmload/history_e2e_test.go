package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/pgtest"
	"github.com/llmload/llmload/engine/result"
)

// historyScript is gateScript for one second: about 32 requests at a
// 100 ms TTFT, enough for a TTFT p50 and a store's round trip.
var historyScript = strings.Replace(gateScript, `duration = "3s"`, `duration = "1s"`, 1)

// longScript is a plan whose load would take 10 seconds: a command
// that must fail before the load finishes far sooner.
var longScript = strings.Replace(gateScript, `duration = "3s"`, `duration = "10s"`, 1)

// noCI hides a CI job's variables from the binary, whose runs would
// otherwise be labelled with the job's commit and branch.
var noCI = []string{"GITHUB_ACTIONS=", "GITLAB_CI=", "BUILDKITE="}

// histRun runs script against url through the binary; extra flags go
// before the script. It returns stdout and stderr together.
func histRun(t *testing.T, url, script string, extra ...string) (string, int) {
	t.Helper()
	args := append([]string{"run", "--quiet", "--target", url + "/v1", "--model", "m"}, extra...)
	stdout, stderr, code := runBinary(t, noCI, append(args, script)...)
	return stdout + stderr, code
}

// histCmd runs an llmload command and returns its output, together.
func histCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := runBinary(t, noCI, args...)
	return stdout + stderr, code
}

// mustRun runs script and fails the test unless it exits 0; it returns
// the id the history stored the run as.
func mustRun(t *testing.T, url, script string, extra ...string) int64 {
	t.Helper()
	out, code := histRun(t, url, script, extra...)
	if code != exitOK {
		t.Fatalf("run %s: exit %d, want 0\n%s", strings.Join(extra, " "), code, out)
	}
	return storedID(t, out)
}

var storedRe = regexp.MustCompile(`history: stored as run (\d+) in `)

// storedID reads the id a run's "history: stored as run N" line names.
func storedID(t *testing.T, out string) int64 {
	t.Helper()
	m := storedRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"history: stored as run N\" line:\n%s", out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// listRuns reads history list --format json: the runs, newest first.
func listRuns(t *testing.T, dsn string, extra ...string) []runJSON {
	t.Helper()
	stdout, stderr, code := runBinary(t, noCI, append([]string{"history", "list", "--history", dsn, "--format", "json"}, extra...)...)
	if code != exitOK {
		t.Fatalf("history list: exit %d\n%s%s", code, stdout, stderr)
	}
	var runs []runJSON
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		t.Fatalf("history list --format json: %v\n%s", err, stdout)
	}
	return runs
}

func runIDs(runs []runJSON) []int64 {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// wantIn fails the test for each of want that out lacks.
func wantIn(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q\n%s", what, w, out)
		}
	}
}

// wantComplete checks that path holds a whole result of one measured
// stage, as run --out writes it.
func wantComplete(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := readResult(path)
	if err != nil {
		t.Fatalf("the run's result: %v", err)
	}
	if !r.Run.Complete || len(r.Stages) != 1 || r.Stages[0].OK == 0 {
		t.Errorf("%s: complete %v, %d stages (want a complete run of one measured stage)", path, r.Run.Complete, len(r.Stages))
	}
	return r
}

// TestHistoryStoreAndRead is the history's round trip through the
// binary: three labelled runs stored in SQLite, then read back by list,
// show, trend and export, and pruned.
func TestHistoryStoreAndRead(t *testing.T) {
	if testing.Short() {
		t.Skip("three 1-second runs")
	}
	t.Parallel()
	url, script := gateServer(t, "100ms"), writeScript(t, historyScript)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	outFile := filepath.Join(t.TempDir(), "r.json")
	var ids []int64
	for range 3 {
		ids = append(ids, mustRun(t, url, script, "--history", dsn, "--label", "branch=main", "--out", outFile))
	}
	if want := []int64{1, 2, 3}; !slices.Equal(ids, want) {
		t.Errorf("stored as runs %v, want %v", ids, want)
	}
	t.Run("list", func(t *testing.T) {
		out, code := histCmd(t, "history", "list", "--history", dsn)
		if code != exitOK || strings.Count(out, "branch=main") != 3 || strings.Count(out, "passed") != 3 {
			t.Errorf("history list: exit %d, want 3 passed runs labelled branch=main\n%s", code, out)
		}
		runs := listRuns(t, dsn)
		if got, want := runIDs(runs), []int64{3, 2, 1}; !slices.Equal(got, want) {
			t.Fatalf("list --format json: runs %v, want %v (newest first)", got, want)
		}
		for _, r := range runs {
			if r.Labels["branch"] != "main" || r.Source != "run" || !r.Complete || r.Model != "m" || r.Plan != runs[0].Plan {
				t.Errorf("run %d: %+v, want a complete run of model m, plan %s, stored by run, labelled branch=main", r.ID, r, runs[0].Plan)
			}
		}
	})
	t.Run("show", func(t *testing.T) {
		out, code := histCmd(t, "history", "show", "last", "--history", dsn)
		if code != exitOK {
			t.Fatalf("history show last: exit %d\n%s", code, out)
		}
		wantIn(t, "history show last", out, "run:", "3\n", "labels:", "branch=main", "verdict:", "passed", "TTFT")
		stdout, stderr, code := runBinary(t, noCI, "history", "show", "--format", "json", "--history", dsn, "last")
		if code != exitOK {
			t.Fatalf("history show --format json last: exit %d\n%s", code, stderr)
		}
		if _, err := result.ReadJSON(strings.NewReader(stdout)); err != nil {
			t.Fatalf("history show --format json: not a result: %v\n%s", err, stdout)
		}
		// The store gives back the file --out wrote, byte for byte.
		if want := readFile(t, outFile); stdout != want {
			t.Errorf("show last --format json is not run 3's --out file:\n%s\nwant:\n%s", stdout, want)
		}
	})
	t.Run("trend", func(t *testing.T) {
		out, code := histCmd(t, "history", "trend", "--history", dsn, "ttft.p99")
		if code != exitOK {
			t.Fatalf("history trend: exit %d\n%s", code, out)
		}
		if !regexp.MustCompile(`(?m)^\s+[▁▂▃▄▅▆▇█]{3}\s+min \S+\s+max \S+$`).MatchString(out) {
			t.Errorf("history trend: no sparkline of 3 runs\n%s", out)
		}
		rows := regexp.MustCompile(`(?m)^\s+([123])\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+[\d.]+\s`).FindAllStringSubmatch(out, -1)
		if len(rows) != 3 || rows[0][1] != "1" || rows[2][1] != "3" {
			t.Errorf("history trend: %d rows, want runs 1, 2, 3, oldest first\n%s", len(rows), out)
		}
	})
	t.Run("export", func(t *testing.T) { testExport(t, dsn) })
	t.Run("prune", func(t *testing.T) {
		out, code := histCmd(t, "history", "prune", "--history", dsn, "--keep", "2")
		if code != exitOK || !strings.Contains(out, "pruned 1 run from") {
			t.Errorf("history prune --keep 2: exit %d, want 1 run pruned\n%s", code, out)
		}
		if got, want := runIDs(listRuns(t, dsn)), []int64{3, 2}; !slices.Equal(got, want) {
			t.Errorf("after prune --keep 2: runs %v, want %v", got, want)
		}
	})
}

// testExport checks export's CSV (one row per run and stage) and JSON
// lines (one run with its result a line) of three runs.
func testExport(t *testing.T, dsn string) {
	stdout, stderr, code := runBinary(t, noCI, "history", "export", "--history", dsn, "--format", "csv")
	if code != exitOK {
		t.Fatalf("history export --format csv: exit %d\n%s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("export csv: %v, %d rows, want a header and 3 rows\n%s", err, len(rows), stdout)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, row := range rows[1:] {
		ttft, err := strconv.ParseFloat(row[col["ttft_p50_ms"]], 64)
		if err != nil || ttft < 95 || ttft > 200 || row[col["labels"]] != "branch=main" || row[col["stage"]] != "default/c8" {
			t.Errorf("export csv row %v: want stage default/c8, labels branch=main and a TTFT p50 near 100 ms", row)
		}
	}
	stdout, stderr, code = runBinary(t, noCI, "history", "export", "--history", dsn, "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("history export --format jsonl: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("export jsonl: %d lines, want 3\n%s", len(lines), stdout)
	}
	for _, line := range lines {
		var r struct {
			ID     int64             `json:"id"`
			Labels map[string]string `json:"labels"`
			Result json.RawMessage   `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export jsonl: %v\n%s", err, line)
		}
		res, err := result.ReadJSON(bytes.NewReader(r.Result))
		if err != nil || len(res.Stages) != 1 || r.Labels["branch"] != "main" {
			t.Errorf("export jsonl run %d: result %v, labels %v; want a result of one stage, branch=main", r.ID, err, r.Labels)
		}
	}
}

// TestHistoryGate is --baseline history:… through the binary: pooled
// 100 ms runs judge a 150 ms run a regression and a 100 ms run none, and
// a run that failed its gate never becomes a baseline.
func TestHistoryGate(t *testing.T) {
	if testing.Short() {
		t.Skip("seven 1-second runs")
	}
	t.Parallel()
	fast, slow := gateServer(t, "100ms"), gateServer(t, "150ms")
	script := writeScript(t, historyScript)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	// TTFT p50 is what a one-second run measures well: a p99 of 32
	// requests is their slowest, which a busy machine moves.
	store := []string{"--history", dsn, "--label", "branch=main", "--metrics", "ttft.p50"}
	var base []int64
	for range 3 {
		base = append(base, mustRun(t, fast, script, "--history", dsn, "--label", "branch=main"))
	}
	median := append([]string{"--baseline", "history:median:3", "--baseline-label", "branch=main"}, store...)
	pooled := fmt.Sprintf("history:median:3 (runs %d,%d,%d of sqlite:", base[0], base[1], base[2])

	out, code := histRun(t, slow, script, median...)
	if code != exitThreshold || !regressedOn(out, "ttft.p50") {
		t.Errorf("median:3 gate of a 150 ms run: exit %d, want 99 with a ttft.p50 REGRESSION\n%s", code, out)
	}
	wantIn(t, "median:3 gate of a 150 ms run", out, pooled)
	bad1 := storedID(t, out)

	out, code = histRun(t, fast, script, median...)
	if code != exitOK {
		t.Errorf("median:3 gate of a 100 ms run after a regressed one: exit %d, want 0\n%s", code, out)
	}
	wantIn(t, "median:3 gate after a regressed run", out, pooled) // not the regressed run
	good := storedID(t, out)

	last := append([]string{"--baseline", "history:last"}, store...)
	lastOf := fmt.Sprintf("history:last (run %d of sqlite:", good)
	out, code = histRun(t, slow, script, last...)
	if code != exitThreshold || !regressedOn(out, "ttft.p50") {
		t.Errorf("history:last gate of a 150 ms run: exit %d, want 99 with a ttft.p50 REGRESSION\n%s", code, out)
	}
	wantIn(t, "history:last gate of a 150 ms run", out, lastOf)
	bad2 := storedID(t, out)

	out, code = histRun(t, fast, script, last...)
	if code != exitOK {
		t.Errorf("history:last gate of a 100 ms run: exit %d, want 0\n%s", code, out)
	}
	wantIn(t, "history:last gate after a regressed run", out, lastOf)

	for _, r := range listRuns(t, dsn) {
		want := "passed"
		if r.ID == bad1 || r.ID == bad2 {
			want = "gate_failed"
		}
		if r.Verdict != want || (want == "gate_failed") != strings.Contains(r.Reason, "regression") {
			t.Errorf("run %d: verdict %q (%s), want %s", r.ID, r.Verdict, r.Reason, want)
		}
	}
}

// TestHistoryNoBaselineYet is a history gate before the history holds a
// run of the plan: --no-baseline pass runs and notes it, fail refuses
// before the load, and a label that no run has is the same as no run.
func TestHistoryNoBaselineYet(t *testing.T) {
	if testing.Short() {
		t.Skip("two 1-second runs")
	}
	t.Parallel()
	url := gateServer(t, "100ms")
	script, long := writeScript(t, historyScript), writeScript(t, longScript)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	refused := func(name string, args ...string) {
		t.Helper()
		began := time.Now()
		out, code := histRun(t, url, args[len(args)-1], args[:len(args)-1]...)
		if took := time.Since(began); code != exitError || took > 8*time.Second {
			t.Errorf("%s: exit %d after %s, want 1 before the load\n%s", name, code, took.Round(time.Millisecond), out)
		}
		wantIn(t, name, out, "no passed, complete run of this plan", "(--no-baseline fail)")
		if strings.Contains(out, "latency ms") {
			t.Errorf("%s: the load ran\n%s", name, out)
		}
	}
	refused("--no-baseline fail, empty store", "--history", dsn, "--baseline", "history:last", "--no-baseline", "fail", long)
	if runs := listRuns(t, dsn); len(runs) != 0 {
		t.Errorf("--no-baseline fail stored %d runs, want none", len(runs))
	}

	out, code := histRun(t, url, script, "--history", dsn, "--baseline", "history:last", "--label", "branch=main")
	if code != exitOK {
		t.Errorf("first run with history:last: exit %d, want 0\n%s", code, out)
	}
	wantIn(t, "first run with history:last", out, "no baseline yet", "the gate is skipped")
	storedID(t, out)

	refused("--no-baseline fail, no run labelled so", "--history", dsn, "--baseline", "history:last",
		"--baseline-label", "branch=nosuch", "--no-baseline", "fail", script)
	out, code = histRun(t, url, script, "--history", dsn, "--baseline", "history:last", "--baseline-label", "branch=nosuch")
	if code != exitOK || !strings.Contains(out, "no baseline yet") || !strings.Contains(out, "labelled branch=nosuch") {
		t.Errorf("history:last, no run labelled so: exit %d, want 0 and a note naming the label\n%s", code, out)
	}
	if runs := listRuns(t, dsn); len(runs) != 2 {
		t.Errorf("%d runs stored, want 2 (the refused runs store nothing)", len(runs))
	}
}

// TestHistoryBadInput is each wrong use of the history's flags and
// commands: a message naming what is wrong, and the exit code for it.
func TestHistoryBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := writeScript(t, historyScript)
	dsn := "sqlite:" + filepath.Join(dir, "h.db")
	makeStore(t, dsn)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown scheme", []string{"run", "--history", "foo:bar", script}, exitUsage, []string{"--history", `unknown scheme "foo"`}},
		{"label without value", []string{"run", "--history", dsn, "--label", "novalue", script}, exitUsage, []string{`--label "novalue": want key=value`}},
		{"label without history", []string{"run", "--label", "branch=main", script}, exitUsage, []string{"--label has no effect without --history"}},
		{"median of 0", []string{"run", "--history", dsn, "--baseline", "history:median:0", script}, exitUsage, []string{`--baseline "history:median:0"`, "at least 1"}},
		{"history baseline without history", []string{"run", "--baseline", "history:last", script}, exitUsage, []string{"--baseline history:last", "--history"}},
		{"baseline label without history baseline", []string{"run", "--history", dsn, "--baseline-label", "branch=main", script}, exitUsage, []string{"--baseline-label has no effect"}},
		{"no-baseline without history baseline", []string{"run", "--history", dsn, "--no-baseline", "fail", script}, exitUsage, []string{"--no-baseline has no effect"}},
		{"segment with history", []string{"run", "--history", dsn, "--segment", "0/2", "--seed", "1", script}, exitUsage, []string{"--history stores whole runs", "merge"}},
		{"list without history", []string{"history", "list"}, exitUsage, []string{"--history"}},
		{"show without history", []string{"history", "show", "last"}, exitUsage, []string{"--history"}},
		{"trend without history", []string{"history", "trend", "ttft.p99"}, exitUsage, []string{"--history"}},
		{"check without history", []string{"history", "check"}, exitUsage, []string{"--history"}},
		{"report without history", []string{"history", "report", "--html", filepath.Join(dir, "r.html")}, exitUsage, []string{"--history"}},
		{"export without history", []string{"history", "export"}, exitUsage, []string{"--history"}},
		{"import without history", []string{"history", "import", script}, exitUsage, []string{"--history"}},
		{"prune without history", []string{"history", "prune", "--keep", "2"}, exitUsage, []string{"--history"}},
		{"show 999", []string{"history", "show", "--history", dsn, "999"}, exitError, []string{"no such run 999"}},
		{"trend of an unknown metric", []string{"history", "trend", "--history", dsn, "nosuch.metric"}, exitUsage, []string{`unknown metric "nosuch.metric"`}},
		{"check alpha 2", []string{"history", "check", "--history", dsn, "--alpha", "2"}, exitUsage, []string{"--alpha 2"}},
		{"prune without keep or older", []string{"history", "prune", "--history", dsn}, exitUsage, []string{"--keep N or --older AGE"}},
		{"unknown command", []string{"history", "fly"}, exitUsage, []string{`unknown command "fly"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := histCmd(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			wantIn(t, tc.name, out, tc.want...)
		})
	}
	t.Run("not a database", func(t *testing.T) { testNotADatabase(t) })
	t.Run("postgres wrong password", func(t *testing.T) { testWrongPassword(t) })
}

// testNotADatabase is --history naming a file that is no SQLite
// database: exit 1 before a single request of the load.
func testNotADatabase(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("these are my notes, not a database\n"), 200), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	out, code := histRun(t, srv.URL, writeScript(t, longScript), "--history", "sqlite:"+path)
	if took := time.Since(began); code != exitError || took > 8*time.Second {
		t.Errorf("exit %d after %s, want 1 before the 10 s load\n%s", code, took.Round(time.Millisecond), out)
	}
	wantIn(t, "a file that is not a database", out, path, "not a SQLite database")
	if n := posts.Load(); n != 0 {
		t.Errorf("%d requests reached the server, want none", n)
	}
}

// testWrongPassword is a PostgreSQL store refusing the login: exit 1,
// saying so, without the password given.
func testWrongPassword(t *testing.T) {
	u, err := url.Parse(pgtest.Admin(t))
	if err != nil {
		t.Fatal("$LLMLOAD_POSTGRES does not parse")
	}
	admin, _ := u.User.Password()
	const wrong = "wr0ng-Pa55word-e8c1"
	u.User = url.UserPassword(u.User.Username(), wrong)
	dsn := u.String()
	for _, args := range [][]string{
		{"run", "--history", dsn, writeScript(t, longScript)},
		{"history", "list", "--history", dsn},
	} {
		began := time.Now()
		out, code := histCmd(t, args...)
		if took := time.Since(began); code != exitError || took > 8*time.Second {
			t.Errorf("%s: exit %d after %s, want 1 at once", args[0], code, took.Round(time.Millisecond))
		}
		wantIn(t, args[0], out, "refused")
		if strings.Contains(out, wrong) || admin != "" && strings.Contains(out, admin) {
			t.Errorf("%s: the output holds a password", args[0])
		}
	}
}

// lockStore holds the write lock of a SQLite store until the test ends,
// as another process's long write would. The "sqlite" driver is
// registered by engine/history, which this package imports.
func lockStore(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	})
}

// runIn runs the binary in dir and returns its output, together.
func runIn(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, append(cleanEnv(), noCI...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// TestHistoryStoreFailureKeepsResult is a run whose store refuses the
// result at its end: the run exits 1, saying why, and its result is in
// --out, or without --out in a file of its own that the message names.
func TestHistoryStoreFailureKeepsResult(t *testing.T) {
	if testing.Short() {
		t.Skip("three 1-second runs")
	}
	t.Parallel()
	url, script := gateServer(t, "100ms"), writeScript(t, historyScript)
	dir := t.TempDir()
	path := filepath.Join(dir, "h.db")
	makeStore(t, "sqlite:"+path)
	locked := "sqlite:" + path + "?timeout=1s"
	outFile := filepath.Join(dir, "r.json")
	t.Run("locked", func(t *testing.T) {
		// The lock is taken once the run has opened the store: the lints,
		// printed after that and before the load, say when.
		run := startBinary(t, "run", "--target", url+"/v1", "--model", "m", "--history", locked, "--out", outFile, script)
		run.waitFor(t, "the lints before the load", func() bool { return strings.Contains(run.stderr.String(), "lints:") })
		lockStore(t, path)
		select {
		case <-run.exited:
		case <-time.After(time.Minute):
			t.Fatalf("the run did not end within a minute\n%s", run.stderr.String())
		}
		out := run.stdout.String() + run.stderr.String()
		if run.code != exitError {
			t.Errorf("run into a store locked during the load: exit %d, want 1\n%s", run.code, out)
		}
		wantIn(t, "run into a locked store", out, "latency ms", "locked", "the result is in "+outFile, "llmload history import "+outFile)
		wantComplete(t, outFile)

		// Locked before the run starts, and without --out: the result is
		// kept in the working directory.
		work := t.TempDir()
		out, code := runIn(t, work, "run", "--quiet", "--target", url+"/v1", "--model", "m", "--history", locked, script)
		if code != exitError {
			t.Errorf("run into a locked store without --out: exit %d, want 1\n%s", code, out)
		}
		kept, _ := filepath.Glob(filepath.Join(work, "llmload-result-*.json"))
		if len(kept) != 1 {
			t.Fatalf("without --out: %d llmload-result-*.json files in the working directory, want 1\n%s", len(kept), out)
		}
		wantIn(t, "run into a locked store without --out", out, "locked", "the result was kept in "+filepath.Base(kept[0]))
		wantComplete(t, kept[0])
	})
	// The lock is gone: the kept result goes in as the message says.
	if out, code := histCmd(t, "history", "import", "--history", "sqlite:"+path, outFile); code != exitOK {
		t.Errorf("history import of the kept result: exit %d\n%s", code, out)
	}
	t.Run("read-only", func(t *testing.T) {
		roOut := filepath.Join(dir, "ro.json")
		out, code := histRun(t, url, script, "--history", "sqlite:"+path+"?mode=ro", "--out", roOut)
		if code != exitError {
			t.Errorf("run into a read-only store: exit %d, want 1\n%s", code, out)
		}
		wantIn(t, "run into a read-only store", out, "read-only", "the result is in "+roOut)
		wantComplete(t, roOut)
		if runs := listRuns(t, "sqlite:"+path); len(runs) != 1 {
			t.Errorf("the store holds %d runs, want the 1 imported", len(runs))
		}
	})
}

// runOut runs script n times at once against url, each writing its
// result to a file of its own in dir; it returns the files.
func runOut(t *testing.T, url, script, dir, name string, n int) []string {
	t.Helper()
	files := make([]string, n)
	var wg sync.WaitGroup
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, code := histRun(t, url, script, "--out", files[i]); code != exitOK {
				t.Errorf("run %s: exit %d\n%s", files[i], code, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return files
}

// firstStarted is the file of the result that started first.
func firstStarted(t *testing.T, files []string) string {
	t.Helper()
	first, start := "", time.Time{}
	for _, f := range files {
		if s := wantComplete(t, f).Run.Start; first == "" || s.Before(start) {
			first, start = f, s
		}
	}
	return first
}

var importedRe = regexp.MustCompile(`(?m)^(.+): stored as run (\d+) \((\w+)\)$`)

// importFiles stores files with history import and returns each file's
// run id.
func importFiles(t *testing.T, dsn string, files ...string) map[string]int64 {
	t.Helper()
	out, code := histCmd(t, append([]string{"history", "import", "--history", dsn, "--label", "branch=main"}, files...)...)
	if code != exitOK {
		t.Fatalf("history import: exit %d\n%s", code, out)
	}
	ids := map[string]int64{}
	for _, m := range importedRe.FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseInt(m[2], 10, 64)
		ids[m[1]] = id
		if m[3] != "passed" {
			t.Errorf("%s imported as %s, want passed", m[1], m[3])
		}
	}
	if len(ids) != len(files) {
		t.Fatalf("history import: %d files stored, want %d\n%s", len(ids), len(files), out)
	}
	return ids
}

// TestHistoryCheckAndReport backfills a history with history import, as
// CI would: eight runs of a 100 ms server, then five of a 130 ms one.
// history check names the first slow run, and the HTML report marks
// the shift; a history of the fast runs alone has no shift.
//
// Eight and five, because the permutation test cannot do better than the
// share of arrangements that split the runs as cleanly as the history
// does: 2 of C(13,5), p ≈ 0.0016. Six and four give 2 of C(10,4), p ≈
// 0.0095, a coin toss at alpha 0.01.
func TestHistoryCheckAndReport(t *testing.T) {
	if testing.Short() {
		t.Skip("thirteen 1-second runs")
	}
	t.Parallel()
	fast, slow := gateServer(t, "100ms"), gateServer(t, "130ms")
	script, dir := writeScript(t, historyScript), t.TempDir()
	before := runOut(t, fast, script, dir, "fast", 8)
	after := runOut(t, slow, script, dir, "slow", 5)

	// The slow runs go in first: check orders runs by their start, not
	// by their ids.
	dsn := "sqlite:" + filepath.Join(dir, "h.db")
	ids := importFiles(t, dsn, append(slices.Clone(after), before...)...)
	shifted := ids[firstStarted(t, after)]

	out, code := histCmd(t, "history", "check", "--history", dsn, "--label", "branch=main", "--metrics", "ttft.p50")
	if code != exitThreshold {
		t.Errorf("history check of 100 ms then 130 ms runs: exit %d, want 99\n%s", code, out)
	}
	wantIn(t, "history check", out, fmt.Sprintf("since run %d ", shifted), fmt.Sprintf("from run %d", shifted), "REGRESSION")

	html := filepath.Join(dir, "trend.html")
	if out, code := histCmd(t, "history", "report", "--history", dsn, "--metrics", "ttft.p50,e2e.p50", "--html", html); code != exitOK {
		t.Fatalf("history report: exit %d\n%s", code, out)
	}
	page := readFile(t, html)
	for _, w := range []string{"<h2>ttft.p50 · default/c8</h2>", "<h2>e2e.p50 · default/c8</h2>", `class="mark change worse`,
		"Shifts for the worse", fmt.Sprintf(" at run %d", shifted)} {
		if !strings.Contains(page, w) {
			t.Errorf("the HTML report lacks %q", w)
		}
	}

	calm := "sqlite:" + filepath.Join(dir, "calm.db")
	importFiles(t, calm, before...)
	out, code = histCmd(t, "history", "check", "--history", calm, "--metrics", "ttft.p50")
	if code != exitOK || !strings.Contains(out, "no sustained shift") {
		t.Errorf("history check of 100 ms runs alone: exit %d, want 0 and no sustained shift\n%s", code, out)
	}
	if out, code := histCmd(t, "history", "report", "--history", calm, "--metrics", "ttft.p50", "--html", html); code != exitOK {
		t.Fatalf("history report of the calm history: exit %d\n%s", code, out)
	}
	if page := readFile(t, html); strings.Contains(page, `class="mark change`) || !strings.Contains(page, "ttft.p50") {
		t.Errorf("the calm history's report: want a ttft.p50 chart without a change mark")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestHistoryPostgres is the store path on PostgreSQL: runs stored,
// listed, and gated with history:last, and no command's output ever
// holds the password.
func TestHistoryPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("four 1-second runs")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal("the test database's DSN does not parse")
	}
	password, _ := u.User.Password()
	if password == "" {
		t.Fatal("$LLMLOAD_POSTGRES has no password: the secrets check would check nothing")
	}
	secret := func(what, out string) {
		t.Helper()
		if strings.Contains(out, password) {
			t.Errorf("%s: the output holds the password:\n%s", what, strings.ReplaceAll(out, password, "PASSWORD"))
		}
	}
	fast, slow := gateServer(t, "100ms"), gateServer(t, "150ms")
	script := writeScript(t, historyScript)
	store := []string{"--history", dsn, "--label", "branch=main"}
	var ids []int64
	for range 2 {
		out, code := histRun(t, fast, script, store...)
		secret("run", out)
		if code != exitOK {
			t.Fatalf("run --history postgres: exit %d\n%s", code, out)
		}
		ids = append(ids, storedID(t, out))
	}
	out, code := histCmd(t, "history", "list", "--history", dsn)
	secret("history list", out)
	if code != exitOK || strings.Count(out, "branch=main") != 2 {
		t.Errorf("history list: exit %d, want 2 runs labelled branch=main\n%s", code, out)
	}
	gate := append([]string{"--baseline", "history:last", "--metrics", "ttft.p50"}, store...)
	lastOf := fmt.Sprintf("history:last (run %d of postgres://", ids[1])
	out, code = histRun(t, slow, script, gate...)
	secret("run --baseline history:last", out)
	if code != exitThreshold || !regressedOn(out, "ttft.p50") || !strings.Contains(out, lastOf) {
		t.Errorf("history:last gate of a 150 ms run: exit %d, want 99 with a ttft.p50 REGRESSION against %s…\n%s", code, lastOf, out)
	}
	out, code = histRun(t, fast, script, gate...)
	secret("run --baseline history:last", out)
	if code != exitOK || !strings.Contains(out, lastOf) {
		t.Errorf("history:last gate of a 100 ms run: exit %d, want 0 against %s…\n%s", code, lastOf, out)
	}
	for _, args := range [][]string{
		{"show", "last"}, {"trend", "ttft.p50"}, {"export"}, {"check"}, {"show", "999"},
	} {
		out, _ := histCmd(t, append([]string{"history", args[0], "--history", dsn}, args[1:]...)...)
		secret("history "+args[0], out)
	}
	verdicts := map[string]int{}
	for _, r := range listRuns(t, dsn) {
		verdicts[r.Verdict]++
	}
	if verdicts["passed"] != 3 || verdicts["gate_failed"] != 1 {
		t.Errorf("verdicts %v, want 3 passed and 1 gate_failed", verdicts)
	}
}

// TestHistoryMerge is merge --history: a plan's two segments stored as
// one run, by merge.
func TestHistoryMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("three 1-second runs")
	}
	t.Parallel()
	url, script, dir := gateServer(t, "100ms"), writeScript(t, historyScript), t.TempDir()
	segs := []string{filepath.Join(dir, "seg0.json"), filepath.Join(dir, "seg1.json")}
	var wg sync.WaitGroup
	for i, seg := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, code := histRun(t, url, script, "--segment", fmt.Sprintf("%d/2", i), "--seed", "7", "--out", seg); code != exitOK {
				t.Errorf("segment %d: exit %d\n%s", i, code, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	dsn := "sqlite:" + filepath.Join(dir, "h.db")
	out, code := histCmd(t, "history", "import", "--history", dsn, segs[0])
	if code != exitError || !strings.Contains(out, "merge the segments") {
		t.Errorf("history import of a segment: exit %d, want 1 saying to merge\n%s", code, out)
	}
	// A GitHub Actions job's variables label the run; --label wins.
	ci := []string{"GITHUB_ACTIONS=true", "GITHUB_SHA=9f2c1ab0d3e4", "GITHUB_HEAD_REF=feature", "GITHUB_RUN_ID=42",
		"GITHUB_JOB=", "GITHUB_REPOSITORY="}
	stdout, stderr, code := runBinary(t, ci, append([]string{"merge", "--quiet", "--history", dsn, "--label", "branch=main"}, segs...)...)
	if code != exitOK {
		t.Fatalf("merge --history: exit %d\n%s%s", code, stdout, stderr)
	}
	id := storedID(t, stdout+stderr)
	runs := listRuns(t, dsn)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want the 1 merged", len(runs))
	}
	if r := runs[0]; r.ID != id || r.Source != "merge" || r.Segments != 2 || !r.Complete || r.Seed != 7 {
		t.Errorf("the merged run: %+v; want run %d, source merge, 2 segments, complete, seed 7", r, id)
	}
	wantLabels := map[string]string{"branch": "main", "ci": "github", "commit": "9f2c1ab0d3e4", "ci_run": "42"}
	if got := runs[0].Labels; !maps.Equal(got, wantLabels) {
		t.Errorf("the merged run's labels: %v, want %v", got, wantLabels)
	}

	// A whole run of the plan, stored by run and again by import, is the
	// merged run's plan: the gate and the trends line them up.
	whole := filepath.Join(dir, "whole.json")
	mustRun(t, url, script, "--history", dsn, "--out", whole)
	if out, code := histCmd(t, "history", "import", "--history", dsn, whole); code != exitOK {
		t.Fatalf("history import: exit %d\n%s", code, out)
	}
	runs = listRuns(t, dsn)
	for _, r := range runs {
		if r.Plan != runs[0].Plan {
			t.Errorf("run %d (%s) has plan %s, run %d (%s) plan %s: want one plan", r.ID, r.Source, r.Plan, runs[0].ID, runs[0].Source, runs[0].Plan)
		}
	}
}
