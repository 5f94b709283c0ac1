package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/llmload/llmload/engine/redact"
)

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect to %s: %s", redact.URL(dsn), scrub(err.Error(), dsn))
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	var n int
	err := connect(t, Admin(t)).QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestDSNIsEmptyAndUsable(t *testing.T) {
	dsn := DSN(t)
	conn := connect(t, dsn)
	ctx := context.Background()
	var db, user string
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_user").Scan(&db, &user); err != nil {
		t.Fatal(err)
	}
	if got, want := db, dbName(t, dsn); got != want {
		t.Errorf("current_database() = %q, want %q", got, want)
	}
	if !strings.HasPrefix(db, "llmload_test_") {
		t.Errorf("database %q, want the prefix llmload_test_", db)
	}
	var tables int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`).Scan(&tables)
	if err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("a fresh database has %d tables, want 0", tables)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE runs (id bigint PRIMARY KEY, name text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO runs VALUES (1, 'ünïcode ✓')"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := conn.QueryRow(ctx, "SELECT name FROM runs WHERE id = 1").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if got, want := name, "ünïcode ✓"; got != want {
		t.Errorf("read back %q, want %q", got, want)
	}
}

func TestDSNDroppedWhenTheTestEnds(t *testing.T) {
	Admin(t) // skips here rather than in the subtest
	var name string
	var open *pgx.Conn // still open when the test's cleanups run
	t.Run("test", func(t *testing.T) {
		dsn := DSN(t)
		name = dbName(t, dsn)
		if !databaseExists(t, name) {
			t.Fatalf("database %s is not in pg_database", name)
		}
		var err error
		if open, err = pgx.Connect(context.Background(), dsn); err != nil {
			t.Fatal(scrub(err.Error(), dsn))
		}
	})
	if open != nil {
		defer open.Close(context.Background())
	}
	if name == "" {
		t.FailNow()
	}
	if databaseExists(t, name) {
		t.Errorf("database %s is still in pg_database after its test ended", name)
	}
}

func TestDSNsDiffer(t *testing.T) {
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two calls returned one DSN: %s", redact.URL(a))
	}
	if dbName(t, a) == dbName(t, b) {
		t.Fatalf("two calls returned one database: %s", dbName(t, a))
	}
	if _, err := connect(t, a).Exec(context.Background(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	err := connect(t, b).QueryRow(context.Background(), "SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a table created through one DSN shows through the other")
	}
}

// TestWrongPasswordRefused checks what a "PostgreSQL refuses the login"
// test of the store relies on: the server asks for the password and
// checks it, even on loopback.
func TestWrongPasswordRefused(t *testing.T) {
	admin := Admin(t)
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal("LLMLOAD_POSTGRES does not parse")
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	_, err = pgx.Connect(context.Background(), u.String())
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("connect with a wrong password: %v, want the server's refusal", scrub(fmt.Sprint(err), admin))
	}
	if got, want := pgErr.Code, "28P01"; got != want { // invalid_password
		t.Errorf("SQLSTATE %s (%s), want %s", got, pgErr.Message, want)
	}
}

// fakeTB records Skip and Fatal instead of ending the test, so that the
// rule for a missing server can be checked.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Skip(args ...any)  { f.skipped = fmt.Sprint(args...) }
func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...) }

func TestNoServer(t *testing.T) {
	tests := map[string]struct{ ci, wantSkip, wantFail bool }{
		"skipped on a workstation": {ci: false, wantSkip: true},
		"fails under CI=true":      {ci: true, wantFail: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv(Env, "")
			t.Setenv("CI", map[bool]string{true: "true", false: ""}[tt.ci])
			for fn, get := range map[string]func(testing.TB) string{"Admin": Admin, "DSN": DSN} {
				f := &fakeTB{TB: t}
				if got := get(f); got != "" {
					t.Errorf("%s = %q, want \"\"", fn, got)
				}
				if got := f.skipped != ""; got != tt.wantSkip {
					t.Errorf("%s skipped: %v (%q), want %v", fn, got, f.skipped, tt.wantSkip)
				}
				if got := f.failed != ""; got != tt.wantFail {
					t.Errorf("%s failed: %v (%q), want %v", fn, got, f.failed, tt.wantFail)
				}
				if msg := f.skipped + f.failed; !strings.Contains(msg, ".ci/postgres.sh start") {
					t.Errorf("%s says %q, want how to start a server", fn, msg)
				}
			}
		})
	}
}

func TestScrub(t *testing.T) {
	dsn := "postgres://llmload:s3cr%2Ft@127.0.0.1:5432/llmload?sslmode=disable"
	for _, msg := range []string{
		"failed: password s3cr/t was wrong",
		"failed: " + dsn,
	} {
		if got := scrub(msg, dsn); strings.Contains(got, "s3cr") {
			t.Errorf("scrub(%q) = %q, still holds the password", msg, got)
		}
	}
	if got, want := scrub("no secret here", dsn), "no secret here"; got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}
