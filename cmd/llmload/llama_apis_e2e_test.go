package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
)

// Every API llmload speaks, against the real llama-server: what it
// measures of each (tokens from the server's usage, TTFT and TPOT where
// it streams, held against the server's own timings where llama.cpp
// sends them), and how it records what the server refuses, each the
// error class its answer calls for, with the server's message.
//
// What this llama.cpp build (.ci/llama-server.sh) sends, as looked at
// with curl (samples in engine/openai/testdata/llamacpp): usage on every
// API; timings in the last chunk of a chat or completions stream and in
// their answers not streamed, and beside the response of a Responses
// stream's response.completed, never with a Responses answer not
// streamed nor with Messages; embeddings only from a server started
// with --embeddings, which still serves the other APIs. It serves
// whatever model name a request asks for, answers a body that is not
// JSON with HTTP 500, a prompt beyond a slot's context with 400 before
// any event, streamed or not (an embeddings input beyond its batch of 512
// tokens with 500), a max_tokens beyond the context by generating until
// the context is full (a Responses answer so cut still says "completed"),
// and a wrong key with 401 "Invalid API Key", x-api-key taken as the
// Bearer token is. It closes its connection after each streamed answer,
// though it says keep-alive.

// llamaKey is the API key llamaGuarded wants.
const llamaKey = "sk-llmload-e2e-llama-0123456789"

// llamaGuardedCtx is the context of each of llamaGuarded's slots, in
// tokens.
const llamaGuardedCtx = 256

// llamaGuarded is the second shared server: embeddings on (mean pooling),
// an API key, and 2 slots of llamaGuardedCtx tokens, which a short prompt
// overflows and a short answer fills.
var llamaGuarded = llamaInstance{args: []string{"-c", strconv.Itoa(2 * llamaGuardedCtx), "-np", "2", "-t", "1",
	"--embeddings", "--pooling", "mean", "--api-key", llamaKey}}

// llamaAPIScenario sends one API's requests (%s is the call) from 2 VUs;
// with cases=errors each VU's iterations go through the cases that
// checkLlamaCase checks in turn, each tagged with its case; the overflow's
// prompt is about 12 tokens per long.
const llamaAPIScenario = `
local llm = require("llmload")
options = {
  target = { tokenizer = "none" },
  scenarios = { s = { executor = "per-vu-iterations", exec = "send", vus = 2,
                      iterations = llm.param("iterations", 6), max_duration = "1m" } },
}
local stream, tokens = llm.param("stream", "true") == "true", llm.param("tokens", 32)
local errors = llm.param("cases", "clean") == "errors"
local cases = { "malformed_json", "unknown_model", "overflow", "fill" }
local long = string.rep("The little dog ran to the park. ", llm.param("long", 60))
local pad = string.rep("The little dog ran to the park. ", llm.param("pad", 0))
function send(vu)
  local prompt = pad .. ("Once upon a time %%d %%d"):format(vu.id, vu.request_id)
  local case, dirty, n = "clean", nil, tokens
  if errors then
    case = cases[vu.iteration %% 4 + 1]
    if case == "malformed_json" or case == "unknown_model" then dirty = case end
    if case == "overflow" then prompt = long .. prompt end
    if case == "fill" then n = 1000 end
  end
  local tags = { case = case }
  local res = %s
end
`

// llamaCalls are each API's call in llamaAPIScenario.
var llamaCalls = map[string]string{
	"chat": `llm.chat { messages = { { role = "user", content = prompt } }, max_tokens = n, stream = stream,
    temperature = 0.8, seed = vu.request_id, dirty = dirty, tags = tags }`,
	"completions": `llm.complete { prompt = prompt, max_tokens = n, stream = stream, temperature = 0.8,
    seed = vu.request_id, dirty = dirty, tags = tags }`,
	"responses": `llm.respond { input = prompt, max_output_tokens = n, stream = stream, temperature = 0.8,
    dirty = dirty, tags = tags }`,
	"messages": `llm.messages { messages = { { role = "user", content = prompt } }, max_tokens = n, stream = stream,
    temperature = 0.8, dirty = dirty, tags = tags }`,
	"embeddings": `llm.embed { input = { prompt, "and a dog" }, tags = tags }`,
}

