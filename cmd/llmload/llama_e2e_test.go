package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/mmproj"
	"github.com/llmload/llmload/engine/result"
)

// The real-server tests run llmload against llama.cpp's llama-server with
// the TinyStories model stories260K, both made by .ci/llama-server.sh
// (which CI always runs). They skip, saying how to get the server, only
// when it is absent outside CI.

// llamaPaths are the server binary and the model: from the environment
// .ci/llama-server.sh prints, else from its cache.
func llamaPaths() (bin, model string) { return mmproj.LlamaPaths() }

// llamaInstance is a llama-server the tests of this package share,
// started with args on first use and killed by TestMain when they are
// done (stopLlama).
type llamaInstance struct {
	args []string
	once sync.Once
	base string // http://127.0.0.1:P
	err  error
	proc *started
}

// llama is the server of most real-server tests: 4 slots of 2,048
// tokens, its metrics on.
var llama = llamaInstance{args: []string{"-c", "8192", "-np", "4", "-t", "1", "--metrics"}}

// llamaServer returns the base URL of the running llama, or skips the
// test when the server is absent.
func llamaServer(t *testing.T) string { return llama.serve(t) }

// serve returns the base URL of l, started on first use, or skips the
// test when the server is absent.
func (l *llamaInstance) serve(t *testing.T) string {
	t.Helper()
	bin, model := llamaPathsOrSkip(t)
	l.once.Do(func() { l.proc, l.base, l.err = startLlama(bin, model, l.args...) })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.base
}

// llamaPathsOrSkip returns the server binary and the model, or skips the
// test when either is absent (fails it in CI, which always builds them).
func llamaPathsOrSkip(t *testing.T) (bin, model string) {
	t.Helper()
	return mmproj.LlamaPathsOrSkip(t)
}

// startLlama starts the server with args on a free loopback port and
// waits until its model is loaded. The process outlives the test that
// started it unless that test kills it: the caller owns it.
func startLlama(bin, model string, args ...string) (*started, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &started{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"-m", model, "--alias", "stories260K", "--host", "127.0.0.1",
		"--port", fmt.Sprint(port)}, args...)...)
	s.cmd.Env = cleanEnv()
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, "", err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-s.exited:
			return s, "", fmt.Errorf("llama-server exited before it was ready:\n%s", s.stderr.String())
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, base, nil
			}
		}
	}
	s.cmd.Process.Kill()
	<-s.exited
	return s, "", fmt.Errorf("llama-server not ready within 2 minutes:\n%s", s.stderr.String())
}

// llamaInstances are the shared servers stopLlama stops.
var llamaInstances = []*llamaInstance{&llama, &llamaGuarded}

// stopLlama kills the shared servers that were started.
func stopLlama() {
	for _, l := range llamaInstances {
		if p := l.proc; p != nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// requestRecords reads a --requests-jsonl file.
func requestRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, rec)
	}
	return out
}

func num(rec map[string]any, key string) (float64, bool) {
	v, ok := rec[key].(float64)
	return v, ok
}

// llamaScenario sends chat or completions, streamed or not, with the
// tokens and VUs the test asks.
const llamaScenario = `
local llm = require("llmload")
options = {
  target = { tokenizer = "none", metrics_url = llm.param("metrics_url", ""), metrics_every = "250ms" },
  scenarios = { s = { executor = "per-vu-iterations", exec = "send", vus = llm.param("vus", 2),
                      iterations = llm.param("iterations", 8), max_duration = "2m" } },
}
local api, stream, tokens = llm.param("api", "chat"), llm.param("stream", "true") == "true", llm.param("tokens", 48)
local prefix = llm.param("prefix", "")
function send(vu)
  local prompt = prefix .. ("Once upon a time %d %d"):format(vu.id, vu.request_id)
  local res
  if api == "chat" then
    res = llm.chat { messages = { { role = "user", content = prompt } }, max_tokens = tokens, stream = stream,
                     temperature = 0.8, seed = vu.request_id }
  else
    res = llm.complete { prompt = prompt, max_tokens = tokens, stream = stream, temperature = 0.8, seed = vu.request_id }
  end
  llm.check(res, { ["status 200"] = res.status == 200 })
end
`

