package history

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/redact"
)

// Dialect is the SQL a store speaks.
type Dialect int

// The dialects.
const (
	SQLite Dialect = iota
	Postgres
)

// DefaultBusyTimeout is how long a SQLite writer waits for another
// process's write to finish before giving up: a run's end must not fail
// because another CI job on the same machine was storing its own.
const DefaultBusyTimeout = 30 * time.Second

// Source is a parsed --history DSN.
type Source struct {
	Dialect Dialect
	// Path is the SQLite file; URL the PostgreSQL connection string.
	Path string
	URL  string
	// ReadOnly opens a SQLite file without writing (sqlite:FILE?mode=ro).
	ReadOnly bool
	// BusyTimeout bounds a SQLite writer's wait for the lock
	// (sqlite:FILE?timeout=5s); 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Pragmas are extra SQLite pragmas, for tests ("max_page_count(8)").
	Pragmas []string
	// MustExist refuses a SQLite file that does not exist yet, for the
	// commands that read: a mistyped path must not read as an empty
	// history.
	MustExist bool
}

// ErrDSN is wrapped by every error ParseDSN returns.
var ErrDSN = errors.New("history: bad DSN")

// ParseDSN reads a --history value: sqlite:FILE (options after "?":
// mode=ro, timeout=DURATION) or postgres://USER:PASSWORD@HOST:PORT/DB
// (postgresql:// too, with libpq's query options).
func ParseDSN(dsn string) (Source, error) {
	dsn = strings.TrimSpace(dsn)
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok || dsn == "" {
		return Source{}, fmt.Errorf("%w %q: want sqlite:FILE or postgres://USER@HOST/DB", ErrDSN, redact.URL(dsn))
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		return parseSQLite(dsn, rest)
	case "postgres", "postgresql":
		u, err := url.Parse(dsn)
		if err != nil || u.Host == "" {
			return Source{}, fmt.Errorf("%w %q: want postgres://USER:PASSWORD@HOST:PORT/DB", ErrDSN, redact.URL(dsn))
		}
		if strings.Trim(u.Path, "/") == "" {
			return Source{}, fmt.Errorf("%w %s: name the database, e.g. postgres://USER@%s/llmload", ErrDSN, redact.URL(dsn), u.Host)
		}
		return Source{Dialect: Postgres, URL: dsn}, nil
	}
	return Source{}, fmt.Errorf("%w: unknown scheme %q in %q: want sqlite:FILE or postgres://USER@HOST/DB", ErrDSN, scheme, redact.URL(dsn))
}

func parseSQLite(dsn, rest string) (Source, error) {
	rest = strings.TrimPrefix(rest, "//")
	path, query, _ := strings.Cut(rest, "?")
	if path == "" {
		return Source{}, fmt.Errorf("%w %q: name the database file, e.g. sqlite:history.db", ErrDSN, dsn)
	}
	if path == ":memory:" {
		return Source{}, fmt.Errorf("%w %q: an in-memory database keeps nothing after the run; name a file", ErrDSN, dsn)
	}
	src := Source{Dialect: SQLite, Path: path}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Source{}, fmt.Errorf("%w %q: options: %v", ErrDSN, dsn, err)
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "mode":
			if v != "ro" && v != "rw" {
				return Source{}, fmt.Errorf("%w %q: mode=%q: want ro or rw", ErrDSN, dsn, v)
			}
			src.ReadOnly = v == "ro"
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Source{}, fmt.Errorf("%w %q: timeout=%q: want a duration such as 30s", ErrDSN, dsn, v)
			}
			src.BusyTimeout = d
		default:
			return Source{}, fmt.Errorf("%w %q: unknown option %q (known: mode, timeout)", ErrDSN, dsn, k)
		}
	}
	return src, nil
}

// String names the store in messages, without its password.
func (s Source) String() string {
	if s.Dialect == Postgres {
		return redact.URL(s.URL)
	}
	return "sqlite:" + s.Path
}

// driver returns the database/sql driver name and its data source.
func (s Source) driver() (string, string) {
	if s.Dialect == Postgres {
		return "pgx", s.URL
	}
	timeout := s.BusyTimeout
	if timeout == 0 {
		timeout = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", timeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	for _, p := range s.Pragmas {
		q.Add("_pragma", p)
	}
	if s.ReadOnly {
		q.Set("mode", "ro")
	} else {
		// WAL lets readers go on while a run stores itself; IMMEDIATE
		// takes the write lock when a transaction begins, so that two
		// writers queue on busy_timeout instead of one failing at its
		// first write.
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	// A file: URI's path is percent-decoded and ends at "?" or "#":
	// unescaped, sqlite:run#2.db would open "run", and h%41.db "hA.db".
	path := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(s.Path)
	return "sqlite", "file:" + path + "?" + q.Encode()
}