// runLlamaAPI runs api's scenario against base with env, and returns its
// exit code, result (nil when none was written), records and output.
func runLlamaAPI(t *testing.T, base, api string, env []string, sets ...string) (int, *result.Result, []map[string]any, string) {
	t.Helper()
	dir := t.TempDir()
	scenario := writeFile(t, dir, api+".lua", fmt.Sprintf(llamaAPIScenario, llamaCalls[api]))
	out, jsonl := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	args := []string{"run", scenario, "--target", base + "/v1", "--out", out, "--requests-jsonl", jsonl, "-q"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	stdout, stderr, code := runBinary(t, env, args...)
	output := stdout + stderr
	checkKeyStaysSecret(t, env, output, out, jsonl)
	if _, err := os.Stat(out); err != nil {
		return code, nil, nil, output
	}
	return code, loadResult(t, out), requestRecords(t, jsonl), output
}

// checkKeyStaysSecret: the API key env gives is in none of a run's
// output and files.
func checkKeyStaysSecret(t *testing.T, env []string, output string, files ...string) {
	t.Helper()
	for _, kv := range env {
		key, ok := strings.CutPrefix(kv, "LLMLOAD_API_KEY=")
		if !ok || key == "" {
			continue
		}
		texts := map[string]string{"the output": output}
		for _, f := range files {
			b, _ := os.ReadFile(f) // a file not written holds no key
			texts[filepath.Base(f)] = string(b)
		}
		for name, text := range texts {
			if strings.Contains(text, key) {
				t.Errorf("the API key is in %s", name)
			}
		}
	}
}

// recordCase is the case tag of a record.
func recordCase(rec map[string]any) string {
	tags, _ := rec["tags"].(map[string]any)
	c, _ := tags["case"].(string)
	return c
}

// Each API, streamed and not, against the real server: every request
// succeeds, with the server's usage for its tokens; a streamed one has a
// TTFT and a TPOT, one not streamed neither; and where llama.cpp sends
// its timings, llmload's figures agree with them request by request.
func TestLlamaAPIs(t *testing.T) {
	tests := []struct {
		api     string
		stream  bool
		timings bool // llama.cpp sends its timings
	}{
		{"chat", true, true},
		{"chat", false, true},
		{"completions", true, true},
		{"completions", false, true},
		{"responses", true, true},
		{"responses", false, false},
		{"messages", true, false},
		{"messages", false, false},
		{"embeddings", false, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s stream=%v", tc.api, tc.stream), func(t *testing.T) {
			base, env := llamaServer(t), []string(nil)
			if tc.api == "embeddings" {
				base, env = llamaGuarded.serve(t), []string{"LLMLOAD_API_KEY=" + llamaKey}
			}
			code, res, recs, output := runLlamaAPI(t, base, tc.api, env, fmt.Sprintf("stream=%v", tc.stream))
			if code != 0 || res == nil {
				t.Fatalf("exit %d:\n%s", code, output)
			}
			s := res.Stages[0]
			if s.OK != 12 || s.Failed != 0 || len(s.Errors) != 0 || len(recs) != 12 {
				t.Fatalf("%d ok, %d failed (%v), %d records; want 12 ok", s.OK, s.Failed, s.Errors, len(recs))
			}
			for _, rec := range recs {
				if rec["api"] != tc.api || rec["status"] != 200.0 || rec["streamed"] != tc.stream {
					t.Errorf("api %v, status %v, streamed %v; want %s, 200, %v", rec["api"], rec["status"], rec["streamed"], tc.api, tc.stream)
				}
			}
			if tc.api == "embeddings" {
				checkEmbeddings(t, s.Inputs, recs)
				return
			}
			checkGenerated(t, recs, tc.stream)
			checkServerTimings(t, recs, tc.stream, tc.timings)
			if tc.api == "messages" {
				checkMessagesCache(t, recs)
			}
		})
	}
}

