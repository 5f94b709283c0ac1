package luabind

import (
	"context"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/luabind/api"
)

// TestMemoryBoundStopsTheVMItself: a script doubling a string stops
// within a few doublings of the bound even when the Watcher's own
// goroutine never reads again (an hour's interval, as when the scheduler
// does not run it): the VM asks the bound between instructions. The loop
// ends at 1 GB, so a failing test fails instead of taking the machine.
func TestMemoryBoundStopsTheVMItself(t *testing.T) {
	const head = "local llm = require(\"llmload\")\noptions = { vus = 1, duration = \"1s\" }\n"
	const double = `local s = "x" for i = 1, 30 do s = s .. s end`
	iterate := func(t *testing.T, s *Script) error {
		v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{}, Sink: &fakeSink{}}, 1)
		return v.RunIteration(testContext(t), engine.Iteration{Scenario: "s", Exec: "iteration", VUID: 1})
	}
	tests := map[string]struct {
		src  string
		line int
		run  func(t *testing.T, s *Script) error
	}{
		"top level": {src: head + double + "\nfunction iteration() end\n", line: 3},
		"iteration": {
			src:  head + "function iteration()\n  " + double + "\nend\n",
			line: 4,
			run:  iterate,
		},
		"setup": {
			src:  head + "function setup()\n  " + double + "\nend\nfunction iteration() end\n",
			line: 4,
			run: func(t *testing.T, s *Script) error {
				return s.NewRunner(api.RunnerConfig{Client: &fakeClient{}, Sink: &fakeSink{}}).(engine.Lifecycle).Setup(testContext(t))
			},
		},
		// The iteration is cut at its llm.parallel call.
		"parallel branch": {
			src:  head + "function iteration()\n  llm.parallel({ function()\n    " + double + "\n  end })\nend\n",
			line: 4,
			run:  iterate,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			// The bound is 64 MB over what the process holds now: a
			// doubling that crossed it earlier left its pages mapped.
			debug.FreeOSMemory()
			limit := memlimit.Used() + 64*memlimit.MB
			w := memlimit.Start(limit, memlimit.Options{Interval: time.Hour, NoGCLimit: true})
			defer w.Stop()
			path := writeScript(t, "s.lua", tt.src)
			s, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }, Stop: w.Context()})
			if tt.run != nil {
				if err != nil {
					t.Fatal(err)
				}
				err = tt.run(t, s)
			}
			if err == nil {
				t.Fatal("the doubling ran to 1 GB")
			}
			if want := path + ":" + strconv.Itoa(tt.line) + ":"; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "interrupted") {
				t.Errorf("err = %q, want %s… interrupted", err, want)
			}
			if w.Exceeded() == nil || w.Context().Err() == nil {
				t.Fatalf("stopped (%v) with no crossing recorded", err)
			}
			if want := "memory limit " + memlimit.FormatSize(limit) + " exceeded"; context.Cause(w.Context()).Error() != want {
				t.Errorf("cause = %v, want %s", context.Cause(w.Context()), want)
			}
			// The doubling that crossed and at most one more.
			if got := w.Peak(); got > limit+512*memlimit.MB {
				t.Errorf("stopped at %s of a %s bound, want within 512 MB more", memlimit.FormatSize(got), memlimit.FormatSize(limit))
			}
		})
	}
}

// BenchmarkGuarded is what the memory bound's look between instructions
// costs: "loop" is a Lua loop of arithmetic and table stores (400,000
// instructions), "chat" an iteration of testdata/basic.lua with a client
// that answers at once; "plain" runs under a cancelable context alone,
// "bounded" the same under a Watcher.
func BenchmarkGuarded(b *testing.B) {
	loop := writeScript(b, "s.lua", `local llm = require("llmload")
options = { vus = 1, duration = "1s" }
function iteration()
  local t, x = {}, 0
  for i = 1, 100000 do x = x + i; t[i % 64] = x end
end
`)
	for _, sc := range []struct{ name, path, exec string }{{"loop", loop, "iteration"}, {"chat", "testdata/basic.lua", "chat"}} {
		s, err := Compile(sc.path, Options{Env: func(string) (string, bool) { return "", false }})
		if err != nil {
			b.Fatal(err)
		}
		for _, bounded := range []bool{false, true} {
			b.Run(sc.name+"/"+map[bool]string{false: "plain", true: "bounded"}[bounded], func(b *testing.B) {
				if bounded {
					w := memlimit.Start(1<<40, memlimit.Options{NoGCLimit: true})
					defer w.Stop()
				}
				client := &fakeClient{result: engine.Result{Status: 200, TTFT: time.Millisecond}}
				v, err := s.NewRunner(api.RunnerConfig{Client: client, Sink: &fakeSink{}}).NewVU(context.Background(), 1)
				if err != nil {
					b.Fatal(err)
				}
				defer v.Close()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				it := engine.Iteration{Scenario: "sweep", Stage: "c1", Exec: sc.exec, VUID: 1}
				for b.Loop() {
					client.reqs = client.reqs[:0]
					if err := v.RunIteration(ctx, it); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
