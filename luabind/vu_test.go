package luabind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"syntax", "testdata/syntax.lua", "testdata/syntax.lua:4: "},
		{"end of file", "testdata/eof.lua", "testdata/eof.lua:3: "},
		{"init runtime", "testdata/init_error.lua", "testdata/init_error.lua:4: attempt to index a non-table object(nil) with key 'model'"},
		{"chat at init", "testdata/chat_at_init.lua", "testdata/chat_at_init.lua:3: llm.chat can only be called inside an iteration"},
		{"missing file", "testdata/nope.lua", "read scenario: open testdata/nope.lua"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want error %q", tt.want)
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error = %q, want prefix %q", got, tt.want)
			}
			if strings.Contains(err.Error(), "stack traceback") {
				t.Errorf("error keeps the traceback: %q", err)
			}
		})
	}
}

func TestIterationErrors(t *testing.T) {
	s := mustCompile(t, "testdata/errors.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	tests := []struct {
		exec, want string
	}{
		{"boom", "testdata/errors.lua:9: boom"},
		{"index_nil", "testdata/errors.lua:14: attempt to index a non-table object(nil) with key 'field'"},
		{"table_error", "testdata/errors.lua:18: error raised with a table value"},
		{"no_position", "testdata/errors.lua: plain"},
		{"bad_arg", "testdata/errors.lua:47: bad argument #1 to sleep (duration string or number of seconds expected, got table)"},
		{"undefined", `testdata/errors.lua: no global function "undefined" to run`},
	}
	for _, tt := range tests {
		t.Run(tt.exec, func(t *testing.T) {
			err := run(t, v, tt.exec)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if got := err.Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("error = %q, want prefix %q", got, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("script error %q reads as a context error", err)
			}
		})
	}
	// The VU stays usable after errors.
	mustRun(t, v, "ok")
	mustRun(t, v, "ok")
	if got, want := v.L.GetGlobal("count"), lua.LNumber(2); got != want {
		t.Errorf("count = %v, want %v", got, want)
	}
}

// TestIterationInterrupted checks that a done context stops an iteration
// promptly wherever it is, with an error that is a context error.
func TestIterationInterrupted(t *testing.T) {
	s := mustCompile(t, "testdata/errors.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	for _, exec := range []string{"spin", "spin_pcall", "nap", "think"} {
		t.Run(exec, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := v.RunIteration(ctx, engine.Iteration{Exec: exec, VUID: 1})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error = %v, want one wrapping context.DeadlineExceeded", err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v to stop", took)
			}
		})
	}
	mustRun(t, v, "ok") // usable after an interrupted iteration
}