// checkGenerated: tokens from usage, at most the 32 asked; a TTFT
// exactly where the request was streamed, and a TPOT there too, but for a
// few: on a busy machine llmload may read a whole answer at once, its
// events then stamped alike (the MACHINE-BUSY warning says so), which
// leaves no time between its first and last text to divide.
func checkGenerated(t *testing.T, recs []map[string]any, stream bool) {
	t.Helper()
	withTPOT := 0
	for _, rec := range recs {
		out, _ := num(rec, "output_tokens")
		in, _ := num(rec, "input_tokens")
		if rec["tokens_source"] != "usage" || rec["input_tokens_source"] != "usage" || out < 1 || out > 32 || in < 1 {
			t.Errorf("tokens %v in (%v), %v out (%v); want both from usage, 1 to 32 out",
				rec["input_tokens"], rec["input_tokens_source"], rec["output_tokens"], rec["tokens_source"])
		}
		_, ttft := num(rec, "ttft_ms")
		_, tpot := num(rec, "tpot_ms")
		if ttft != stream || (tpot && (!stream || out < 2)) {
			t.Errorf("TTFT %v, TPOT %v for %v output tokens, streamed %v", rec["ttft_ms"], rec["tpot_ms"], out, stream)
		}
		if tpot {
			withTPOT++
		}
	}
	if stream && withTPOT < len(recs)*3/4 {
		t.Errorf("%d of %d streamed requests with a TPOT, want nearly all", withTPOT, len(recs))
	}
}

// checkServerTimings holds each record against the server's timings of
// it, which it has exactly when llama.cpp sends them: the input tokens
// its usage gave are the ones it processed and took from its cache; its
// TTFT and E2E are no shorter than the server's prompt processing; its
// TPOT is the server's within a fifth, in the median over the requests
// (the two time the same tokens: a wrong count, or a wrong stamp, moves
// the ratio far more).
func checkServerTimings(t *testing.T, recs []map[string]any, stream, timings bool) {
	t.Helper()
	var ratios []float64
	for _, rec := range recs {
		prompt, ok := num(rec, "server_prompt_ms")
		if ok != timings {
			t.Fatalf("server timings %v, want them %v: %v", rec["server_prompt_ms"], timings, rec)
		}
		if !timings {
			continue
		}
		in, _ := num(rec, "input_tokens")
		cached, _ := num(rec, "cached_tokens")
		srvN, _ := num(rec, "server_prompt_tokens")
		srvCached, _ := num(rec, "server_cached_tokens")
		if in != srvN+srvCached || cached != srvCached {
			t.Errorf("usage: %v input tokens, %v cached; the server's timings: %v processed, %v cached", in, cached, srvN, srvCached)
		}
		e2e, _ := num(rec, "e2e_ms")
		ttft, _ := num(rec, "ttft_ms")
		if e2e < prompt || (stream && ttft < prompt) {
			t.Errorf("TTFT %v ms, E2E %v ms; the server took %v ms for the prompt alone", rec["ttft_ms"], e2e, prompt)
		}
		tpot, ok1 := num(rec, "tpot_ms")
		srvTPOT, ok2 := num(rec, "server_tpot_ms")
		if ok1 && ok2 && srvTPOT > 0 {
			ratios = append(ratios, tpot/srvTPOT)
		}
	}
	if !stream || !timings {
		return
	}
	if len(ratios) < len(recs)*3/4 {
		t.Fatalf("only %d of %d requests with both TPOTs", len(ratios), len(recs))
	}
	m := median(ratios)
	t.Logf("TPOT / the server's predicted_per_token_ms: median %.3f over %d requests", m, len(ratios))
	if m < 0.8 || m > 1.25 {
		t.Errorf("median TPOT / server TPOT %.3f, want within [0.8, 1.25]", m)
	}
}

