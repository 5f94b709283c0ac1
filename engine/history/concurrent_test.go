package history

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
)

// Several CI jobs on one machine, or on many against one server, store
// their runs at once. These tests start real processes (this test binary
// again, as a writer) since SQLite's locks are per process.

// writerEnv makes the test binary a writer: "NAME|N|UNIXNANO|DSN|DSN…"
// waits until UNIXNANO, so that the writers start together, then opens
// each DSN in turn and saves N runs into it, labelled writer=NAME and
// seq=0..N-1.
const writerEnv = "LLMLOAD_HISTORY_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		if err := runWriter(spec); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runWriter(spec string) error {
	f := strings.Split(spec, "|")
	if len(f) < 4 {
		return fmt.Errorf("%s: want NAME|N|UNIXNANO|DSN…", writerEnv)
	}
	n, err1 := strconv.Atoi(f[1])
	at, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%s: bad N or UNIXNANO", writerEnv)
	}
	r := makeResult(runSpec{n: 5})
	time.Sleep(time.Until(time.Unix(0, at)))
	for _, dsn := range f[3:] {
		if err := write(dsn, f[0], n, r); err != nil {
			return err
		}
	}
	return nil
}

func write(dsn, name string, n int, r *result.Result) error {
	ctx := context.Background()
	s, err := OpenDSN(ctx, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		labels := map[string]string{"writer": name, "seq": strconv.Itoa(i)}
		if _, err := s.Save(ctx, Entry{Result: r, Labels: labels, Verdict: VerdictPassed, Source: "run"}); err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
	}
	return nil
}

// runWriters starts one writer process per name, each saving n runs into
// each store of dsns in turn, and waits for them all.
func runWriters(t *testing.T, dsns []string, n int, names ...string) {
	t.Helper()
	// Far enough ahead for every process to have started, under -race.
	at := time.Now().Add(700 * time.Millisecond).UnixNano()
	cmds := make([]*exec.Cmd, len(names))
	outs := make([]*strings.Builder, len(names))
	for i, name := range names {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d|%s", writerEnv, name, n, at, strings.Join(dsns, "|")))
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %s: %v\n%s", names[i], err, outs[i])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// dsn is src as --history takes it.
func dsn(src Source) string {
	if src.Dialect == SQLite {
		return "sqlite:" + src.Path
	}
	return src.URL
}

// TestConcurrentWriters: two processes each storing 50 runs into one new
// store at once: the store is migrated once, and holds all 100 runs
// under distinct ids.
func TestConcurrentWriters(t *testing.T) {
	for name, open := range map[string]func(testing.TB) Source{"sqlite": sqliteSource, "postgres": postgresSource} {
		t.Run(name, func(t *testing.T) {
			src := open(t)
			const n = 50
			runWriters(t, []string{dsn(src)}, n, "a", "b")
			s := openStore(t, src)
			checkMigratedOnce(t, s)
			runs, err := s.List(context.Background(), Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 2*n {
				t.Errorf("%d runs, want %d", len(runs), 2*n)
			}
			ids := map[int64]bool{}
			seqs := map[string]map[string]bool{"a": {}, "b": {}}
			for _, r := range runs {
				if ids[r.ID] {
					t.Errorf("id %d twice", r.ID)
				}
				ids[r.ID] = true
				if seqs[r.Labels["writer"]] == nil {
					t.Fatalf("run %d has labels %v", r.ID, r.Labels)
				}
				seqs[r.Labels["writer"]][r.Labels["seq"]] = true
			}
			for w, got := range seqs {
				for i := range n {
					if !got[strconv.Itoa(i)] {
						t.Errorf("writer %s's run seq=%d is missing", w, i)
					}
				}
			}
		})
	}
}

// TestConcurrentMigration: processes that open a new store at the same
// moment all succeed, and the schema is made once. The race is short, so
// the writers meet over several new stores in turn.
func TestConcurrentMigration(t *testing.T) {
	for name, open := range map[string]func(testing.TB) Source{"sqlite": sqliteSource, "postgres": postgresSource} {
		t.Run(name, func(t *testing.T) {
			var srcs []Source
			var dsns []string
			for range 6 {
				srcs = append(srcs, open(t))
				dsns = append(dsns, dsn(srcs[len(srcs)-1]))
			}
			runWriters(t, dsns, 1, "a", "b", "c")
			for _, src := range srcs {
				s := openStore(t, src)
				checkMigratedOnce(t, s)
				if ids := listIDs(t, s, Filter{}); len(ids) != 3 {
					t.Errorf("%s holds %d runs, want 3", src, len(ids))
				}
			}
		})
	}
}

// checkMigratedOnce: the store is at the current version, with one
// version row (a second migration of version 1 would add another, or
// fail on its tables).
func checkMigratedOnce(t *testing.T, s *Store) {
	t.Helper()
	var rows, version int
	if err := s.db.QueryRow("SELECT count(*), max(version) FROM llmload_schema").Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || version != SchemaVersion {
		t.Errorf("llmload_schema has %d rows, version %d; want 1 row, version %d", rows, version, SchemaVersion)
	}
}

// TestSQLiteOpenTogether: connections that open one new file at the same
// moment, in one process here, all succeed. SQLite answers all but one
// of their first PRAGMA journal_mode=WAL with SQLITE_BUSY without
// waiting on busy_timeout; Open must wait and try again. The race is
// short: without -race, about one round in twenty lost it before the
// fix, so the test runs forty.
func TestSQLiteOpenTogether(t *testing.T) {
	rounds := 40
	if underRace {
		rounds = 5 // the detector's slowness hides the race anyway
	}
	for range rounds {
		src := sqliteSource(t)
		start := make(chan struct{})
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				<-start
				s, err := Open(context.Background(), src)
				if err == nil {
					s.Close()
				}
				errs <- err
			}()
		}
		close(start)
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}
