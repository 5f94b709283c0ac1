package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2EMemoryBound: a script that eats memory — at its top level, in an
// iteration, doubling a string or filling a table — ends with the bound's
// message and its line, exit 1, no Go stack trace, and a result file when
// it got as far as a run.
func TestE2EMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const head = `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1m", exec = "chat" } } }
`
	tests := map[string]struct {
		cmd    string
		src    string
		lines  []int // any of these: the loop stops at whichever instruction it was on
		result bool  // a result file is written
	}{
		"init doubling": {cmd: "run", lines: []int{3}, src: head + `local s = "x" for i = 1, 60 do s = s .. s end
function chat() end
`},
		"check doubling": {cmd: "check", lines: []int{3}, src: head + `local s = "x" for i = 1, 60 do s = s .. s end
function chat() end
`},
		"iteration doubling": {cmd: "run", lines: []int{6}, result: true, src: head + `function chat(vu)
  llm.chat{ messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
  if vu.iteration < 3 then return end
  local s = "x" for i = 1, 60 do s = s .. s end
end
`},
		"iteration table": {cmd: "run", lines: []int{7, 8, 9, 10}, result: true, src: head + `function chat(vu)
  llm.chat{ messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
  if vu.iteration < 3 then return end
  local t, i = {}, 0
  while true do
    i = i + 1
    t[i] = "row " .. i
  end
end
`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			script := writeScenario(t, tt.src)
			out := filepath.Join(t.TempDir(), "result.json")
			args := []string{tt.cmd, script, "--max-memory", "256MB"}
			if tt.cmd == "run" {
				args = append(args, "--out", out)
			}
			_, stderr, code := runBinary(t, nil, args...)
			if code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			got, found := lastLine(stderr), false
			for _, l := range tt.lines {
				found = found || strings.Contains(got, script+":"+strconv.Itoa(l)+": memory limit 256 MB exceeded")
			}
			if !found {
				t.Errorf("last stderr line = %q, want %s:%v: memory limit 256 MB exceeded", got, script, tt.lines)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "runtime:") {
				t.Errorf("stderr has a Go stack trace:\n%s", stderr)
			}
			_, err := os.Stat(out)
			if got := err == nil; got != tt.result {
				t.Errorf("result file written: %v, want %v", got, tt.result)
			}
			if tt.result {
				if res := readBack(t, out); res.Run.Complete || !strings.Contains(res.Run.Aborted, "memory limit 256 MB exceeded") {
					t.Errorf("result run = %+v, want incomplete, aborted by the memory bound", res.Run)
				}
			}
		})
	}
}

func TestMaxMemoryFlagErrors(t *testing.T) {
	var stderr strings.Builder
	if got, want := run([]string{"run", "--max-memory", "lots", "x.lua"}, &strings.Builder{}, &stderr), exitUsage; got != want {
		t.Errorf("exit code %d, want %d", got, want)
	}
	if !strings.Contains(stderr.String(), `--max-memory: "lots" is not a size`) {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// TestE2EMemoryUnderUlimit: under an address-space or data limit and
// without --max-memory, a script doubling a string ends with the default
// bound's message and its line, exit 1 — not the Go runtime's fatal "out
// of memory", exit 2, which the limit would give without a bound under it.
func TestE2EMemoryUnderUlimit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	script := writeScenario(t, `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1m", exec = "chat" } } }
local s = "x" for i = 1, 60 do s = s .. s end
function chat() end
`)
	for _, ulimit := range []string{"-v 4194304", "-d 2097152"} {
		t.Run(ulimit, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", "ulimit "+ulimit+` && exec "$0" "$@"`, binary, "check", script)
			cmd.Env = cleanEnv()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
			err := cmd.Run()
			timer.Stop()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitError {
				t.Fatalf("exit %v, want %d; stderr:\n%.2000s", err, exitError, stderr.String())
			}
			if got := lastLine(stderr.String()); !strings.Contains(got, script+":3: memory limit") {
				t.Errorf("last stderr line = %q, want %s:3: memory limit … exceeded", got, script)
			}
			if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "out of memory") {
				t.Errorf("stderr has the runtime's out of memory:\n%.2000s", stderr.String())
			}
		})
	}
}
