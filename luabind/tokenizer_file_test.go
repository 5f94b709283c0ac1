package luabind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// tokenizerDir is a directory holding a script's data: tok.json, a real
// (tiny) byte-level tokenizer.json, bad.json, and bert.json, a WordPiece
// model llmload refuses.
func tokenizerDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tiny, err := os.ReadFile("../engine/tokenize/testdata/tiny-bytelevel.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"tok.json":     string(tiny),
		"bad.json":     "{\n  \"model\": ,\n}",
		"bert.json":    `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`,
		"prompts.txt":  "the in\nthe the the the the\n",
		"scenario.lua": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTargetTokenizerFile: options.target.tokenizer takes a tokenizer.json,
// relative to the script's directory, and loads it at compile time: a
// missing, malformed or unsupported file is an error naming the option
// and the file.
func TestTargetTokenizerFile(t *testing.T) {
	dir := tokenizerDir(t)
	tests := []struct {
		name, tokenizer, want, wantErr string
	}{
		{"relative", "tok.json", filepath.Join(dir, "tok.json"), ""},
		{"absolute", filepath.Join(dir, "tok.json"), filepath.Join(dir, "tok.json"), ""},
		{"missing", "nope/tokenizer.json", "", "options.target.tokenizer: reading " + filepath.Join(dir, "nope/tokenizer.json") + ": no such file or directory"},
		{"malformed", "bad.json", "", "options.target.tokenizer: " + filepath.Join(dir, "bad.json") + ": not a tokenizer.json: line 2:"},
		{"unsupported", "bert.json", "", `options.target.tokenizer: ` + filepath.Join(dir, "bert.json") + `: model type "WordPiece" is not supported`},
		{"misspelt name", "cl100k_bse", "", `unknown tokenizer "cl100k_bse" (did you mean cl100k_base?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			src := `options = { vus = 1, duration = "1s", target = { tokenizer = "` + tt.tokenizer + `" } }`
			if err := L.DoString(src); err != nil {
				t.Fatal(err)
			}
			d := &decoder{}
			opts := d.decodeOptions(L.GetGlobal("options"), dir)
			err := d.Err("scenario.lua")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := opts.plan.Target.Tokenizer; got != tt.want {
				t.Errorf("Tokenizer = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPoolTokenizerFile: a pool loader's tokenizer = option and an
// options.target.tokenizer set before it take a tokenizer.json relative
// to the script, count with it, and list it among the script's files.
func TestPoolTokenizerFile(t *testing.T) {
	dir := tokenizerDir(t)
	for name, src := range map[string]string{
		"option": `local llm = require('llmload')
local p = llm.pool.text("prompts.txt", { max_tokens = 3, tokenizer = "tok.json" })
assert(p:len() == 1, "the tiny tokenizer counts 'the in' as 3 tokens, the other line as 6")
options = { vus = 1, duration = "1s" }
function iteration(vu) end
`,
		"target": `local llm = require('llmload')
options = { vus = 1, duration = "1s", target = { tokenizer = "tok.json" } }
local p = llm.pool.text("prompts.txt", { max_tokens = 3 })
assert(p:len() == 1)
function iteration(vu) end
`,
	} {
		t.Run(name, func(t *testing.T) {
			if name == "target" && !scriptDirPassed {
				t.Skip("Script.loadPlan does not yet pass the script's directory to decodeOptions")
			}
			path := filepath.Join(dir, name+".lua")
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			s := mustCompile(t, path, Options{})
			if files := strings.Join(s.Files(), " "); !strings.Contains(files, "tok.json") {
				t.Errorf("Files() = %q, want tok.json among them", files)
			}
		})
	}
}

// scriptDirPassed says whether Script.loadPlan gives decodeOptions the
// script's directory, which a relative options.target.tokenizer needs
// when the working directory is another; set it with that change.
const scriptDirPassed = true

// TestPoolTokenizerFileErrors: a bad tokenizer.json in a loader's options
// is an error of the script naming the option and the file.
func TestPoolTokenizerFileErrors(t *testing.T) {
	dir := tokenizerDir(t)
	path := filepath.Join(dir, "bad.lua")
	src := `local llm = require('llmload')
local p = llm.pool.text("prompts.txt", { max_tokens = 2, tokenizer = "bad.json" })
options = { vus = 1, duration = "1s" }
function iteration(vu) end
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(path, Options{})
	want := `llm.pool.text options.tokenizer: ` + filepath.Join(dir, "bad.json") + ": not a tokenizer.json"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
