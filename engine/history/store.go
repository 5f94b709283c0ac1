package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/llmload/llmload/engine/redact"
)

// Store is an open history database.
type Store struct {
	db  *sql.DB
	src Source
	red *redact.Redactor
}

// Open connects to the store src names and brings its schema up to this
// llmload's version (see migrations). A new SQLite file is created; an
// existing file that is not a SQLite database, a store of a newer schema,
// a refused login and an unreachable server are errors naming the store.
func Open(ctx context.Context, src Source) (*Store, error) {
	s := &Store{src: src, red: redact.NewFor(nil, src.URL)}
	if src.Dialect == SQLite {
		if err := checkSQLiteFile(src); err != nil {
			return nil, err
		}
	}
	name, dsn := src.driver()
	db, err := sql.Open(name, dsn)
	if err != nil {
		return nil, s.wrap("open", err)
	}
	s.db = db
	if err := s.ping(ctx); err != nil {
		db.Close()
		return nil, s.wrap("connect", err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// ping connects. Processes that open one new SQLite file at once all
// set journal_mode=WAL on their first connection, and SQLite answers
// SQLITE_BUSY at once, without waiting on busy_timeout, to all but the
// one that converts the file (it never waits on a lock it could deadlock
// on): those try again, for as long as the busy timeout.
func (s *Store) ping(ctx context.Context) error {
	timeout := s.src.BusyTimeout
	if timeout == 0 {
		timeout = DefaultBusyTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		err := s.db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// OpenDSN parses dsn and opens its store.
func OpenDSN(ctx context.Context, dsn string) (*Store, error) {
	src, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return Open(ctx, src)
}

// Close closes the store's connections.
func (s *Store) Close() error { return s.db.Close() }

// Source is what the store was opened from.
func (s *Store) Source() Source { return s.src }

// checkSQLiteFile refuses a path SQLite would misread: a directory, or a
// read-only store that does not exist yet (nothing to read).
func checkSQLiteFile(src Source) error {
	fi, err := os.Stat(src.Path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("history %s: is a directory; name a database file in it", src)
	case errors.Is(err, os.ErrNotExist) && src.ReadOnly:
		return fmt.Errorf("history %s: no such file (mode=ro opens an existing store)", src)
	case errors.Is(err, os.ErrNotExist) && src.MustExist:
		return fmt.Errorf("history %s: no such file: no run was stored there yet (run --history %s stores one)", src, src)
	}
	return nil
}

// Errors classified for messages and for callers.
var (
	// ErrNewerSchema: the store was written by a newer llmload.
	ErrNewerSchema = errors.New("history: the store's schema is newer than this llmload's")
	// ErrNotStore: the file or database is not a history store.
	ErrNotStore = errors.New("history: not a history store")
)

// wrap turns a driver's error into one that names the store and says what
// the user can do; the store's password never appears.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	msg := s.red.Redact(err.Error())
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("history %s: %s: the database stayed locked by another process for %s (sqlite:FILE?timeout=DURATION waits longer)", s.src, op, s.busyTimeout())
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("history %s: %s: the database or disk is full", s.src, op)
		case sqlite3.SQLITE_READONLY:
			return fmt.Errorf("history %s: %s: the database is read-only (%s)", s.src, op, msg)
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %s is not a SQLite database (%s)", ErrNotStore, s.src, msg)
		case sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("history %s: %s: cannot open the file (does its directory exist and can it be written?)", s.src, op)
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return fmt.Errorf("history %s: %s: PostgreSQL refused the login: %s", s.src, op, s.red.Redact(pe.Message))
		case pe.Code == "3D000":
			return fmt.Errorf("history %s: %s: no such database: %s", s.src, op, s.red.Redact(pe.Message))
		case pe.Code == "25006":
			return fmt.Errorf("history %s: %s: the database is read-only for this login (%s)", s.src, op, s.red.Redact(pe.Message))
		case strings.HasPrefix(pe.Code, "53"):
			return fmt.Errorf("history %s: %s: PostgreSQL is out of resources: %s", s.src, op, s.red.Redact(pe.Message))
		case pe.Code == "42501":
			return fmt.Errorf("history %s: %s: permission denied: %s", s.src, op, s.red.Redact(pe.Message))
		}
	}
	return fmt.Errorf("history %s: %s: %s", s.src, op, msg)
}

func (s *Store) busyTimeout() string {
	if s.src.BusyTimeout > 0 {
		return s.src.BusyTimeout.String()
	}
	return DefaultBusyTimeout.String()
}

// rebind rewrites "?" placeholders as PostgreSQL's $1, $2, …; the
// queries here hold no "?" inside string literals.
func (s *Store) rebind(q string) string {
	if s.src.Dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
