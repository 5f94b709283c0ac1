package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// binary is the llmload binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	if spec := os.Getenv(floorEnv); spec != "" {
		os.Exit(floorRead(spec))
	}
	if spec := os.Getenv(requestFloorEnv); spec != "" {
		os.Exit(floorRequests(spec))
	}
	dir, err := os.MkdirTemp("", "llmload-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "llmload")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	stopLlama()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBinary runs the built llmload with a time limit and returns its
// stdout, stderr and exit code.
func runBinary(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runBinaryWithin(t, 2*time.Minute, env, args...)
}

// runBinaryWithin is runBinary with another time limit, for runs that
// are long by design (a capacity search against a real server).
func runBinaryWithin(t *testing.T, limit time.Duration, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// cleanEnv is the environment without llmload's or proxy variables, so a
// developer's shell cannot change what the tests see.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LLMLOAD_") || strings.Contains(strings.ToLower(k), "proxy") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func TestE2EChatMixOnSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	files := map[string]string{"--csv": "requests.csv", "--requests-jsonl": "requests.jsonl", "--html": "report.html", "--csv-stages": "stages.csv"}
	args := []string{"run", "../../scenarios/chat_mix.lua", "--set", "duration=1500ms", "--out", out, "--seed", "7"}
	for flag, name := range files {
		args = append(args, flag, filepath.Join(dir, name))
	}
	const secret = "sk-e2e-secret-do-not-print"
	stdout, stderr, code := runBinary(t, []string{"LLMLOAD_API_KEY=" + secret}, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "built-in simulator") {
		t.Errorf("stderr does not say the simulator is used:\n%s", stderr)
	}
	for _, stage := range []string{"c1", "c4", "c8", "c16"} {
		if !strings.Contains(stdout, stage) {
			t.Errorf("summary lacks stage %s:\n%s", stage, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{"stdout": stdout, "stderr": stderr, "result.json": string(data)}
	for _, name := range files {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(body) == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
		outputs[name] = string(body)
	}
	for name, text := range outputs {
		if strings.Contains(text, secret) {
			t.Errorf("the API key leaked into %s", name)
		}
	}
	var res struct {
		SchemaVersion int `json:"schema_version"`
		Run           struct {
			Simulator bool   `json:"simulator"`
			Model     string `json:"model"`
			Complete  bool   `json:"complete"`
		} `json:"run"`
		Stages []struct {
			Stage     string  `json:"stage"`
			VUs       int     `json:"vus"`
			OK        int64   `json:"ok"`
			Failed    int64   `json:"failed"`
			ReqPerSec float64 `json:"req_per_sec"`
			TTFT      struct {
				Count int64   `json:"count"`
				P50   float64 `json:"p50"`
				P99   float64 `json:"p99"`
			} `json:"ttft"`
			TPOT struct {
				P50 float64 `json:"p50"`
			} `json:"tpot"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("result.json: %v", err)
	}
	if res.SchemaVersion != 1 || !res.Run.Simulator || !res.Run.Complete || res.Run.Model == "" {
		t.Errorf("run metadata = %+v (schema %d)", res.Run, res.SchemaVersion)
	}
	if got, want := len(res.Stages), 4; got != want {
		t.Fatalf("stages = %d, want %d", got, want)
	}
	for i, want := range []int{1, 4, 8, 16} {
		s := res.Stages[i]
		if s.VUs != want || s.OK == 0 || s.Failed != 0 || s.TTFT.Count != s.OK || s.TTFT.P50 <= 0 || s.TPOT.P50 <= 0 {
			t.Errorf("stage %d = %+v", i, s)
		}
	}
	if first, last := res.Stages[0].ReqPerSec, res.Stages[3].ReqPerSec; last <= first {
		t.Errorf("req/s at 16 VUs (%.1f) not above 1 VU (%.1f)", last, first)
	}
}

func TestE2EInterruptStillWritesResult(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	out := filepath.Join(t.TempDir(), "result.json")
	csv := filepath.Join(t.TempDir(), "requests.csv")
	cmd := exec.Command(binary, "run", "../../scenarios/chat_mix.lua", "--set", "duration=1m", "--out", out, "--csv", csv)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer kill.Stop()
	defer cmd.Process.Kill() // a failed wait leaves no run behind; a no-op after Wait
	// Interrupt once c1 has answered requests, however long a busy machine
	// takes to compile the script and warm up: not after a fixed sleep.
	waitForFileText(t, csv, ",sweep,c1,", time.Minute)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError {
		t.Fatalf("exit = %v, want code %d\nstderr:\n%s", err, exitError, stderr.String())
	}
	if !strings.Contains(stdout.String(), "run incomplete") {
		t.Errorf("summary does not say the run is incomplete:\n%s", stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result file after Ctrl-C: %v", err)
	}
	var res struct {
		Run struct {
			Complete bool `json:"complete"`
		} `json:"run"`
		Stages []struct {
			Stage    string `json:"stage"`
			Requests int64  `json:"requests"`
			Complete bool   `json:"complete"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Run.Complete || len(res.Stages) != 1 || res.Stages[0].Stage != "c1" || res.Stages[0].Complete {
		t.Errorf("result = %+v, want one incomplete stage c1", res)
	}
	rows, err := os.ReadFile(csv)
	if err != nil || !strings.Contains(string(rows), ",sweep,c1,") {
		t.Errorf("per-request CSV after Ctrl-C lacks stage c1 rows (%v):\n%s", err, rows)
	}
}

// waitForFileText polls path until it holds text, failing after limit.
func waitForFileText(t *testing.T, path, text string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still lacks %q after %v", path, text, limit)
		}
	}
}

// TestE2EOpenLoopThresholdsGate runs the ramping-arrival-rate scenario on
// the simulator twice: a threshold that cannot hold exits 99, one that
// holds exits 0.
func TestE2EOpenLoopThresholdsGate(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	tests := []struct {
		ttft string
		code int
		mark string
	}{
		{"1us", exitThreshold, "✗ ttft_sched{stage:r2}.p50 < 1us"},
		{"30s", exitOK, "✓ ttft_sched{stage:r2}.p50 < 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.ttft, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/open_loop.lua", "--quiet",
				"--set", "duration=1s", "--set", "arrival=constant", "--set", "ttft_sched_p50="+tt.ttft, "--set", "max_tokens=20", "--out", out)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.mark) {
				t.Errorf("summary lacks %q:\n%s", tt.mark, stdout)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Thresholds []struct {
					Expr   string `json:"expr"`
					Passed bool   `json:"passed"`
				} `json:"thresholds"`
				Stages []struct {
					TargetRate  float64 `json:"target_rate"`
					ScheduleLag struct {
						Count int64 `json:"count"`
					} `json:"schedule_lag"`
				} `json:"stages"`
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Thresholds) != 4 || len(res.Stages) != 4 {
				t.Fatalf("thresholds %d, stages %d", len(res.Thresholds), len(res.Stages))
			}
			if s := res.Stages[3]; s.TargetRate != 6 || s.ScheduleLag.Count == 0 {
				t.Errorf("stage r6 = %+v", s)
			}
		})
	}
}

func TestE2ECheckPrintsPlanAndSendsNothing(t *testing.T) {
	stdout, stderr, code := runBinary(t, []string{"LLMLOAD_BASE_URL=http://127.0.0.1:1/v1"}, "check", "../../scenarios/open_loop.lua")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"ramping-arrival-rate", "r6     30s", "6 req/s", "expected ≈ 130 iterations",
		"ttft_sched{stage:r2}.p50 < 3s", "nothing was sent"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

// TestE2EEveryShippedScenarioChecks: each scenario of the library compiles
// and plans without a server.
func TestE2EEveryShippedScenarioChecks(t *testing.T) {
	paths, err := filepath.Glob("../../scenarios/*.lua")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			if stdout, stderr, code := runBinary(t, nil, "check", p); code != exitOK || !strings.Contains(stdout, "nothing was sent") {
				t.Errorf("check exited %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}
