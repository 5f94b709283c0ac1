// Package pgtest gives tests a real PostgreSQL: the server that
// .ci/postgres.sh starts (Debian's, on 127.0.0.1, with a data directory
// of its own) is named by $LLMLOAD_POSTGRES, and each test gets a fresh,
// empty database on it, dropped when the test ends. Without
// $LLMLOAD_POSTGRES a test is skipped, or fails under CI=true, where
// .ci/run starts the server. Messages never show a DSN's password.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/llmload/llmload/engine/redact"
)

// Env is the variable that names the server: a DSN of a role with
// LOGIN CREATEDB, as .ci/postgres.sh start prints it.
const Env = "LLMLOAD_POSTGRES"

// timeout bounds each of the kit's round trips to the server: one on
// loopback takes milliseconds, so a minute means the server is stuck.
const timeout = time.Minute

// Admin returns $LLMLOAD_POSTGRES itself, for tests that need the role
// rather than a database of their own: a wrong-password test derives
// its DSN from this one. Safe for concurrent use.
func Admin(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn != "" {
		return dsn
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no PostgreSQL: " + Env + " is unset (.ci/run starts one with .ci/postgres.sh start)")
		return ""
	}
	t.Skip("no PostgreSQL: " + Env + ` is unset; start one (Debian's postgresql package) with set -a; eval "$(.ci/postgres.sh start)"; set +a and stop it with .ci/postgres.sh stop "$LLMLOAD_POSTGRES_DATA"`)
	return ""
}

// DSN creates a database of its own for the test, empty, and returns its
// DSN; the database is dropped when the test ends, with any connection
// still open to it. Safe for concurrent use: parallel tests each get one.
func DSN(t testing.TB) string {
	t.Helper()
	admin := Admin(t)
	if admin == "" {
		return "" // a fake testing.TB whose Skip or Fatal returns
	}
	u, err := url.Parse(admin)
	if err != nil {
		// The parser's error quotes the URL, password and all.
		t.Fatal(Env + " does not parse as a URL (postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable)")
		return ""
	}
	name := "llmload_test_" + randomHex()
	if err := exec(admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s on %s: %s", name, redact.URL(admin), scrub(err.Error(), admin))
		return ""
	}
	t.Cleanup(func() {
		if err := exec(admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s on %s: %s", name, redact.URL(admin), scrub(err.Error(), admin))
		}
	})
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// exec runs one statement on its own connection to dsn.
func exec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// scrub removes the password of dsn from msg, wherever it appears:
// the kit's own messages leave DSNs out through redact.URL, and this
// guards against a driver's error that quotes one.
func scrub(msg, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return msg
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		return msg
	}
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		msg = strings.ReplaceAll(msg, s, "REDACTED")
	}
	return msg
}

// randomHex returns 16 random hex digits: database names unique across
// tests, packages and runs sharing one server.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
