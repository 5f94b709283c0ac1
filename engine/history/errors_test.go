package history

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/llmload/llmload/engine/pgtest"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn  string
		want Source
		err  string // a part of the error; "" for none
	}{
		{dsn: "sqlite:history.db", want: Source{Dialect: SQLite, Path: "history.db"}},
		{dsn: " SQLite3:history.db ", want: Source{Dialect: SQLite, Path: "history.db"}},
		{dsn: "sqlite:///var/lib/h.db", want: Source{Dialect: SQLite, Path: "/var/lib/h.db"}},
		{dsn: "sqlite:h.db?mode=ro&timeout=5s", want: Source{Dialect: SQLite, Path: "h.db", ReadOnly: true, BusyTimeout: 5 * time.Second}},
		{dsn: "sqlite:h.db?mode=rw", want: Source{Dialect: SQLite, Path: "h.db"}},
		{dsn: "postgres://u:pw@db:5432/llmload?sslmode=disable", want: Source{Dialect: Postgres, URL: "postgres://u:pw@db:5432/llmload?sslmode=disable"}},
		{dsn: "postgresql://u@db/llmload", want: Source{Dialect: Postgres, URL: "postgresql://u@db/llmload"}},

		{dsn: "", err: "want sqlite:FILE or postgres://"},
		{dsn: "history.db", err: "want sqlite:FILE or postgres://"},
		{dsn: "mysql://u:s3cret@db/llmload", err: `unknown scheme "mysql"`},
		{dsn: "sqlite:", err: "name the database file"},
		{dsn: "sqlite://", err: "name the database file"},
		{dsn: "sqlite:?mode=ro", err: "name the database file"},
		{dsn: "sqlite::memory:", err: "in-memory database keeps nothing"},
		{dsn: "sqlite:h.db?mode=rx", err: `mode="rx": want ro or rw`},
		{dsn: "sqlite:h.db?timeout=soon", err: `timeout="soon"`},
		{dsn: "sqlite:h.db?timeout=-1s", err: `timeout="-1s"`},
		{dsn: "sqlite:h.db?cache=shared", err: `unknown option "cache"`},
		{dsn: "sqlite:h.db?mode=%zz", err: "options"},
		{dsn: "postgres://u:s3cret@db.example/", err: "name the database, e.g. postgres://USER@db.example/llmload"},
		{dsn: "postgres://u:s3cret@db.example", err: "name the database"},
		{dsn: "postgres://db.example/?password=s3cret", err: "name the database"},
		{dsn: "postgres:///llmload", err: "want postgres://USER:PASSWORD@HOST:PORT/DB"},
		{dsn: "postgres://u:s3 cret@db.example/llmload%zz", err: "want postgres://USER:PASSWORD@HOST:PORT/DB"},
	}
	for _, tc := range tests {
		t.Run(tc.dsn, func(t *testing.T) {
			got, err := ParseDSN(tc.dsn)
			if tc.err == "" {
				if err != nil || !sourceEqual(got, tc.want) {
					t.Fatalf("ParseDSN = %+v, %v; want %+v", got, err, tc.want)
				}
				if pw := password(tc.dsn); pw != "" && strings.Contains(got.String(), pw) {
					t.Errorf("String() = %q holds the password", got)
				}
				return
			}
			if !errors.Is(err, ErrDSN) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ParseDSN error %v, want ErrDSN saying %q", err, tc.err)
			}
			if strings.Contains(err.Error(), "s3") {
				t.Errorf("error %q holds the password", err)
			}
		})
	}
}

func sourceEqual(a, b Source) bool {
	return a.Dialect == b.Dialect && a.Path == b.Path && a.URL == b.URL && a.ReadOnly == b.ReadOnly &&
		a.BusyTimeout == b.BusyTimeout && len(a.Pragmas) == 0 && len(b.Pragmas) == 0
}