// checkMessagesCache: llama.cpp's Messages usage gives the prompt tokens
// it took from its cache apart (cache_read_input_tokens) from the ones it
// processed (input_tokens); the input tokens are both, the cached ones a
// part of them, and after the first request the chat template's start
// comes from the cache.
func checkMessagesCache(t *testing.T, recs []map[string]any) {
	t.Helper()
	hits := 0
	for _, rec := range recs {
		in, _ := num(rec, "input_tokens")
		cached, _ := num(rec, "cached_tokens")
		if cached >= in {
			t.Errorf("%v cached of %v input tokens: the input should count the cached ones and more", cached, in)
		}
		if cached > 0 {
			hits++
		}
	}
	if hits < len(recs)/2 {
		t.Errorf("%d of %d requests with cached tokens; want most", hits, len(recs))
	}
}

// checkEmbeddings: two inputs embedded per request, their tokens from
// usage, end-to-end latency and no TTFT.
func checkEmbeddings(t *testing.T, inputs int64, recs []map[string]any) {
	t.Helper()
	if inputs != 24 {
		t.Errorf("%d inputs in the stage, want 24", inputs)
	}
	for _, rec := range recs {
		_, ttft := num(rec, "ttft_ms")
		e2e, _ := num(rec, "e2e_ms")
		in, _ := num(rec, "input_tokens")
		if rec["inputs"] != 2.0 || rec["input_tokens_source"] != "usage" || in < 2 || ttft || e2e <= 0 {
			t.Errorf("inputs %v, input tokens %v (%v), TTFT %v, E2E %v; want 2 inputs, tokens from usage, E2E only",
				rec["inputs"], rec["input_tokens"], rec["input_tokens_source"], rec["ttft_ms"], rec["e2e_ms"])
		}
	}
}

// What the real server refuses, API by API, streamed: a body that is not
// JSON (a dirty request) is its HTTP 500; a model name it does not have
// is served all the same; a prompt beyond a slot's context is its 400
// with its message, before any event; a max_tokens beyond the context is
// served until the context is full, the tokens its usage counts filling
// it exactly. Embeddings, which take no dirty kinds, have the prompt too
// long for the context alone, and shorter than the server's batch of 512
// tokens, beyond which it answers 500 ("too large to process") instead.
func TestLlamaAPIErrors(t *testing.T) {
	base := llamaGuarded.serve(t)
	for _, api := range []string{"chat", "completions", "responses", "messages", "embeddings"} {
		t.Run(api, func(t *testing.T) {
			long := "long=60"
			if api == "embeddings" {
				long = "long=30"
			}
			code, res, recs, output := runLlamaAPI(t, base, api, []string{"LLMLOAD_API_KEY=" + llamaKey},
				"cases=errors", "iterations=4", long)
			if code != 0 || res == nil {
				t.Fatalf("exit %d, want 0: the clean requests measured the server\n%s", code, output)
			}
			if len(recs) != 8 {
				t.Fatalf("%d records, want 8", len(recs))
			}
			for _, rec := range recs {
				checkLlamaCase(t, api, rec)
			}
			s := res.Stages[0]
			if got := s.Errors["http_4xx:400"]; got != 2 || len(s.Errors) != 1 {
				t.Errorf("stage errors %v, want http_4xx:400 twice (the prompts beyond the context)", s.Errors)
			}
			if api == "embeddings" {
				return
			}
			mj, um := res.Robustness["malformed_json"], res.Robustness["unknown_model"]
			if mj.Count != 2 || mj.Errors["http_5xx:500"] != 2 || mj.Defects != 2 || um.Count != 2 || um.Statuses[200] != 2 || um.Accepted != 2 {
				t.Errorf("robustness: malformed_json %+v, unknown_model %+v", mj, um)
			}
		})
	}
}

