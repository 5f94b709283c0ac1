package library

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		text    string
		want    []Key
		wantErr string
	}{
		{"", nil, ""},
		{" duration=12s  vus=4\tmax_tokens=200 ", []Key{{"duration", "12s"}, {"vus", "4"}, {"max_tokens", "200"}}, ""},
		{"precision=5% ratio=0.10 url=http://x/m?a=b", []Key{{"precision", "5%"}, {"ratio", "0.10"}, {"url", "http://x/m?a=b"}}, ""},
		{`metrics_url="" label="a b" plain="abc"`, []Key{{"metrics_url", `""`}, {"label", `"a b"`}, {"plain", "abc"}}, ""},
		{`name other=? q="?"`, []Key{{"name", ""}, {"other", "?"}, {"q", `"?"`}}, ""},
		{"vus= duration=1s", nil, `vus= has no default: write vus="" for an empty string, or vus alone for none`},
		{"=4", nil, `"=" without a key before it`},
		{`label="a b`, nil, "label: a quoted default without its closing quote"},
		{`label="a"b`, nil, "label: want a space after the quoted default"},
	}
	for _, tt := range tests {
		got, err := parseKeys(tt.text)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseKeys(%q) err = %v, want %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseKeys(%q) = %v, %v; want %v", tt.text, got, err, tt.want)
		}
	}
}

