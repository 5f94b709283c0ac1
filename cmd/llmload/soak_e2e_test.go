package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
)

// leakyScenario is soak.lua with a script that keeps every prompt it
// sends, as a script that collects its answers in a global table does.
const leakyScenario = `
local llm = require("llmload")
local prompts = llm.synthetic { input_tokens = llm.dist.fixed(512), output_tokens = llm.dist.fixed(16), unique_prefix = true }
kept = {}
options = {
  warmup = { requests = 4 },
  scenarios = { soak = { executor = "ramping-vus", exec = "ask", stages = {
    { name = "ramp", target = 50, duration = "5s", ramp = "5s" },
    { name = "soak", target = 50, duration = llm.param("duration", "75s") } } } },
}
function ask(vu)
  local p = prompts:next()
  llm.chat { messages = { { role = "user", content = p.prompt } }, max_tokens = p.max_tokens }
  kept[#kept + 1] = p.prompt .. vu.request_id
end
`

// TestE2ESoak is the README's soak, shortened for CI: scenarios/soak.lua
// holds 200 streams against the simulator in another process, and
// llmload's own RSS, live heap, goroutines and open files stay flat
// within 10% after the warm-up. Beside it a script that keeps every
// prompt it sends makes the live heap grow, and the same check says so.
func TestE2ESoak(t *testing.T) {
	if testing.Short() {
		t.Skip("two soaks of about 100 s")
	}
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "200ms", "--fixed-itl", "20ms")
	target := mock.mockURL(t)
	t.Cleanup(func() { mock.signalAndWait(t, syscall.SIGINT, 30*time.Second) })
	dir := t.TempDir()
	soak := func(t *testing.T, scenario, name string, set ...string) (*result.Result, string) {
		out := filepath.Join(dir, name+".json")
		args := []string{"run", scenario, "--target", target, "--out", out}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		stdout, stderr, code := runBinaryWithin(t, 4*time.Minute, nil, args...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
		}
		res := loadResult(t, out)
		if res.Run.Process == nil || res.Run.Process.Drift == nil {
			t.Fatalf("no drift judged:\n%s", stdout)
		}
		if n := len(res.Run.Process.Held); n < 60 {
			t.Errorf("%d points of what the process held, want one a second", n)
		}
		return res, stdout
	}
	t.Run("soaks", func(t *testing.T) {
		t.Run("flat", func(t *testing.T) {
			t.Parallel()
			res, stdout := soak(t, "../../scenarios/soak.lua", "flat", "duration=100s", "ramp=10s")
			d := res.Run.Process.Drift
			for _, f := range d.DriftFigures() {
				if f.DriftFigure == nil {
					t.Errorf("%s not measured", f.Name)
					continue
				}
				t.Logf("%s: %.1f → %.1f (%+.1f%%)", f.Name, f.Early, f.Late, f.ChangePercent)
				if f.Growing || f.ChangePercent > 10 {
					t.Errorf("%s grew %.1f%% (%.1f → %.1f) holding 200 streams", f.Name, f.ChangePercent, f.Early, f.Late)
				}
			}
			if d.Goroutines != nil && d.Goroutines.Early < 200 {
				t.Errorf("%.0f goroutines early in the soak: the 200 streams were not held", d.Goroutines.Early)
			}
			if !strings.Contains(stdout, "flat within 10%") {
				t.Errorf("summary does not say the process stayed flat:\n%s", stdout)
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "grew by more than 10%") {
					t.Errorf("warning on a flat soak: %s", w)
				}
			}
		})
		t.Run("a script that keeps what it sends", func(t *testing.T) {
			t.Parallel()
			res, stdout := soak(t, writeFile(t, dir, "leaky.lua", leakyScenario), "leaky")
			d := res.Run.Process.Drift
			if d.HeapLiveMB == nil || !d.HeapLiveMB.Growing {
				t.Errorf("live heap %+v, want growing:\n%s", d.HeapLiveMB, stdout)
			}
			if !strings.Contains(stdout, "! GROWING: ") {
				t.Errorf("summary does not flag the growth:\n%s", stdout)
			}
			warned := false
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w, "live heap grew by more than 10%")
			}
			if !warned {
				t.Errorf("no warning of the growth in %q", res.Warnings)
			}
		})
	})
}
