package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Helper()               {}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "x.golden"), []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := &recorder{TB: t}
	Check(ok, "x.golden", []byte("same"))
	if ok.failed {
		t.Error("equal output reported as different")
	}
	bad := &recorder{TB: t}
	Check(bad, "x.golden", []byte("other"))
	if !bad.failed {
		t.Error("different output passed")
	}
}