// password is dsn's password, "" without one.
func password(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// TestSQLiteErrors: each way a SQLite store cannot be used is a message
// that names the file and says what is wrong.
func TestSQLiteErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("not a database", func(t *testing.T) {
		src := sqliteSource(t)
		junk := make([]byte, 8192)
		rand.Read(junk)
		if err := os.WriteFile(src.Path, junk, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, src)
		if !errors.Is(err, ErrNotStore) {
			t.Fatalf("Open of random bytes: %v, want ErrNotStore", err)
		}
		checkMessage(t, err, src, "not a SQLite database")
	})
	t.Run("another program's database", func(t *testing.T) {
		src := sqliteSource(t)
		execSQLite(t, src.Path, "CREATE TABLE llmload_runs (x INTEGER)")
		_, err := Open(ctx, src)
		if !errors.Is(err, ErrNotStore) {
			t.Fatalf("Open of a database with llmload_runs but no llmload_schema: %v, want ErrNotStore", err)
		}
		checkMessage(t, err, src, "no llmload_schema")
	})
	t.Run("directory", func(t *testing.T) {
		src := Source{Dialect: SQLite, Path: t.TempDir()}
		_, err := Open(ctx, src)
		checkMessage(t, err, src, "is a directory")
	})
	t.Run("no such directory", func(t *testing.T) {
		src := Source{Dialect: SQLite, Path: filepath.Join(t.TempDir(), "missing", "h.db")}
		_, err := Open(ctx, src)
		checkMessage(t, err, src, "cannot open the file")
	})
	t.Run("read-only missing file", func(t *testing.T) {
		src := sqliteSource(t)
		src.ReadOnly = true
		_, err := Open(ctx, src)
		checkMessage(t, err, src, "no such file")
		if _, err := os.Stat(src.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mode=ro created %s (%v)", src.Path, err)
		}
	})
	t.Run("read-only store", func(t *testing.T) {
		src := sqliteSource(t)
		rw := openStore(t, src)
		save(t, rw, makeResult(runSpec{n: 5}), VerdictPassed, nil)
		rw.Close()
		src.ReadOnly = true
		ro := openStore(t, src)
		if ids := listIDs(t, ro, Filter{}); len(ids) != 1 {
			t.Errorf("mode=ro lists %v, want the one run", ids)
		}
		_, err := ro.Save(ctx, Entry{Result: makeResult(runSpec{n: 5}), Verdict: VerdictPassed})
		checkMessage(t, err, src, "the database is read-only")
	})
	t.Run("full", testSQLiteFull)
	t.Run("locked", testSQLiteLocked)
}

// execSQLite runs statements on path outside the store.
func execSQLite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// testSQLiteFull: a disk that fills as a run is stored gives "full", and
// no part of the run.
func testSQLiteFull(t *testing.T) {
	ctx := context.Background()
	src := sqliteSource(t)
	s := openStore(t, src)
	var pages int
	if err := s.db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Not a page more than the empty schema holds: the result JSON needs
	// several.
	src.Pragmas = []string{fmt.Sprintf("max_page_count(%d)", pages)}
	s = openStore(t, src)
	_, err := s.Save(ctx, Entry{Result: makeResult(runSpec{n: 50}), Verdict: VerdictPassed})
	checkMessage(t, err, src, "store the run: the database or disk is full")
	if ids := listIDs(t, s, Filter{}); len(ids) != 0 {
		t.Errorf("after a failed Save the store lists %v, want nothing", ids)
	}
}

