package luabind

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

// fakeClient records requests and answers each with a copy of result.
type fakeClient struct {
	mu     sync.Mutex
	reqs   []*engine.ChatRequest
	result engine.Result
}

func (c *fakeClient) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	r := c.result
	return &r
}

func (c *fakeClient) requests() []*engine.ChatRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*engine.ChatRequest(nil), c.reqs...)
}

// fakeSink records samples and metric samples.
type fakeSink struct {
	mu      sync.Mutex
	samples []engine.Sample
	metrics []engine.MetricSample
	tasks   []engine.TaskSample
}

func (s *fakeSink) Sample(smp engine.Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, smp)
}

func (s *fakeSink) Metric(m engine.MetricSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metrics = append(s.metrics, m)
}

func (s *fakeSink) Task(t engine.TaskSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks = append(s.tasks, t)
}

func (s *fakeSink) IterationError(engine.IterationError)  {}
func (s *fakeSink) StageStarted(engine.StageMark)         {}
func (s *fakeSink) StageEnded(engine.StageMark)           {}
func (s *fakeSink) IterationStarted(engine.IterationMark) {}
func (s *fakeSink) Dropped(engine.DropMark)               {}

func (s *fakeSink) all() []engine.Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]engine.Sample(nil), s.samples...)
}

func (s *fakeSink) allMetrics() []engine.MetricSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]engine.MetricSample(nil), s.metrics...)
}

// checkCounts tallies "checks" samples per check name: passes, fails.
func (s *fakeSink) checkCounts() map[string][2]int64 {
	out := map[string][2]int64{}
	for _, m := range s.allMetrics() {
		if m.Name != "checks" {
			continue
		}
		c := out[m.Tags["check"]]
		if m.Value == 1 {
			c[0]++
		} else {
			c[1]++
		}
		out[m.Tags["check"]] = c
	}
	return out
}

// testTimeout bounds every blocking call in the tests.
const testTimeout = 20 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func mustCompile(t *testing.T, path string, opts Options) *Script {
	t.Helper()
	if opts.Env == nil {
		opts.Env = func(string) (string, bool) { return "", false }
	}
	s, err := Compile(path, opts)
	if err != nil {
		t.Fatalf("Compile(%s): %v", path, err)
	}
	return s
}

// newVU compiles path and makes VU id with the given config.
func newVU(t *testing.T, s *Script, cfg api.RunnerConfig, id int) *vm.VU {
	t.Helper()
	v, err := s.NewRunner(cfg).NewVU(testContext(t), id)
	if err != nil {
		t.Fatalf("NewVU: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	return v.(*vm.VU)
}

// run calls exec in a measured iteration.
func run(t *testing.T, v *vm.VU, exec string) error {
	t.Helper()
	return v.RunIteration(testContext(t), engine.Iteration{
		Scenario: "s", Stage: "st", Exec: exec, VUID: v.Module.VUID, RequestID: 7,
	})
}

func mustRun(t *testing.T, v *vm.VU, exec string) {
	t.Helper()
	if err := run(t, v, exec); err != nil {
		t.Fatalf("%s: %v", exec, err)
	}
}

// out returns the field key of the script's global table out.
func out(t *testing.T, v *vm.VU, key string) lua.LValue {
	t.Helper()
	tbl, ok := v.L.GetGlobal("out").(*lua.LTable)
	if !ok {
		t.Fatalf("global out is %s, want table", v.L.GetGlobal("out").Type())
	}
	return tbl.RawGetString(key)
}

// writeScript writes src to name in a temporary directory.
func writeScript(t testing.TB, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
