package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/sim"
)

// TestRobustnessVerdictBothWays injects dirty data against the simulator,
// first answering carefully (exit 0, handled), then told to mishandle
// overlong input (exit 99, a DEFECT in the table).
func TestRobustnessVerdictBothWays(t *testing.T) {
	script := writeScript(t, `
local llm = require("llmload")
options = {
  dirty = { ratio = 0.5, kinds = { overlong = 1, empty = 1 } },
  stages = { { name = "s", target = 2, duration = "1s" } },
  thresholds = { ["dirty.defects"] = "count == 0" },
}
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 4 }
end
`)
	tests := []struct {
		name    string
		defects map[string]string
		code    int
		want    []string
	}{
		{"careful", nil, exitOK, []string{"✓ handled", "✓ dirty.defects count == 0: 0"}},
		{"defective", map[string]string{"overlong": "500"}, exitThreshold, []string{"overlong", "500×", "✗ DEFECT", "✗ dirty.defects"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(sim.New(sim.Config{Defects: tt.defects, DecodeBase: -1, PrefillBase: -1}))
			defer srv.Close()
			stdout, stderr, code := runInProcess(t, "run", "--quiet", "--seed", "3", "--target", srv.URL+"/v1", script)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("summary lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}
