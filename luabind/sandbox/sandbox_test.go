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
		{"package", `package.path = "./?.lua"`, "package is not available"},
		{"require of a library", `assert(require("string") == string and require("_G") == _G and require("os") == os)`, ""},
		{"base functions behind the globals", `assert(type(print) == "function" and rawget(_G, "print") == nil and getmetatable(_G) == "globals")`, ""},
		{"a global shadows a base function", `tostring = function() return "mine" end; assert(tostring(1) == "mine")`, ""},
		{"the globals' metatable is protected", `setmetatable(_G, {})`, "protected metatable"},
		{"the shared base table is out of reach", `local mt = getmetatable(_G); assert(type(mt) == "string")`, ""},
		{"math.randomseed", `math.randomseed(3); local a = math.random(); math.randomseed(3); assert(math.random() == a)`, ""},
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

// TestBaseFunctionsStayPerVU: a VU that replaces a base function changes
// its own globals, never the table every VU reads through to.
func TestBaseFunctionsStayPerVU(t *testing.T) {
	a, b := New(rand.NewPCG(1, 1), 1), New(rand.NewPCG(1, 2), 2)
	defer a.Close()
	defer b.Close()
	if err := a.DoString(`print = nil; tostring = function() return "a" end`); err != nil {
		t.Fatal(err)
	}
	if err := b.DoString(`assert(type(print) == "function" and tostring(1) == "1")`); err != nil {
		t.Errorf("another VU's change leaked: %v", err)
	}
}

// TestRequireLoadsOnce: a preloaded module's loader runs on the first
// require; later ones return the same value.
func TestRequireLoadsOnce(t *testing.T) {
	L := New(rand.NewPCG(1, 1), 1)
	defer L.Close()
	calls := 0
	Preload(L, func(L *lua.LState) int {
		calls++
		L.Push(L.NewTable())
		return 1
	})
	if err := L.DoString(`assert(require("llmload") == require("llmload"))`); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("the loader ran %d times, want 1", calls)
	}
}
