package sandbox

import (
	"math/rand/v2"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestNewLeavesOutTheUnsafe runs scripts in a bare sandbox: what could
// reach the machine is gone with an error that says so, what a scenario
// needs works, and math.random is seeded by the VU's stream.
func TestNewLeavesOutTheUnsafe(t *testing.T) {
	tests := []struct {
		name, src, wantErr string
	}{
		{"io", `io.write("x")`, "io"},
		{"os.execute", `os.execute("true")`, "execute"},
		{"load", `load("return 1")()`, "load"},
		{"require of a file", `require("some_file")`, "some_file"},
		{"string.rep beyond the bound", `string.rep("x", 1e10)`, "limit"},
		{"os.time", `assert(os.time() > 0)`, ""},
		{"string and table", `assert(table.concat({string.upper("a"), "b"}) == "Ab")`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := New(rand.NewPCG(1, 2), 1)
			defer L.Close()
			err := L.DoString(tt.src)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("%s: %v", tt.src, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("%s: err = %v, want one naming %q", tt.src, err, tt.wantErr)
			}
		})
	}
}

func TestMathRandomFollowsTheStream(t *testing.T) {
	draw := func(stream uint64) lua.LValue {
		L := New(rand.NewPCG(7, stream), stream)
		defer L.Close()
		if err := L.DoString(`x = math.random(1, 1000000)`); err != nil {
			t.Fatal(err)
		}
		return L.GetGlobal("x")
	}
	if a, b := draw(1), draw(1); a.String() != b.String() {
		t.Errorf("one stream drew %v then %v", a, b)
	}
	if a, b := draw(1), draw(2); a.String() == b.String() {
		t.Errorf("two streams drew the same %v", a)
	}
}