// llama.cpp's server closes its connection after each streamed answer,
// though it says keep-alive; the next request may meet that connection
// before the transport sees it closed. Each API, streamed, with a prompt
// of about 800 bytes, so that the body outgrows the transport's write
// buffer once the headers are in and the close shows only after part of
// it was written (the padding comes first, so that the server's prefix
// cache keeps the requests short): every request is served, none recorded
// as a network failure. Before llmload sent such a request again, 1 to 3
// of 120 chat requests were, in each of 5 runs.
func TestLlamaKeptAliveConnectionsClosed(t *testing.T) {
	base := llamaServer(t)
	for _, api := range []string{"chat", "completions", "responses", "messages"} {
		t.Run(api, func(t *testing.T) {
			code, res, _, output := runLlamaAPI(t, base, api, nil, "iterations=60", "pad=25", "tokens=4")
			if code != 0 || res == nil {
				t.Fatalf("exit %d:\n%s", code, output)
			}
			if s := res.Stages[0]; s.OK != 120 || s.Failed != 0 {
				t.Errorf("%d ok, %d failed (%v); want 120 ok", s.OK, s.Failed, s.Errors)
			}
		})
	}
}

// checkLlamaCase checks one record of TestLlamaAPIErrors by its case.
func checkLlamaCase(t *testing.T, api string, rec map[string]any) {
	t.Helper()
	c, msg := recordCase(rec), fmt.Sprint(rec["error_message"])
	class, status := rec["error_class"], rec["status"]
	if api == "embeddings" && c != "overflow" {
		c = "clean"
	}
	switch c {
	case "malformed_json":
		if class != "http_5xx:500" || status != 500.0 || !strings.Contains(msg, "[json.exception.parse_error.101] parse error") {
			t.Errorf("malformed JSON: %v %v %q, want http_5xx:500 with llama.cpp's parse error", status, class, msg)
		}
	case "overflow":
		want := fmt.Sprintf("exceeds the available context size (%d tokens)", llamaGuardedCtx)
		if api == "embeddings" {
			want = fmt.Sprintf("is larger than the max context size (%d tokens)", llamaGuardedCtx)
		}
		if class != "http_4xx:400" || status != 400.0 || !strings.Contains(msg, want) {
			t.Errorf("prompt beyond the context: %v %v %q, want http_4xx:400 saying %q", status, class, msg, want)
		}
		if _, ok := num(rec, "ttft_ms"); ok {
			t.Errorf("a TTFT for a refused request: %v", rec)
		}
	case "fill":
		in, _ := num(rec, "input_tokens")
		out, _ := num(rec, "output_tokens")
		if class != nil || rec["tokens_source"] != "usage" || in+out != llamaGuardedCtx {
			t.Errorf("max tokens beyond the context: %v, %v input + %v output tokens (%v); want served, filling the %d-token context",
				class, in, out, rec["tokens_source"], llamaGuardedCtx)
		}
	default: // unknown_model, clean
		if class != nil || status != 200.0 {
			t.Errorf("%s: %v %v %q, want served", c, status, class, msg)
		}
	}
}

// A wrong key, or none, on a server started with --api-key: llmload's
// preflight stops before any load, says what it sent (the Messages API's
// key in x-api-key) and what the server said, and never prints the key.
func TestLlamaAPIWrongKey(t *testing.T) {
	base := llamaGuarded.serve(t)
	const wrong = "sk-wrong-key-for-llama-e2e-WXYZ"
	tests := []struct {
		api, key, want string
	}{
		{"chat", wrong, "target rejected the API key (HTTP 401): llmload sent a Bearer key ending …WXYZ"},
		{"responses", wrong, "target rejected the API key (HTTP 401): llmload sent a Bearer key ending …WXYZ"},
		{"messages", wrong, "target rejected the API key (HTTP 401): llmload sent a key in x-api-key ending …WXYZ"},
		{"embeddings", wrong, "target rejected the API key (HTTP 401): llmload sent a Bearer key ending …WXYZ"},
		{"chat", "", "target requires an API key (HTTP 401); llmload sent no credentials"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s key=%v", tc.api, tc.key != ""), func(t *testing.T) {
			var env []string
			if tc.key != "" {
				env = []string{"LLMLOAD_API_KEY=" + tc.key}
			}
			code, _, _, output := runLlamaAPI(t, base, tc.api, env)
			if code != exitError || !strings.Contains(output, tc.want) || !strings.Contains(output, "no load sent") {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, exitError, tc.want, output)
			}
			if tc.key != "" && !strings.Contains(output, "(server: Invalid API Key)") {
				t.Errorf("want the server's message:\n%s", output)
			}
		})
	}
}