// testSQLiteLocked: a writer that holds the file longer than the busy
// timeout makes Save fail after that timeout, saying "locked"; once it
// lets go, Save succeeds.
func testSQLiteLocked(t *testing.T) {
	ctx := context.Background()
	src := sqliteSource(t)
	openStore(t, src).Close()
	other, err := sql.Open("sqlite", "file:"+src.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	src.BusyTimeout = 200 * time.Millisecond
	s := openStore(t, src)
	r := makeResult(runSpec{n: 5})
	start := time.Now()
	_, err = s.Save(ctx, Entry{Result: r, Verdict: VerdictPassed})
	waited := time.Since(start)
	checkMessage(t, err, src, "locked by another process for 200ms")
	if waited < 150*time.Millisecond || waited > 10*time.Second {
		t.Errorf("Save gave up after %v, want about the busy timeout of 200ms", waited)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, Entry{Result: r, Verdict: VerdictPassed}); err != nil {
		t.Errorf("Save once the lock is gone: %v", err)
	}
}

// TestPostgresErrors: a refused login and a read-only database are
// messages that name the store and never its password.
func TestPostgresErrors(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Admin(t)
	t.Run("wrong password", func(t *testing.T) {
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal("the admin DSN does not parse")
		}
		wrong := "wrong-" + rand.Text()
		u.User = url.UserPassword(u.User.Username(), wrong)
		src, err := ParseDSN(u.String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(ctx, src)
		checkMessage(t, err, src, "refused the login")
		for _, pw := range []string{wrong, password(admin)} {
			if pw != "" && err != nil && strings.Contains(err.Error(), pw) {
				t.Errorf("error %q holds a password", err)
			}
		}
	})
	t.Run("no such database", func(t *testing.T) {
		u, _ := url.Parse(admin)
		u.Path = "/llmload_no_such_" + strings.ToLower(rand.Text())
		src, err := ParseDSN(u.String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(ctx, src)
		checkMessage(t, err, src, "no such database")
	})
	t.Run("read-only store", func(t *testing.T) {
		src := postgresSource(t)
		s := openStore(t, src)
		save(t, s, makeResult(runSpec{n: 5}), VerdictPassed, nil)
		s.Close()
		setReadOnly(t, src)
		s = openStore(t, src)
		if ids := listIDs(t, s, Filter{}); len(ids) != 1 {
			t.Errorf("a read-only login lists %v, want the one run", ids)
		}
		_, err := s.Save(ctx, Entry{Result: makeResult(runSpec{n: 5}), Verdict: VerdictPassed})
		checkMessage(t, err, src, "store the run: the database is read-only for this login")
	})
	t.Run("read-only new database", func(t *testing.T) {
		src := postgresSource(t)
		setReadOnly(t, src)
		_, err := Open(ctx, src)
		checkMessage(t, err, src, "the database is read-only for this login")
	})
}

// TestPostgresUnreachable: a server that does not answer is a message
// naming the store, without its password.
func TestPostgresUnreachable(t *testing.T) {
	src, err := ParseDSN("postgres://u:s3cretpw@127.0.0.1:1/llmload?connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), src)
	checkMessage(t, err, src, "connect: ")
	if err != nil && strings.Contains(err.Error(), "s3cretpw") {
		t.Errorf("error %q holds the password", err)
	}
}

// setReadOnly makes every new session of src's database read-only, as a
// DBA does for a reporting login.
func setReadOnly(t *testing.T, src Source) {
	t.Helper()
	u, err := url.Parse(src.URL)
	if err != nil {
		t.Fatal(err)
	}
	name := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	db, err := sql.Open("pgx", pgtest.Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER DATABASE " + name + " SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
}

// TestSQLitePathIsLiteral: the store is the file the user named, even
// when its name holds characters a file: URI gives a meaning to.
func TestSQLitePathIsLiteral(t *testing.T) {
	// The subtests' names stay plain: t.TempDir's name is made of them.
	for test, name := range map[string]string{"hash": "run#2.db", "escape": "h%41.db", "percent": "100%.db",
		"question mark": "a?b.db", "space": "with space/h.db", "not ASCII": "ünï.db"} {
		t.Run(test, func(t *testing.T) {
			dir := t.TempDir()
			src := Source{Dialect: SQLite, Path: filepath.Join(dir, name)}
			if err := os.MkdirAll(filepath.Dir(src.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, src)
			save(t, s, makeResult(runSpec{n: 2}), VerdictPassed, nil)
			s.Close()
			var files []string
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return err
			})
			if len(files) != 1 || files[0] != src.Path {
				t.Errorf("the store went to %q, want %q", files, src.Path)
			}
			if ids := listIDs(t, openStore(t, src), Filter{}); len(ids) != 1 {
				t.Errorf("reopened, the store lists %v, want one run", ids)
			}
		})
	}
}
