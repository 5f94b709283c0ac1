package main

import (
	"strings"
	"testing"
)

// TestCheckTaskThresholds: llmload check takes thresholds on the task
// metrics, a task name's through its tag, and names a misspelt one.
func TestCheckTaskThresholds(t *testing.T) {
	script := writeScript(t, `local llm = require("llmload")
options = { stages = { { name = "c1", target = 1, duration = "1s" } },
  thresholds = { ["task.p99"] = "< 30s", ["task{task:plan}.p99"] = "< 10s", ["task_good.rate"] = "> 0.1",
                 ["task_failed.rate"] = "< 5%", ["tasks.count"] = "> 0", ["task_calls{stage:c1}.p50"] = "<= 8",
                 ["task_tokens.max"] = "< 4000", ["task_tool.p90"] = "< 5s" } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 }
end`)
	stdout, stderr, code := runInProcess(t, "check", script)
	if code != exitOK {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)
	}
	for _, want := range []string{"task.p99 < 30s", "task{task:plan}.p99 < 10s", "task_good.rate > 0.1", "task_failed.rate < 5%",
		"tasks.count > 0", "task_calls{stage:c1}.p50 <= 8", "task_tokens.max < 4000", "task_tool.p90 < 5s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check's plan lacks the threshold %q:\n%s", want, stdout)
		}
	}
	bad := writeScript(t, `local llm = require("llmload")
options = { vus = 1, duration = "1s", thresholds = { ["taks.p99"] = "< 30s" } }
function iteration(vu) end`)
	if _, stderr, code := runInProcess(t, "check", bad); code != exitError || !strings.Contains(stderr, `unknown metric "taks"`) {
		t.Errorf("a misspelt task metric: exit %d, stderr:\n%s", code, stderr)
	}
}