// llamaDyingScenario streams one long answer per VU, each VU another API.
const llamaDyingScenario = `
local llm = require("llmload")
options = {
  target = { tokenizer = "none" },
  scenarios = { s = { executor = "per-vu-iterations", exec = "send", vus = 4, iterations = 1, max_duration = "1m" } },
}
function send(vu)
  local prompt, n = "Once upon a time " .. vu.id, 4000
  if vu.id == 1 then
    llm.chat { messages = { { role = "user", content = prompt } }, max_tokens = n, ignore_eos = true }
  elseif vu.id == 2 then
    llm.complete { prompt = prompt, max_tokens = n, ignore_eos = true }
  elseif vu.id == 3 then
    llm.respond { input = prompt, max_output_tokens = n, extra = { ignore_eos = true } }
  else
    llm.messages { messages = { { role = "user", content = prompt } }, max_tokens = n, extra = { ignore_eos = true } }
  end
end
`

// A server that dies in the middle of four streams, one per API: each
// request is recorded as truncated, after the text it had streamed, and
// llmload says it measured nothing and still writes a complete result.
func TestLlamaServerDiesMidStream(t *testing.T) {
	bin, model := llamaPathsOrSkip(t)
	srv, base, err := startLlama(bin, model, "-c", "8192", "-np", "4", "-t", "1", "--metrics")
	if srv != nil {
		t.Cleanup(func() { srv.cmd.Process.Kill(); <-srv.exited })
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, jsonl := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	run := startBinary(t, "run", writeFile(t, dir, "dying.lua", llamaDyingScenario), "--target", base+"/v1",
		"--out", out, "--requests-jsonl", jsonl, "-q")
	run.waitFor(t, "4 requests in the server's slots", func() bool { return llamaGauge(base, "llamacpp:requests_processing") == 4 })
	time.Sleep(300 * time.Millisecond) // some text streamed, far from the 4,000 tokens' end
	srv.cmd.Process.Kill()
	select {
	case <-run.exited:
	case <-time.After(time.Minute):
		t.Fatal("llmload still running a minute after the server died")
	}
	if run.code != exitError || !strings.Contains(run.stderr.String(), "nothing measured") {
		t.Errorf("exit %d, want %d saying nothing was measured:\n%s", run.code, exitError, run.stderr.String())
	}
	res := loadResult(t, out)
	if !res.Run.Complete || res.Stages[0].Errors["stream_truncated"] != 4 {
		t.Errorf("complete %v, errors %v; want a complete result, 4 stream_truncated", res.Run.Complete, res.Stages[0].Errors)
	}
	apis := map[string]bool{}
	for _, rec := range requestRecords(t, jsonl) {
		apis[fmt.Sprint(rec["api"])] = true
		_, ttft := num(rec, "ttft_ms")
		if rec["error_class"] != "stream_truncated" || rec["status"] != 200.0 || !ttft || rec["error_message"] == nil {
			t.Errorf("%v: %v %v %v, TTFT %v; want a 200 truncated after its first text", rec["api"], rec["status"],
				rec["error_class"], rec["error_message"], rec["ttft_ms"])
		}
	}
	if len(apis) != 4 {
		t.Errorf("records of %v, want one per API", apis)
	}
}

// llamaGauge reads a gauge of the server's /metrics; -1 when it cannot.
func llamaGauge(base, name string) float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}
