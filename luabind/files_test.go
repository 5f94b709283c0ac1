package luabind

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/luabind/api"
)

func TestFilesOfShippedTestdata(t *testing.T) {
	s := mustCompile(t, "testdata/data.lua", Options{Seed: 1})
	want := []string{"data/prompts.csv", "data/prompts.jsonl", "data/prompts.txt", "data/sharegpt.json"}
	if got := s.Files(); !reflect.DeepEqual(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
}

func TestFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scn")
	for _, f := range []string{"scn/a.txt", "scn/data/b.jsonl", "scn/data/c.csv", "outside.txt"} {
		writeFile(t, filepath.Join(root, f), "prompt,q\nhello,hi\n")
	}
	writeFile(t, filepath.Join(root, "scn/data/b.jsonl"), `{"prompt":"hi"}`+"\n")
	abs := filepath.Join(dir, "a.txt")
	tests := []struct {
		name  string
		loads string
		want  []string
	}{
		{"none", ``, nil},
		{"sorted", `llm.pool.jsonl("data/b.jsonl"); llm.pool.text("a.txt")`, []string{"a.txt", "data/b.jsonl"}},
		{"deduplicated", `llm.pool.text("a.txt"); llm.pool.text("./a.txt", {max_tokens = 9}); llm.pool.csv("data/../a.txt")`, []string{"a.txt"}},
		{"csv", `llm.pool.csv("data/c.csv")`, []string{"data/c.csv"}},
		{"outside", `llm.pool.text("../outside.txt")`, []string{filepath.Join(root, "outside.txt")}},
		{"absolute inside", `llm.pool.text(` + luaQuote(abs) + `)`, []string{abs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".lua")
			writeFile(t, path, "local llm = require('llmload')\n"+tt.loads+"\noptions = { vus = 1, duration = '1s' }\nfunction iteration() end\n")
			s := mustCompile(t, path, Options{Seed: 1})
			if got := s.Files(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Files() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFilesOnlyAtCompile: a VU runs the top level again, and a pool
// loaded in an iteration is read at run time only; neither changes the
// list Compile made.
func TestFilesOnlyAtCompile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	writeFile(t, filepath.Join(dir, "late.txt"), "two\n")
	path := filepath.Join(dir, "s.lua")
	writeFile(t, path, `local llm = require('llmload')
local a = llm.pool.text("a.txt")
options = { vus = 1, duration = '1s' }
function iteration() end
function late() llm.pool.text("late.txt") end
`)
	s := mustCompile(t, path, Options{Seed: 1})
	v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{}, Sink: &fakeSink{}, Model: "m"}, 1)
	mustRun(t, v, "late")
	if got, want := s.Files(), []string{"a.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
}

// TestFilesPerScript: two scripts compiled from one source keep lists of
// their own.
func TestFilesPerScript(t *testing.T) {
	a := mustCompile(t, "testdata/data.lua", Options{Seed: 1})
	b := mustCompile(t, "testdata/basic.lua", Options{Seed: 1})
	if len(a.Files()) == 0 || len(b.Files()) != 0 {
		t.Errorf("data.lua Files() = %q, basic.lua Files() = %q; want some, none", a.Files(), b.Files())
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func luaQuote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