// runLlama runs the scenario against the server and returns its result
// and per-request records.
func runLlama(t *testing.T, base string, sets ...string) (*result.Result, []map[string]any, string) {
	t.Helper()
	dir := t.TempDir()
	scenario := writeFile(t, dir, "llama.lua", llamaScenario)
	out, jsonl := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	args := []string{"run", scenario, "--target", base + "/v1", "--out", out, "--requests-jsonl", jsonl, "-q"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	stdout, stderr, code := runBinary(t, nil, args...)
	if code != 0 {
		t.Fatalf("run against llama-server exited %d:\n%s\n%s", code, stdout, stderr)
	}
	return loadResult(t, out), requestRecords(t, jsonl), stdout
}

// median is the middle of xs, the upper one of an even count; xs is
// left as it was.
func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// Chat and completions, streamed and not, against the real server: every
// request succeeds with the server's usage, and where it streams,
// llmload's TPOT is the server's own per request and its TTFT never less
// than the server's prompt processing.
func TestLlamaServerAgreesRequestByRequest(t *testing.T) {
	base := llamaServer(t)
	for _, api := range []string{"chat", "completions"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", api, stream), func(t *testing.T) {
				res, recs, _ := runLlama(t, base, "api="+api, fmt.Sprintf("stream=%v", stream))
				if len(recs) != 16 || res.Stages[0].OK != 16 {
					t.Fatalf("%d records, %d ok, want 16", len(recs), res.Stages[0].OK)
				}
				var diffs []float64
				for _, rec := range recs {
					if rec["tokens_source"] != "usage" || rec["input_tokens_source"] != "usage" {
						t.Errorf("tokens from %v/%v, want the server's usage", rec["tokens_source"], rec["input_tokens_source"])
					}
					srvPrompt, ok := num(rec, "server_prompt_ms")
					if !ok {
						t.Fatalf("no server timings in %v", rec)
					}
					if !stream {
						if _, ok := num(rec, "ttft_ms"); ok {
							t.Errorf("a TTFT for a request that was not streamed: %v", rec)
						}
						continue
					}
					ttft, _ := num(rec, "ttft_ms")
					if ttft < srvPrompt {
						t.Errorf("TTFT %.3f ms below the server's prompt processing %.3f ms", ttft, srvPrompt)
					}
					tpot, ok1 := num(rec, "tpot_ms")
					srvTPOT, ok2 := num(rec, "server_tpot_ms")
					if ok1 && ok2 {
						diffs = append(diffs, tpot-srvTPOT)
					}
				}
				if !stream {
					return
				}
				if len(diffs) < 12 {
					t.Fatalf("only %d requests with both TPOTs", len(diffs))
				}
				abs := make([]float64, len(diffs))
				for i, d := range diffs {
					abs[i] = max(d, -d)
				}
				t.Logf("TPOT − server's predicted_per_token_ms: median %+.4f ms, median |d| %.4f ms over %d requests", median(diffs), median(abs), len(diffs))
				if m := median(abs); m > 0.05 {
					t.Errorf("median |TPOT − server TPOT| %.4f ms, want ≤ 0.05 ms", m)
				}
			})
		}
	}
}

// A prompt that repeats its long prefix is served from llama.cpp's cache:
// the server processes fewer prompt tokens, and says so.
func TestLlamaServerPrefixCacheIsVisible(t *testing.T) {
	base := llamaServer(t)
	prefix := strings.Repeat("The little dog ran to the park and played with a red ball. ", 20)
	_, recs, _ := runLlama(t, base, "vus=1", "iterations=4", "prefix="+prefix, "tokens=8")
	var promptN, cached []float64
	for _, rec := range recs {
		p, _ := num(rec, "server_prompt_tokens")
		c, _ := num(rec, "server_cached_tokens")
		promptN, cached = append(promptN, p), append(cached, c)
	}
	if len(recs) != 4 || cached[len(cached)-1] <= 0 || promptN[len(promptN)-1] >= promptN[0] {
		t.Errorf("prompt tokens processed %v, cached %v: want the later requests served from the cache", promptN, cached)
	}
}

// More VUs than slots queue in the server, and its requests_deferred
// gauge shows it while llmload scrapes.
func TestLlamaServerQueueIsVisible(t *testing.T) {
	base := llamaServer(t)
	res, _, _ := runLlama(t, base, "vus=12", "iterations=3", "tokens=400", "metrics_url="+base+"/metrics")
	sm := res.ServerMetrics
	if sm == nil || sm.Scrapes == 0 {
		t.Fatalf("server metrics not scraped: %+v", sm)
	}
	deferred := sm.Lookup("llamacpp:requests_deferred")
	if deferred == nil || slices.Max(deferred.V) < 1 {
		t.Errorf("llamacpp:requests_deferred never above 0 with 12 VUs on 4 slots: %+v", deferred)
	}
}

// The robustness scenario's malformed requests, judged by a real server.
func TestLlamaServerDirtyDataVerdicts(t *testing.T) {
	base := llamaServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/robustness.lua", "--target", base+"/v1", "--out", out, "-q")
	if code != 0 && code != exitThreshold {
		t.Fatalf("robustness against llama-server exited %d:\n%s\n%s", code, stdout, stderr)
	}
	res := loadResult(t, out)
	if len(res.Robustness) == 0 {
		t.Fatalf("no robustness table:\n%s", stdout)
	}
	judged := 0
	for kind, r := range res.Robustness {
		if r.Count == 0 || r.Handled+r.Defects+r.Accepted+r.Canceled != r.Count {
			t.Errorf("%s: %+v", kind, r)
		}
		judged += int(r.Handled + r.Defects + r.Accepted)
	}
	if judged == 0 {
		t.Errorf("no dirty request got a verdict from the server:\n%s", stdout)
	}
	t.Log(stdout)
}

// The README's command: chat_mix against the real server, its metrics
// read beside: the summary names llama.cpp's running and waiting series.
func TestLlamaServerChatMixNamesItsQueue(t *testing.T) {
	base := llamaServer(t)
	stdout, stderr, code := runBinary(t, []string{"LLMLOAD_METRICS_URL=" + base + "/metrics"},
		"run", "../../scenarios/chat_mix.lua", "--target", base+"/v1", "--set", "duration=3s", "-q")
	if code != 0 {
		t.Fatalf("chat_mix against llama-server exited %d:\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"llama.cpp server", "running = llamacpp:requests_processing", "waiting =", "llamacpp:requests_deferred"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
}
