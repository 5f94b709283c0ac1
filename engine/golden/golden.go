// Package golden compares test output with golden files under testdata/,
// rewritten instead when the tests run with -update. It is meant for
// tests only; one flag serves every package that imports it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Update reports whether -update was given: golden files are being rewritten.
func Update() bool { return *update }

// Check compares got with testdata/name. Under -update it writes got there
// first, so the comparison passes and the file shows the change for review.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (go test -update to accept):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
