package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EScenariosListsTheLibrary: with no DIR, 'llmload scenarios' lists
// ./scenarios, one line per file with its summary and the keys its code
// reads.
func TestE2EScenariosListsTheLibrary(t *testing.T) {
	cmd := exec.Command(binary, "scenarios")
	cmd.Dir = "../.."
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	files, err := filepath.Glob("../../scenarios/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(files) {
		t.Fatalf("%d lines for %d scenarios:\n%s", len(lines), len(files), stdout.String())
	}
	chatMix := ""
	for _, line := range lines {
		if strings.HasPrefix(line, "chat_mix.lua ") {
			chatMix = line
		}
	}
	for _, want := range []string{"the classic chat benchmark, done right", "duration=12s max_tokens=200"} {
		if !strings.Contains(chatMix, want) {
			t.Errorf("chat_mix.lua's line %q lacks %q:\n%s", chatMix, want, stdout.String())
		}
	}
}

// TestE2EScenariosBadInput: a file that does not parse is named with its
// line and the others are still listed; a missing DIR, or one without a
// scenario, is an error (1); two DIRs a usage error (2).
func TestE2EScenariosBadInput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "good.lua", "-- good.lua — a scenario that parses.\n--\n-- Keys (--set): vus=2\n"+
		"local llm = require(\"llmload\")\noptions = { vus = llm.param(\"vus\", 2), duration = \"1s\" }\n")
	writeFile(t, dir, "bad.lua", "-- bad.lua — does not parse\nlocal x = 1\nlocal = 2\n")
	writeFile(t, dir, "stale.lua", "-- stale.lua — its header names an old key\n-- Keys (--set): stage_duration=1s\n"+
		"local d = require(\"llmload\").param(\"duration\", \"1s\")\n")
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "README"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"a file that does not parse", []string{dir}, exitError,
			[]string{"good.lua   a scenario that parses", "vus=2", "stale.lua"},
			[]string{filepath.Join(dir, "bad.lua") + ":3: syntax error near '='",
				"warning: " + filepath.Join(dir, "stale.lua") + ":2: the header's keys disagree with the llm.param calls: the source also reads duration=1s; the source does not read stage_duration=1s",
				"scenarios: 1 of 3 files in " + dir + " could not be read"}},
		{"a missing DIR", []string{filepath.Join(dir, "nope")}, exitError, nil,
			[]string{"scenarios: " + filepath.Join(dir, "nope") + ": no such file or directory"}},
		{"no scenario in DIR", []string{empty}, exitError, nil, []string{"scenarios: " + empty + ": no scenarios (*.lua files)"}},
		{"two DIRs", []string{dir, dir}, exitUsage, nil, []string{"scenarios: expected at most one DIR, got 2 arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, nil, append([]string{"scenarios"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stdout, "bad.lua") {
				t.Errorf("stdout lists the file that does not parse:\n%s", stdout)
			}
		})
	}
}