func TestSpellReadsBack(t *testing.T) {
	for _, v := range []string{"4s", "", "a b", "?", `say "hi"`, `back\slash`, "tab\there", "日本語", "5%"} {
		keys, err := parseKeys(Key{"k", spell(v)}.String())
		if err != nil || len(keys) != 1 || keys[0].Default != spell(v) {
			t.Errorf("spell(%q) = %s reads back as %v, %v", v, spell(v), keys, err)
		}
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name, src string
		want      header
		wantErr   string
	}{
		{"one-line summary", "-- s.lua — the classic chat benchmark, done right.\n--\n-- More.\n--\n-- Keys (--set): vus=4 duration=12s\n\nlocal x = 1\n",
			header{"the classic chat benchmark, done right", []Key{{"duration", "12s"}, {"vus", "4"}}, 5}, ""},
		{"summary over two lines", "-- s.lua — how many requests per second\n-- before it breaks.\n--\n-- Prose.\n",
			header{summary: "how many requests per second before it breaks"}, ""},
		{"several Keys lines", "-- s.lua — x\n--\n-- Keys (--set): b=2\n-- Keys (--set): a=1 b=2\n",
			header{"x", []Key{{"a", "1"}, {"b", "2"}}, 3}, ""},
		{"other separators", "-- s.lua: a summary\n", header{summary: "a summary"}, ""},
		{"no file name", "-- A summary.\n", header{summary: "A summary"}, ""},
		{"Keys lines after the header do not count", "-- s.lua — x\nlocal y = 1\n-- Keys (--set): a=1\n", header{summary: "x"}, ""},
		{"no header", "local llm = require(\"llmload\")\n", header{}, ""},
		{"CRLF", "-- s.lua — x\r\n-- Keys (--set): a=1\r\n", header{"x", []Key{{"a", "1"}}, 2}, ""},
		{"bad Keys line", "-- s.lua — x\n--\n-- Keys (--set): a=\n", header{}, `s.lua:3: Keys (--set): a= has no default`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseHeader("dir/s.lua", tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.summary != tt.want.summary || !slices.Equal(got.keys, tt.want.keys) || got.keysLine != tt.want.keysLine {
				t.Errorf("parseHeader = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadAndMismatch(t *testing.T) {
	const body = "local llm = require(\"llmload\")\noptions = { vus = llm.param(\"vus\", 4), duration = llm.param(\"duration\", \"12s\") }\n" +
		"function iteration() llm.chat { messages = {}, max_tokens = llm.param(\"max_tokens\", 200) } end\n"
	tests := []struct {
		name, header string
		mismatch     string // "" means none
	}{
		{"agree, in any order", "-- s.lua — x\n-- Keys (--set): max_tokens=200 duration=12s\n-- Keys (--set): vus=4\n", ""},
		{"a key the header lacks", "-- s.lua — x\n--\n-- Keys (--set): duration=12s vus=4\n",
			"s.lua:3: the header's keys disagree with the llm.param calls: the source also reads max_tokens=200"},
		{"an old name and a wrong default", "-- s.lua — x\n-- Keys (--set): stage_duration=12s vus=8 max_tokens=200\n",
			"s.lua:2: the header's keys disagree with the llm.param calls: the source also reads duration=12s vus=4; the source does not read stage_duration=12s vus=8"},
		{"no Keys line", "-- s.lua — x\n", `s.lua:1: the header has no "Keys (--set):" line; the source reads duration=12s max_tokens=200 vus=4`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "s.lua", tt.header+body)
			s := Read(path)
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if got, want := joinKeys(s.Keys), "duration=12s max_tokens=200 vus=4"; got != want {
				t.Errorf("Keys = %s, want %s", got, want)
			}
			err := s.Mismatch()
			switch {
			case tt.mismatch == "" && err != nil:
				t.Errorf("Mismatch = %v, want none", err)
			case tt.mismatch != "" && (err == nil || err.Error() != filepath.Join(filepath.Dir(path), tt.mismatch)):
				t.Errorf("Mismatch = %v, want %s", err, tt.mismatch)
			}
		})
	}
}

func TestReadKeysFromTheCode(t *testing.T) {
	tests := []struct {
		name, src, keys string
		dynamic         int
	}{
		{"no keys", "-- s.lua — x\nlocal a = 1\n", "", 0},
		{"one key, two defaults", "local a = llm.param(\"limit\", 0) > 0 and llm.param(\"limit\", 0)\nlocal b = llm.param(\"d\", \"1s\") .. llm.param(\"d\", \"2s\")",
			"d=1s d=2s limit=0", 0},
		{"empty, none, computed, a lone ?", "local a = llm.param(\"url\", \"\")\nlocal b = llm.param(\"name\")\nlocal c = llm.param(\"n\", 2 * 3)\nlocal d = llm.param(\"q\", \"?\")",
			`n=? name q="?" url=""`, 0},
		{"computed key", "local a = llm.param(\"a\", 1)\nlocal b = llm.param(\"k_\" .. a)", "a=1", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Read(writeFile(t, t.TempDir(), "s.lua", tt.src))
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if got := joinKeys(s.Keys); got != tt.keys || s.Dynamic != tt.dynamic {
				t.Errorf("Keys = %q, dynamic %d; want %q, %d", got, s.Dynamic, tt.keys, tt.dynamic)
			}
		})
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.lua", "-- b.lua — the second.\n--\n-- Keys (--set): vus=2\nlocal n = llm.param(\"vus\", 2)\n")
	writeFile(t, dir, "a.lua", "-- a.lua — the first\nlocal d = llm.param(\"duration\", \"1s\") .. llm.param(\"k\" .. 1)\n")
	writeFile(t, dir, "bad.lua", "-- bad.lua — broken\nlocal x = 1\nlocal = 2\n")
	writeFile(t, dir, "notes.txt", "not a scenario")
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name())
	}
	if want := []string{"a.lua", "b.lua", "bad.lua"}; !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	if err := list[2].Err; err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "bad.lua")+":3: ") {
		t.Errorf("bad.lua: err = %v, want it to name the file and line 3", err)
	}
	var out bytes.Buffer
	if err := Print(&out, list); err != nil {
		t.Fatal(err)
	}
	want := "a.lua  the first   duration=1s (and keys computed at line 2)\n" +
		"b.lua  the second  vus=2\n"
	if got := out.String(); got != want {
		t.Errorf("Print wrote\n%s\nwant\n%s", got, want)
	}
}

func TestListRefusesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.lua", "")
	tests := []struct {
		dir, want string
		is        error
	}{
		{filepath.Join(dir, "missing"), "no such file or directory", os.ErrNotExist},
		{file, file + ": not a directory", nil},
		{t.TempDir(), "no scenarios (*.lua files)", ErrNoScenarios},
	}
	for _, tt := range tests {
		_, err := List(tt.dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("List(%s) err = %v, want %q", tt.dir, err, tt.want)
		}
	}
}

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
