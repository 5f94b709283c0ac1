package luabind

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	lua "github.com/yuin/gopher-lua"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/luabind/api"
)

// recursion is a script whose function f recurses without end at line 3,
// called at init when atInit, else from the iteration at line 6.
func recursion(atInit bool) string {
	src := "options = { vus = 1, duration = \"1s\" }\nlocal function f(n)\n  return 1 + f(n + 1)\nend\n" +
		"function iteration(vu)\n  f(1)\nend\n"
	if atInit {
		src += "f(1)\n"
	}
	return src
}

func TestStackOverflowNamesTheLine(t *testing.T) {
	const want = "deep.lua:3: stack overflow (recursion deeper than 200 calls)"
	t.Run("compile", func(t *testing.T) {
		_, err := Compile(writeScript(t, "deep.lua", recursion(true)), Options{})
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("err = %v, want it to end with %q", err, want)
		}
	})
	t.Run("iteration", func(t *testing.T) {
		v := newVU(t, mustCompile(t, writeScript(t, "deep.lua", recursion(false)), Options{}), api.RunnerConfig{}, 1)
		for i := range 2 { // the VU stays usable after an overflow
			err := run(t, v, "iteration")
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("run %d: err = %v, want it to end with %q", i+1, err, want)
			}
		}
	})
	t.Run("caught by pcall", func(t *testing.T) {
		src := strings.Replace(recursion(false), "function iteration(vu)\n  f(1)\nend",
			"out = {}\nfunction iteration(vu)\n  local ok, e = pcall(f, 1)\n  out.caught = not ok and tostring(e):find(\"overflow\") ~= nil\n  out.after = math.max(1, 2)\nend", 1)
		v := newVU(t, mustCompile(t, writeScript(t, "deep.lua", src), Options{}), api.RunnerConfig{}, 1)
		mustRun(t, v, "iteration")
		if out(t, v, "caught") != lua.LTrue || out(t, v, "after").String() != "2" {
			t.Errorf("caught = %v, after = %v", out(t, v, "caught"), out(t, v, "after"))
		}
	})
	t.Run("vu creation", func(t *testing.T) {
		// The environment changes after Compile, so only the VU's init
		// recurses.
		calls := 0
		env := func(string) (string, bool) { calls++; return "", calls > 1 }
		src := strings.Replace(recursion(false), "function iteration", "if llm.env(\"DEEP\") then f(1) end\nfunction iteration", 1)
		s := mustCompile(t, writeScript(t, "deep.lua", "local llm = require(\"llmload\")\n"+src), Options{Env: env})
		_, err := s.NewRunner(api.RunnerConfig{}).NewVU(testContext(t), 2)
		if want := "deep.lua:4: stack overflow (recursion deeper than"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	})
}

func TestRemovedNamesExplainThemselves(t *testing.T) {
	tests := []struct{ call, name string }{
		{`io.open("x")`, "io"}, {`io.popen("ls")`, "io"}, {`os.execute("true")`, "os.execute"},
		{`os.exit(1)`, "os.exit"}, {`os.getenv("HOME")`, "os.getenv"}, {`os.remove("x")`, "os.remove"},
		{`os.rename("a", "b")`, "os.rename"}, {`os.tmpname()`, "os.tmpname"},
		{`load("return 1")`, "load"}, {`loadstring("return 1")`, "loadstring"}, {`loadfile("x")`, "loadfile"},
		{`dofile("x")`, "dofile"}, {`module("m")`, "module"}, {`collectgarbage()`, "collectgarbage"},
		{`debug.traceback()`, "debug"}, {`coroutine.create(print)`, "coroutine"}, {`channel.make()`, "channel"},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			src := "options = { vus = 1, duration = \"1s\" }\nfunction iteration(vu)\n  local x = " + tt.call + "\nend\n"
			v := newVU(t, mustCompile(t, writeScript(t, "s.lua", src), Options{}), api.RunnerConfig{}, 1)
			err := run(t, v, "iteration")
			want := "s.lua:3: " + tt.name + " is not available in llmload scripts (the sandbox leaves out io, os.execute"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to contain %q", err, want)
			}
		})
	}
}

func TestRemovedNamesStayRemoved(t *testing.T) {
	src := `options = { vus = 1, duration = "1s" }
function iteration(vu)
  out = { io = tostring(rawget(_G, "io")), execute = tostring(rawget(os, "execute")),
          undefined = tostring(not_a_global), time = type(os.time) }
end
`
	v := newVU(t, mustCompile(t, writeScript(t, "s.lua", src), Options{}), api.RunnerConfig{}, 1)
	mustRun(t, v, "iteration")
	for key, want := range map[string]string{"io": "nil", "execute": "nil", "undefined": "nil", "time": "function"} {
		if got := out(t, v, key).String(); got != want {
			t.Errorf("out.%s = %s, want %s", key, got, want)
		}
	}
}

func TestRequireUnknownModule(t *testing.T) {
	src := "local socket = require(\"socket\")\noptions = { vus = 1, duration = \"1s\" }\nfunction iteration(vu) end\n"
	_, err := Compile(writeScript(t, "s.lua", src), Options{})
	if want := `s.lua:1: module "socket" not found: llmload scripts can require only llmload (the sandbox`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

// TestInitTimeLimitCoversLoading loads a gzipped 64 MB pool under an init
// limit far shorter than its loading takes.
func TestInitTimeLimitCoversLoading(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	line := append(bytes.Repeat([]byte("x"), 64<<10-1), '\n')
	for range 1024 {
		zw.Write(line)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	script := filepath.Join(dir, "s.lua")
	src := "local llm = require(\"llmload\")\nlocal p = llm.pool.text(\"big.txt.gz\")\noptions = { vus = 1, duration = \"1s\" }\nfunction iteration(vu) end\n"
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Compile(script, Options{InitTimeout: 5 * time.Millisecond})
	t.Logf("Compile took %v", time.Since(start))
	want := "did not finish within 5ms: still loading " + filepath.Join(dir, "big.txt.gz")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Log("(wraps the deadline)")
	}
}