func TestIterationCanceledWithCause(t *testing.T) {
	s := mustCompile(t, "testdata/errors.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	stop := errors.New("run stopped by user")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(20*time.Millisecond, func() { cancel(stop) })
	err := v.RunIteration(ctx, engine.Iteration{Exec: "spin", VUID: 1})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want one wrapping context.Canceled", err)
	}
	if !errors.Is(err, stop) {
		t.Errorf("error = %v, want one wrapping the cause", err)
	}
	if !strings.HasPrefix(err.Error(), "testdata/errors.lua:30: ") {
		t.Errorf("error = %q, want it to point at the loop, testdata/errors.lua:30", err)
	}
	if err := v.RunIteration(ctx, engine.Iteration{Exec: "ok", VUID: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("iteration on a done context: error = %v, want context.Canceled", err)
	}
}

func TestNewVUInitInterrupted(t *testing.T) {
	var spin atomic.Bool
	env := func(name string) (string, bool) { return "1", name == "SPIN" && spin.Load() }
	s := mustCompile(t, "testdata/slow_init.lua", Options{Env: env})
	spin.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.NewRunner(api.RunnerConfig{}).NewVU(ctx, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want one wrapping context.DeadlineExceeded", err)
	}
}

func TestNewVUInitError(t *testing.T) {
	var fail atomic.Bool
	env := func(name string) (string, bool) { return "x", name == "FAIL" && fail.Load() }
	path := writeScript(t, "init.lua", "local llm = require('llmload')\n"+
		"options = { vus = 1, duration = '1s' }\nfunction iteration(vu) end\n"+
		"if llm.env('FAIL') then\n  error('init failed')\nend\n")
	s := mustCompile(t, path, Options{Env: env})
	fail.Store(true)
	_, err := s.NewRunner(api.RunnerConfig{}).NewVU(testContext(t), 1)
	if got, want := errString(err), path+":5: init failed"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestCompiledOnce checks that VUs run the chunk compiled by Compile: they
// share its function prototypes and never read the file again.
func TestCompiledOnce(t *testing.T) {
	src, err := os.ReadFile("testdata/basic.lua")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "basic.lua")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustCompile(t, path, Options{})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	a := newVU(t, s, api.RunnerConfig{}, 1)
	b := newVU(t, s, api.RunnerConfig{}, 2)
	fa := a.L.GetGlobal("chat").(*lua.LFunction)
	fb := b.L.GetGlobal("chat").(*lua.LFunction)
	if fa == fb {
		t.Fatal("two VUs share one function value; they must have their own states")
	}
	if fa.Proto != fb.Proto {
		t.Errorf("VUs have different prototypes for chat: compiled more than once")
	}
	found := false
	for _, p := range s.Proto.FunctionPrototypes {
		found = found || p == fa.Proto
	}
	if !found {
		t.Errorf("chat's prototype is not the one Compile made")
	}
}

func TestIterationTable(t *testing.T) {
	path := writeScript(t, "it.lua", "options = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu) out = vu end\n")
	s := mustCompile(t, path, Options{})
	v := newVU(t, s, api.RunnerConfig{}, 3)
	err := v.RunIteration(testContext(t), engine.Iteration{
		Scenario: "sweep", Stage: "c4", Exec: "iteration", VUID: 3, Iteration: 11, RequestID: 42,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]lua.LValue{"id": lua.LNumber(3), "iteration": lua.LNumber(11),
		"request_id": lua.LNumber(42), "scenario": lua.LString("sweep"), "stage": lua.LString("c4")}
	for k, w := range want {
		if got := out(t, v, k); got != w {
			t.Errorf("vu.%s = %v, want %v", k, got, w)
		}
	}
}

// TestConcurrentVUs runs VUs of one script on parallel goroutines; under
// -race it checks that the shared script is safe to share.
func TestConcurrentVUs(t *testing.T) {
	s := mustCompile(t, "testdata/basic.lua", Options{})
	client := &fakeClient{result: engine.Result{Status: 200}}
	sink := &fakeSink{}
	r := s.NewRunner(api.RunnerConfig{Client: client, Sink: sink, Model: "m"})
	const vus, iterations = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, vus)
	for id := 1; id <= vus; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.NewVU(testContext(t), id)
			if err != nil {
				errs <- err
				return
			}
			defer v.Close()
			for i := range iterations {
				it := engine.Iteration{Scenario: "sweep", Stage: "c1", Exec: "chat", VUID: id, Iteration: int64(i)}
				if err := v.RunIteration(testContext(t), it); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := len(sink.all()), vus*iterations; got != want {
		t.Errorf("%d samples, want %d", got, want)
	}
	if got, want := sink.checkCounts()["status 200"], [2]int64{vus * iterations, 0}; got != want {
		t.Errorf("checks = %v, want %v", got, want)
	}
}

func TestCloseTwice(t *testing.T) {
	s := mustCompile(t, "testdata/errors.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := run(t, v, "ok"); err == nil {
		t.Errorf("iteration on a closed VU succeeded")
	}
}

func TestCompileStopsEndlessInit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loop.lua")
	if err := os.WriteFile(path, []byte("while true do end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(path, Options{InitTimeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "loop.lua: the top level did not finish") {
		t.Fatalf("err = %v", err)
	}
}
