package mmproj

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// LlamaPaths are llama-server and the text model: from the environment
// .ci/llama-server.sh prints (LLMLOAD_LLAMA_SERVER, LLMLOAD_LLAMA_MODEL),
// else from its cache ($LLMLOAD_CACHE, else the user's cache, /llmload).
func LlamaPaths() (bin, model string) {
	cache := os.Getenv("LLMLOAD_CACHE")
	if cache == "" {
		if c, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(c, "llmload")
		}
	}
	bin, model = os.Getenv("LLMLOAD_LLAMA_SERVER"), os.Getenv("LLMLOAD_LLAMA_MODEL")
	if bin == "" {
		bin = filepath.Join(cache, "llama-server-node-llama-cpp-3.21.1", "llama-server")
	}
	if model == "" {
		model = filepath.Join(cache, "stories260K.gguf")
	}
	return bin, model
}

// LlamaPathsOrSkip returns LlamaPaths, or skips the test when either is
// absent (fails it under CI=true, where .ci/run always builds them), and
// in -short mode.
func LlamaPathsOrSkip(t testing.TB) (bin, model string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real llama.cpp server")
	}
	bin, model = LlamaPaths()
	for _, p := range []string{bin, model} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: .ci/run builds llama-server and fetches the model with .ci/llama-server.sh", p)
			}
			t.Skipf("no real server: %s is missing; run .ci/llama-server.sh (builds llama-server once, about 8 minutes on 2 cores) or set LLMLOAD_LLAMA_SERVER and LLMLOAD_LLAMA_MODEL", p)
		}
	}
	return bin, model
}

// Llama is a llama-server a test started.
type Llama struct {
	// Base is its address: http://127.0.0.1:PORT.
	Base   string
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}
}

// Log is what the server wrote so far (llama-server logs on stderr).
func (l *Llama) Log() string { return l.log.String() }

// LogWithin waits up to d for the log to hold every one of want and
// returns it. /health can answer before the lines that told of the load
// have come through the pipe, so a test reads the log through this.
func (l *Llama) LogWithin(d time.Duration, want ...string) string {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		log := l.Log()
		missing := false
		for _, w := range want {
			if !strings.Contains(log, w) {
				missing = true
				break
			}
		}
		if !missing || time.Now().After(deadline) {
			return log
		}
	}
}

// StartLlama starts llama-server with the text model, the projector at
// mmproj and args, on a free loopback port, waits (up to a minute) until
// its /health says the model is loaded, and kills it when the test ends.
// It skips the test as LlamaPathsOrSkip does.
func StartLlama(t testing.TB, mmproj string, args ...string) *Llama {
	t.Helper()
	bin, model := LlamaPathsOrSkip(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	l := &Llama{Base: fmt.Sprintf("http://127.0.0.1:%d", port), log: &syncBuffer{}, exited: make(chan struct{})}
	l.cmd = exec.Command(bin, append([]string{"-m", model, "--mmproj", mmproj, "--alias", "stories260K",
		"--host", "127.0.0.1", "--port", fmt.Sprint(port)}, args...)...)
	l.cmd.Env = serverEnv()
	l.cmd.Stdout, l.cmd.Stderr = l.log, l.log
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() { l.cmd.Wait(); close(l.exited) }()
	t.Cleanup(func() {
		l.cmd.Process.Kill()
		<-l.exited
	})
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-l.exited:
			t.Fatalf("llama-server exited before it was ready (%s):\n%s", l.cmd.ProcessState, l.Log())
		default:
		}
		if resp, err := client.Get(l.Base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return l
			}
		}
	}
	t.Fatalf("llama-server not ready within a minute:\n%s", l.Log())
	return nil
}

// serverEnv is the environment without llmload's variables or proxies:
// the server talks to nobody, and the test's settings are not its own.
func serverEnv() []string {
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

// syncBuffer is a buffer the server's output goroutines write while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
