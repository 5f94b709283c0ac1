package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/sim"
)

// counting serves the simulator on 127.0.0.1 and counts every request.
func counting(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	simulator := sim.New(sim.Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestE2ENothingMeasuredExitsOne runs the four "exit 0 on nothing
// measured" cases through the binary: each exits 1 with one clear line,
// and the result file is written first.
func TestE2ENothingMeasuredExitsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	srv, _ := counting(t)
	down, _ := failAfter(t, 1) // passes the preflight, then fails every request
	const head = "local llm = require(\"llmload\")\noptions = { stages = { { name = \"c1\", target = 2, duration = \"1s\" } } }\n"
	tests := []struct {
		name, body, target, want string
	}{
		{"a typo in every iteration", "function iteration(vu)\n  llm.chat { messages = { { role = \"user\", content = \"hi\" } }, max_tokn = 5 }\nend",
			srv.URL, "iterations failed with a script error and no request was sent; first: "},
		{"no llm.chat", `function iteration(vu) llm.sleep("10ms") end`, srv.URL, "none called llm.chat or llm.complete"},
		{"every request failed", `function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } } } end`,
			down.URL, "no request succeeded: all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, out := filepath.Join(dir, "scenario.lua"), filepath.Join(dir, "r.json")
			if err := os.WriteFile(path, []byte(head+tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runBinary(t, nil, "run", "--quiet", "--out", out, "--target", tt.target+"/v1", path)
			if code != exitError {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
			}
			line := lastLine(stderr)
			if !strings.HasPrefix(line, "llmload: nothing measured: ") || !strings.Contains(line, tt.want) {
				t.Errorf("last line %q, want nothing measured … %q", line, tt.want)
			}
			if tt.name == "a typo in every iteration" && !strings.Contains(line, "scenario.lua:4: llm.chat.max_tokn: unknown key (did you mean max_tokens?)") {
				t.Errorf("line %q does not name the error's file:line", line)
			}
			var res struct {
				Run struct{ Verdict string } `json:"run"`
			}
			data, err := os.ReadFile(out)
			if err != nil || json.Unmarshal(data, &res) != nil || "llmload: "+res.Run.Verdict != line {
				t.Errorf("result file verdict %q (err %v), want %q", res.Run.Verdict, err, line)
			}
		})
	}
}

// dying serves the simulator on a 127.0.0.1 listener that it closes after
// d, with every open connection: the target is gone, the port refuses.
func dying(t *testing.T, d time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(sim.New(sim.Config{}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	timer := time.AfterFunc(d, func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	t.Cleanup(func() { timer.Stop(); srv.Close() })
	return srv.URL
}

// unreachableAttempts counts the run's requests that failed without a response.
func unreachableAttempts(t *testing.T, path string) (int64, float64) {
	t.Helper()
	var res struct {
		Run struct {
			Start, End time.Time
		} `json:"run"`
		Stages []struct {
			Errors map[string]int64 `json:"errors"`
		} `json:"stages"`
	}
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &res) != nil {
		t.Fatalf("result file: %v", err)
	}
	var n int64
	for _, s := range res.Stages {
		n += s.Errors["conn_refused"] + s.Errors["conn_reset"] + s.Errors["timeout_connect"]
	}
	return n, res.Run.End.Sub(res.Run.Start).Seconds()
}

// TestE2ETargetDiesMidRun kills the server 2 s into a 6 s run: the VUs back
// off (attempts stay within the documented bound of VUs·(6 + D/2) in an
// outage of D seconds), the summary WARNs when the outage began, and the
// run exits 1 — or 0, WARNING kept, when the scenario opts out.
func TestE2ETargetDiesMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	const vus = 8
	script := writeScript(t, fmt.Sprintf(`local llm = require("llmload")
options = { vus = %d, duration = "6s", target = { on_unreachable = llm.param("on_unreachable", "fail") } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
end
`, vus))
	tests := []struct {
		name string
		sets []string
		code int
	}{
		{"fails the run", nil, exitError},
		{"opted out", []string{"--set", "on_unreachable=warn"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := dying(t, 2*time.Second)
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "--quiet", "--out", out, "--target", url + "/v1"}, tt.sets...)
			stdout, stderr, code := runBinary(t, nil, append(args, script)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, "target unreachable from ") || !strings.Contains(stdout, "failed without a response") {
				t.Errorf("summary lacks the outage WARNING:\n%s", stdout)
			}
			if tt.code == exitError && !strings.HasPrefix(lastLine(stderr), "llmload: target unreachable: it stopped answering ") {
				t.Errorf("last line %q, want target unreachable", lastLine(stderr))
			}
			attempts, runS := unreachableAttempts(t, out)
			outage := runS - 1.5 // the server lived 2 s, preflight included
			bound := float64(vus) * (6 + outage/2)
			t.Logf("%d attempts without a response in a %.1f s outage, %d VUs: %.1f/s; bound %.0f", attempts, outage, vus, float64(attempts)/outage, bound)
			if attempts == 0 || float64(attempts) > 1.5*bound {
				t.Errorf("%d unreachable attempts, want between 1 and 1.5 × %.0f", attempts, bound)
			}
		})
	}
}

// TestE2ENoEffectFlagsSendNothing: a misspelt --set key and gate flags
// without --baseline exit 2 before any request.
func TestE2ENoEffectFlagsSendNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	srv, count := counting(t)
	script := writeScript(t, `local llm = require("llmload")
options = { vus = 1, duration = llm.param("duration", "1s") }
function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } } } end
`)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--set", "duraton=2s"}, "(did you mean duration?); the keys it reads: duration"},
		{[]string{"--max-regression", "20%"}, "--max-regression has no effect without --baseline"},
		{[]string{"--metrics", "ttft.p99"}, "--metrics has no effect without --baseline"},
		{[]string{"--format", "json"}, "--format has no effect without --baseline"},
		{[]string{"--inconclusive", "fail"}, "--inconclusive has no effect without --baseline"},
	}
	for _, tt := range tests {
		args := append(append([]string{"run", "--target", srv.URL + "/v1"}, tt.args...), script)
		stdout, stderr, code := runBinary(t, nil, args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tt.args, code, exitUsage, tt.want, stdout, stderr)
		}
	}
	if n := count.Load(); n != 0 {
		t.Errorf("%d requests reached the server, want 0", n)
	}
}
