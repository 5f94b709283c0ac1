package history

import (
	"bytes"
	"context"
	"database/sql"
	"testing"

	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
)

// A store made by the first schema, with runs in it, must open in this
// llmload: migrated to the current schema, its runs readable and their
// new columns filled from their result JSON.

func TestMigrateFromV1SQLite(t *testing.T) {
	src := sqliteSource(t)
	testMigrateFromV1(t, src)

	// The migrated store opens again as it is, even read-only.
	src.ReadOnly = true
	if v := storeVersion(t, openStore(t, src)); v != SchemaVersion {
		t.Errorf("mode=ro reopened at version %d, want %d", v, SchemaVersion)
	}
}

func TestMigrateFromV1Postgres(t *testing.T) { testMigrateFromV1(t, postgresSource(t)) }

// TestReadOnlyCannotMigrate: mode=ro never writes, so a store of an older
// schema is an error that says how to upgrade it.
func TestReadOnlyCannotMigrate(t *testing.T) {
	src := sqliteSource(t)
	openAt(t, src, 1).Close()
	src.ReadOnly = true
	_, err := Open(context.Background(), src)
	checkMessage(t, err, src, "mode=ro cannot upgrade it")
}

func testMigrateFromV1(t *testing.T, src Source) {
	ctx := context.Background()
	old := openAt(t, src, 1)
	if v := storeVersion(t, old); v != 1 {
		t.Fatalf("migrateTo(1) left version %d", v)
	}
	if _, err := old.db.Exec("SELECT ttft_p90_ms FROM llmload_run_stages"); err == nil {
		t.Fatal("a version 1 store has ttft_p90_ms already: the test would prove nothing")
	}
	r1 := makeResult(runSpec{n: 30, seed: 1, start: t0})
	r2 := makeResult(runSpec{n: 30, seed: 2, scale: 2, start: t0.Add(1e9)})
	runs := []struct {
		r     *result.Result
		label string
	}{{r1, "a"}, {r2, "b"}}
	var ids []int64
	for _, r := range runs {
		id, err := old.saveAt(ctx, Entry{Result: r.r, Labels: map[string]string{"n": r.label}, Verdict: VerdictPassed, Source: "run"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	old.Close()

	s := openStore(t, src)
	if v := storeVersion(t, s); v != SchemaVersion {
		t.Fatalf("Open left version %d, want %d", v, SchemaVersion)
	}
	for i, r := range runs {
		run, got, err := s.Get(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if run.Labels["n"] != r.label || !bytes.Equal(resultJSON(t, got), resultJSON(t, r.r)) {
			t.Errorf("run %d after the migration: labels %v, or its result differs", ids[i], run.Labels)
		}
		checkStageRows(t, s, ids[i], r.r)
	}
	r3 := makeResult(runSpec{n: 30, seed: 3, start: t0.Add(2e9)})
	checkStageRows(t, s, save(t, s, r3, VerdictPassed, nil), r3)
	if got := listIDs(t, s, Filter{Labels: map[string]string{"n": "b"}}); len(got) != 1 || got[0] != ids[1] {
		t.Errorf("label filter after the migration: %v, want [%d]", got, ids[1])
	}
}

// openAt opens src as Open does, but migrates it only to version v.
func openAt(t *testing.T, src Source, v int) *Store {
	t.Helper()
	s := &Store{src: src, red: redact.NewFor(nil, src.URL)}
	name, dsn := src.driver()
	db, err := sql.Open(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.db = db
	t.Cleanup(func() { db.Close() })
	if err := s.migrateTo(context.Background(), v); err != nil {
		t.Fatalf("migrateTo(%d): %v", v, err)
	}
	return s
}

func storeVersion(t *testing.T, s *Store) int {
	t.Helper()
	v, err := s.version(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
