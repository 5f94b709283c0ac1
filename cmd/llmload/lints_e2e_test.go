package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EShippedScenariosFollowThePractice: every scenario of the library
// passes llmload check --strict — none has a lint warning (the summary's
// notes on short demo stages are info) — and prints its lints.
func TestE2EShippedScenariosFollowThePractice(t *testing.T) {
	paths, err := filepath.Glob("../../scenarios/*.lua")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, nil, "check", "--strict", p)
			if code != exitOK || strings.Contains(stdout, "  warning ") {
				t.Errorf("check --strict exited %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

const noWarmupScript = `local llm = require("llmload")
options = { vus = 1, duration = "500ms" }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = ("[req_%d] hi"):format(vu.request_id) } }, max_tokens = 4 }
end
`

// TestE2ECheckStrict: check prints a lint warning and exits 0; --strict
// makes it exit 1 with the lint's id; an ignore with a reason lists it as
// ignored and passes --strict.
func TestE2ECheckStrict(t *testing.T) {
	path := writeScript(t, noWarmupScript)
	stdout, _, code := runInProcess(t, "check", path)
	if code != exitOK || !strings.Contains(stdout, "warning  no-warmup: no warmup before the first measured stage") {
		t.Fatalf("check: exit %d\n%s", code, stdout)
	}
	_, stderr, code := runInProcess(t, "check", "--strict", path)
	if code != exitError || !strings.Contains(stderr, "--strict: 1 lint warning (no-warmup)") {
		t.Errorf("check --strict: exit %d\n%s", code, stderr)
	}
	ignored := writeScript(t, strings.Replace(noWarmupScript, "options = {",
		`options = { lints = { ignore = { ["no-warmup"] = "the server is warmed by the job before" } },`, 1))
	stdout, stderr, code = runInProcess(t, "check", "--strict", ignored)
	if code != exitOK || !strings.Contains(stdout, "ignored  no-warmup") ||
		!strings.Contains(stdout, "ignored: the server is warmed by the job before") {
		t.Errorf("check --strict with the lint ignored: exit %d\n%s\n%s", code, stdout, stderr)
	}
	bad := writeScript(t, strings.Replace(noWarmupScript, "options = {", `options = { lints = { ignore = { ["no-warmup"] = "" } },`, 1))
	if _, stderr, code := runInProcess(t, "check", bad); code != exitError || !strings.Contains(stderr, "needs a reason") {
		t.Errorf("an ignore without a reason: exit %d\n%s", code, stderr)
	}
}

// TestE2ERunStrictStopsBeforeLoad: run --strict with a plan-time warning
// exits 1 before any load: no result file, the lint on stderr.
func TestE2ERunStrictStopsBeforeLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	out := filepath.Join(t.TempDir(), "result.json")
	stdout, stderr, code := runBinary(t, nil, "run", "--strict", "--out", out, writeScript(t, noWarmupScript))
	if code != exitError || !strings.Contains(stderr, "--strict: 1 lint warning (no-warmup)") ||
		!strings.Contains(stderr, "nothing was sent") || !strings.Contains(stderr, "warning  no-warmup") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "built-in simulator") {
		t.Errorf("the simulator started: the run should stop before any load\n%s", stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a result file was written")
	}
}

// slowPromptScript's plan looks long enough for its p50 threshold (1 VU
// for 5 s at the assumed 240 ms per 2-token answer: ≈ 21 requests, a p50
// needs 20), but each prompt takes the simulator ≈ 0.6 s to prefill
// (15 ms + 0.1 ms × 6,000 tokens), so the run measures 8 or fewer: the
// short-stage lint fires only at the run's end.
const slowPromptScript = `local llm = require("llmload")
local body = string.rep("lorem ", 6000)
options = {
  warmup = { requests = 1 },
  vus = 1, duration = "5s",
  thresholds = { ["ttft.p50"] = llm.param("ttft_p50", "< 60s") },
}
function iteration(vu)
  llm.chat { messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, body) } },
             max_tokens = 2, temperature = 0.7 }
end
`

// TestE2ERunStrictAtEnd: a warning found only at the run's end makes
// --strict exit 1 after the run, with the lint in the result (source run);
// it outranks a failed threshold's 99; without --strict the run passes.
func TestE2ERunStrictAtEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	path := writeScript(t, slowPromptScript)
	if stdout, stderr, code := runBinary(t, nil, "check", "--strict", path); code != exitOK {
		t.Fatalf("the plan should look long enough: exit %d\n%s\n%s", code, stdout, stderr)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // on stderr
	}{
		{"strict", []string{"--strict"}, exitError, "--strict: 1 lint warning (short-stage)"},
		{"strict and a failed threshold", []string{"--strict", "--set", "ttft_p50=< 1us"}, exitError, "also: some thresholds failed"},
		{"not strict", nil, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"run", "-q", "--out", out}, tt.args...)
			stdout, stderr, code := runBinary(t, nil, append(args, path)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.want, stdout, stderr)
			}
			if !strings.Contains(stdout, "warning  short-stage [default/default]: threshold ttft.p50") {
				t.Errorf("summary lacks the run's lint:\n%s", stdout)
			}
			var res struct {
				Lints []struct {
					ID, Severity, Source, Message, Fix string
				} `json:"lints"`
			}
			data, err := os.ReadFile(out)
			if err != nil || json.Unmarshal(data, &res) != nil {
				t.Fatalf("result: %v\n%s", err, data)
			}
			found := false
			for _, l := range res.Lints {
				found = found || l.ID == "short-stage" && l.Severity == "warning" && l.Source == "run" &&
					strings.Contains(l.Message, "judged the p50 of") && l.Fix != ""
			}
			if !found {
				t.Errorf("result lints = %+v, want the run's short-stage warning", res.Lints)
			}
		})
	}
}

// TestCheckStuckDryRun: an iteration stuck where Lua cannot be
// interrupted (a backtracking pattern) does not hang check: the dry run is
// left behind at its bound and each scenario says it was not judged.
func TestCheckStuckDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the dry run's 10 s bound")
	}
	start := time.Now()
	stdout, stderr, code := runBinary(t, nil, "check", writeScript(t, stuckIteration))
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("check took %v with a stuck iteration", took)
	}
	if code != exitOK || !strings.Contains(stdout, "did not finish within 10s") {
		t.Errorf("exit %d, want 0 with the dry run's note\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
