package luabind

import (
	"bytes"
	"os"
	"testing"
)

// TestSourceIsWhatCompiled: the fingerprint and the shipped copy come
// from the bytes Compile read, not from a later read that an edit of the
// file in between would change.
func TestSourceIsWhatCompiled(t *testing.T) {
	src := `options = { vus = 1, duration = "1s" }
function iteration() end
`
	path := writeScript(t, "s.lua", src)
	s := mustCompile(t, path, Options{})
	if err := os.WriteFile(path, []byte("-- edited\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := s.Source()
	if !bytes.Equal(got, []byte(src)) {
		t.Fatalf("Source() = %q, want the compiled %q", got, src)
	}
	got[0] = 'X'
	if s.Source()[0] == 'X' {
		t.Error("Source() shares its bytes with the caller")
	}
}
