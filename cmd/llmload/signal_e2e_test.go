package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
)

// lockedBuffer is a bytes.Buffer a test may read while the process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// started is a running llmload.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	exited         chan struct{}
	code           int
}

// startBinary starts llmload with args; it is killed at the test's end.
func startBinary(t testing.TB, args ...string) *started {
	t.Helper()
	return startCommand(t, binary, args...)
}

// startCommand starts name with args (llmload, or llmload wrapped in
// another command); it is killed at the test's end.
func startCommand(t testing.TB, name string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(name, args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd.Env = cleanEnv()
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := s.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			s.code = ee.ExitCode()
		}
		close(s.exited)
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.exited })
	return s
}

// waitFor polls cond for up to a minute: the machine may be busy.
func (s *started) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		select {
		case <-s.exited:
			t.Fatalf("exited (code %d) before %s\nstderr:\n%s", s.code, what, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute\nstderr:\n%s", what, s.stderr.String())
		}
	}
}

// mockURL waits for a started `llmload mock` to print its address and
// returns its base URL, http://127.0.0.1:PORT/v1.
func (s *started) mockURL(t testing.TB) string {
	t.Helper()
	s.waitFor(t, "the mock's address", func() bool { return mockAddress.MatchString(s.stdout.String()) })
	return mockAddress.FindString(s.stdout.String())
}

var mockAddress = regexp.MustCompile(`http://127\.0\.0\.1:\d+/v1`)

// signal sends sig and returns when the process exits, or fails after limit.
func (s *started) signalAndWait(t testing.TB, sig os.Signal, limit time.Duration) time.Duration {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-s.exited:
		return time.Since(start)
	case <-time.After(limit):
		t.Fatalf("still running %v after %v\nstderr:\n%s", limit, sig, s.stderr.String())
		return 0
	}
}

// hasRows reports whether the per-request CSV has a row past its header.
func hasRows(path string) func() bool {
	return func() bool {
		data, _ := os.ReadFile(path)
		return strings.Count(string(data), "\n") >= 2
	}
}

func writeScenario(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.lua")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const chatIteration = `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1m", exec = "chat" } } }
function chat(vu)
  llm.chat{ messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
end
`

// TestE2EInterruptCutsSetupAndTeardown: a setup() or teardown() sleeping
// 30 s ends at the first signal, and the run exits 1 with its result.
func TestE2EInterruptCutsSetupAndTeardown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	tests := map[string]struct {
		lifecycle string
		ready     func(s *started, csv string) func() bool
	}{
		// The signal comes during the load: teardown() runs after it and
		// must see the interrupt too.
		"teardown": {lifecycle: `function teardown() llm.sleep("30s") end`,
			ready: func(_ *started, csv string) func() bool { return hasRows(csv) }},
		"setup": {lifecycle: `function setup() llm.sleep("30s") end`,
			ready: func(s *started, _ string) func() bool {
				return func() bool { return strings.Contains(s.stderr.String(), "preflight ok") }
			}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out, csv := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.csv")
			s := startBinary(t, "run", writeScenario(t, chatIteration+tt.lifecycle+"\n"), "--out", out, "--csv", csv)
			s.waitFor(t, "load", tt.ready(s, csv))
			if name == "setup" {
				time.Sleep(500 * time.Millisecond) // into setup's sleep
			}
			// Bounded well under the 30 s sleep, generously for a busy machine.
			took := s.signalAndWait(t, os.Interrupt, 15*time.Second)
			t.Logf("exited %v after the first signal", took)
			if s.code != exitError {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", s.code, exitError, s.stderr.String())
			}
			if _, err := os.Stat(out); err != nil {
				t.Errorf("no result file: %v", err)
			}
		})
	}
}

// stuckIteration backtracks for hours inside gopher-lua's pattern
// matcher, which never looks at the context: only a second signal ends it.
const stuckIteration = `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1m", exec = "chat" } } }
function chat(vu)
  llm.chat{ messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
  if vu.iteration == 3 then
    local s = string.rep("a", 3000)
    s:find(".-.-.-.-b")
  end
end
`

// TestE2ESecondSignalExitsAtOnce: when the first signal cannot stop the
// run, a second one exits 1 at once with one line, the result file and
// the per-request records written.
func TestE2ESecondSignalExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	for _, second := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(second.String(), func(t *testing.T) {
			dir := t.TempDir()
			out, csv := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.csv")
			s := startBinary(t, "run", writeScenario(t, stuckIteration), "--out", out, "--csv", csv)
			s.waitFor(t, "4 requests", func() bool {
				data, _ := os.ReadFile(csv)
				return strings.Count(string(data), "\n") >= 5
			})
			if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			s.waitFor(t, "the first signal's message", func() bool {
				return strings.Contains(s.stderr.String(), "again to exit at once")
			})
			select {
			case <-s.exited:
				t.Fatalf("exited at the first signal; the test needs a run it cannot stop\nstderr:\n%s", s.stderr.String())
			case <-time.After(time.Second):
			}
			took := s.signalAndWait(t, second, 10*time.Second)
			t.Logf("exited %v after the second signal", took)
			if s.code != exitError {
				t.Errorf("exit code %d, want %d", s.code, exitError)
			}
			if got, want := lastLine(s.stderr.String()), "llmload: second interrupt: exited at once; the results cover what was collected until then"; got != want {
				t.Errorf("last stderr line = %q, want %q", got, want)
			}
			res := readBack(t, out)
			if res.Run.Complete || len(res.Stages) == 0 || res.Stages[0].Requests < 4 {
				t.Errorf("result: complete %v, stages %+v; want incomplete with the requests sent", res.Run.Complete, res.Stages)
			}
			if !hasRows(csv)() {
				t.Error("per-request CSV has no rows")
			}
		})
	}
}

// readBack reads a result file the binary wrote.
func readBack(t *testing.T, path string) *result.Result {
	t.Helper()
	res, err := readResult(path)
	if err != nil {
		t.Fatalf("no result file: %v", err)
	}
	return res
}
