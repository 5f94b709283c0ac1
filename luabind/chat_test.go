package luabind

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

func chatVU(t *testing.T, result engine.Result) (*vm.VU, *fakeClient, *fakeSink) {
	t.Helper()
	s := mustCompile(t, "testdata/chat.lua", Options{})
	client := &fakeClient{result: result}
	sink := &fakeSink{}
	return newVU(t, s, api.RunnerConfig{Client: client, Sink: sink, Model: "default-model"}, 1), client, sink
}

func TestChatRequest(t *testing.T) {
	v, client, _ := chatVU(t, engine.Result{Status: 200})
	mustRun(t, v, "full")
	mustRun(t, v, "minimal")
	mustRun(t, v, "stop_list")
	reqs := client.requests()
	if got, want := len(reqs), 3; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
	temp, topP, seed := 0.0, 0.9, int64(42)
	want := &engine.ChatRequest{
		Model:       "other",
		Messages:    []engine.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
		MaxTokens:   5,
		Temperature: &temp,
		TopP:        &topP,
		Seed:        &seed,
		Stop:        []string{"END"},
		Extra: map[string]any{
			"top_k": int64(5), "stream_options": map[string]any{"include_usage": true},
			"logit_bias": map[string]any{"50256": int64(-100)}, "list": []any{int64(1), 2.5, "x"},
			"empty": map[string]any{}, "big": int64(1 << 40),
		},
		Tags: map[string]string{"prompt": "short", "n": "3"},
	}
	if !reflect.DeepEqual(reqs[0], want) {
		got, _ := json.Marshal(reqs[0])
		w, _ := json.Marshal(want)
		t.Errorf("full request =\n%s\nwant\n%s", got, w)
	}
	min := &engine.ChatRequest{Model: "default-model", Messages: []engine.Message{{Role: "user", Content: "hi"}}}
	if !reflect.DeepEqual(reqs[1], min) {
		t.Errorf("minimal request = %+v, want %+v", reqs[1], min)
	}
	if got, want := reqs[2].Stop, []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("stop = %q, want %q", got, want)
	}
}

func TestCompleteRequest(t *testing.T) {
	temp, topP, seed := 0.5, 1.0, int64(9)
	user := []engine.Message{{Role: "user", Content: "hi"}}
	tests := []struct {
		exec string
		want *engine.ChatRequest
	}{
		{"complete_full", &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "other",
			Prompt: "Once upon a time", NoStream: true, MaxTokens: 7, Temperature: &temp, TopP: &topP, Seed: &seed,
			Stop: []string{"\n"}, Extra: map[string]any{"echo": false}, Tags: map[string]string{"prompt": "story"}}},
		{"complete_minimal", &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "default-model"}},
		{"chat_no_stream", &engine.ChatRequest{Model: "default-model", Messages: user, NoStream: true}},
		{"chat_stream", &engine.ChatRequest{Model: "default-model", Messages: user}},
	}
	for _, tt := range tests {
		t.Run(tt.exec, func(t *testing.T) {
			v, client, _ := chatVU(t, engine.Result{Status: 200})
			mustRun(t, v, tt.exec)
			reqs := client.requests()
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("%d requests, want %d", got, want)
			}
			if !reflect.DeepEqual(reqs[0], tt.want) {
				got, _ := json.Marshal(reqs[0])
				w, _ := json.Marshal(tt.want)
				t.Errorf("request =\n%s\nwant\n%s", got, w)
			}
		})
	}
}

func TestCompleteSample(t *testing.T) {
	v, _, sink := chatVU(t, engine.Result{Status: 200, Text: "secret story", OutputTokens: 3})
	mustRun(t, v, "complete_full")
	samples := sink.all()
	if got, want := len(samples), 1; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	want := engine.Sample{Scenario: "s", Stage: "st", Tags: map[string]string{"suite": "chat", "prompt": "story"},
		Result: engine.Result{Status: 200, OutputTokens: 3}}
	if !reflect.DeepEqual(samples[0], want) {
		t.Errorf("sample = %+v, want %+v", samples[0], want)
	}
}

func TestCompleteOutsideIteration(t *testing.T) {
	tests := []struct {
		name, src string
		cfg       api.RunnerConfig
		want      string
	}{
		{"at init", "local llm = require('llmload')\nllm.complete { prompt = 'x' }\n", api.RunnerConfig{}, ":2: llm.complete can only be called inside an iteration"},
		{"no client", "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\n" +
			"function iteration(vu) llm.complete { prompt = 'x' } end\n", api.RunnerConfig{}, ":3: llm.complete: no client configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "c.lua", tt.src)
			s, err := Compile(path, Options{})
			if err == nil {
				v := newVU(t, s, tt.cfg, 1)
				err = run(t, v, ShorthandExec)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestChatRequestErrors(t *testing.T) {
	v, client, sink := chatVU(t, engine.Result{Status: 200})
	tests := map[string]string{
		"typo":            "llm.chat.max_token: unknown key (did you mean max_tokens?)",
		"no_messages":     "llm.chat.messages: required",
		"empty_messages":  "llm.chat.messages: needs at least one message",
		"no_role":         "llm.chat.messages[1].role: required",
		"message_typo":    "llm.chat.messages[1].contnet: unknown key (did you mean content?)",
		"bad_temperature": "llm.chat.temperature: expected number, got string",
		"bad_stop":        "llm.chat.stop[2]: expected string, got number",
		"bad_extra":       "llm.chat.extra.f: a function cannot be sent as JSON",
		"extra_list":      "llm.chat.extra: expected a table with string keys, got a list",
		"cyclic_extra":    "llm.chat.extra.t.self: a table cannot contain itself",
		"not_a_table":     "bad argument #1 to chat (table expected, got string)",
		"bad_stream":      "llm.chat.stream: expected boolean, got string",

		"no_prompt":            "llm.complete.prompt: required",
		"prompt_number":        "llm.complete.prompt: expected string, got number",
		"prompt_typo":          "llm.complete.promt: unknown key (did you mean prompt?)",
		"complete_messages":    "llm.complete.messages: unknown key (valid keys: dirty, extra, headers, ignore_eos, max_tokens, min_tokens, model, prompt, seed, stop, stream, tags, target, temperature, top_p)",
		"complete_bad_stream":  "llm.complete.stream: expected boolean, got number",
		"complete_not_a_table": "bad argument #1 to complete (table expected, got string)",
	}
	for exec, want := range tests {
		err := run(t, v, exec)
		if err == nil {
			t.Errorf("%s: no error, want %q", exec, want)
			continue
		}
		if got := err.Error(); !strings.HasPrefix(got, "testdata/chat.lua:") || !strings.Contains(got, want) {
			t.Errorf("%s: error = %q, want testdata/chat.lua:<line>: ...%s", exec, got, want)
		}
	}
	if n := len(client.requests()) + len(sink.all()); n != 0 {
		t.Errorf("bad requests reached the client or sink (%d)", n)
	}
}

func TestChatResult(t *testing.T) {
	ok := engine.Result{Status: 200, TTFB: 5 * time.Millisecond, TTFT: 12500 * time.Microsecond,
		TTFC: 30 * time.Millisecond, E2E: 100 * time.Millisecond, TPOT: 2 * time.Millisecond,
		InputTokens: 9, InputTokensSource: engine.TokensFromTokenizer, OutputTokens: 40, ReasoningTokens: 12,
		TokensSource: engine.TokensFromUsage, FinishReason: "stop", Text: "hello", Streamed: true}
	failed := engine.Result{Status: 503, TTFB: 3 * time.Millisecond, Streamed: true,
		Err: &engine.Error{Class: "http_5xx:503", Message: "overloaded"}}
	unstreamed := engine.Result{Status: 200, TTFB: 40 * time.Millisecond, E2E: 40 * time.Millisecond,
		OutputTokens: 3, InputTokens: 2, TokensSource: engine.TokensFromUsage,
		InputTokensSource: engine.TokensFromUsage, FinishReason: "length", Text: "abc"}
	tests := []struct {
		name   string
		exec   string
		result engine.Result
		want   map[string]lua.LValue
		errTbl map[string]lua.LValue
	}{
		{"ok", "full", ok, map[string]lua.LValue{"status": lua.LNumber(200), "ok": lua.LTrue, "text": lua.LString("hello"),
			"ttfb_ms": lua.LNumber(5), "ttft_ms": lua.LNumber(12.5), "ttfc_ms": lua.LNumber(30), "e2e_ms": lua.LNumber(100),
			"tpot_ms": lua.LNumber(2), "input_tokens": lua.LNumber(9), "output_tokens": lua.LNumber(40),
			"reasoning_tokens": lua.LNumber(12), "tokens_source": lua.LString("usage"),
			"input_tokens_source": lua.LString("tokenizer"), "streamed": lua.LTrue,
			"finish_reason": lua.LString("stop"), "error": lua.LNil}, nil},
		{"failed", "full", failed, map[string]lua.LValue{"status": lua.LNumber(503), "ok": lua.LFalse, "text": lua.LString(""),
			"ttfb_ms": lua.LNumber(3), "ttft_ms": lua.LNil, "ttfc_ms": lua.LNil, "e2e_ms": lua.LNil, "tpot_ms": lua.LNil,
			"output_tokens": lua.LNumber(0), "reasoning_tokens": lua.LNumber(0), "tokens_source": lua.LNil,
			"input_tokens_source": lua.LNil, "streamed": lua.LTrue, "finish_reason": lua.LNil},
			map[string]lua.LValue{"class": lua.LString("http_5xx:503"), "message": lua.LString("overloaded")}},
		{"not streamed", "complete_full", unstreamed, map[string]lua.LValue{"status": lua.LNumber(200), "ok": lua.LTrue,
			"text": lua.LString("abc"), "streamed": lua.LFalse, "ttfb_ms": lua.LNumber(40), "e2e_ms": lua.LNumber(40),
			"ttft_ms": lua.LNil, "ttfc_ms": lua.LNil, "tpot_ms": lua.LNil, "output_tokens": lua.LNumber(3),
			"input_tokens": lua.LNumber(2), "reasoning_tokens": lua.LNumber(0), "tokens_source": lua.LString("usage"),
			"input_tokens_source": lua.LString("usage"), "finish_reason": lua.LString("length"), "error": lua.LNil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _, _ := chatVU(t, tt.result)
			mustRun(t, v, tt.exec)
			res, isTbl := v.L.GetGlobal("res").(*lua.LTable)
			if !isTbl {
				t.Fatalf("res is %s, want table", v.L.GetGlobal("res").Type())
			}
			for k, w := range tt.want {
				if got := res.RawGetString(k); got != w {
					t.Errorf("res.%s = %v, want %v", k, got, w)
				}
			}
			for k, w := range tt.errTbl {
				e, _ := res.RawGetString("error").(*lua.LTable)
				if e == nil {
					t.Fatalf("res.error is nil")
				}
				if got := e.RawGetString(k); got != w {
					t.Errorf("res.error.%s = %v, want %v", k, got, w)
				}
			}
		})
	}
}

func TestChatSample(t *testing.T) {
	v, _, sink := chatVU(t, engine.Result{Status: 200, Text: "secret answer", OutputTokens: 3})
	scheduled := time.Unix(1700000000, 0)
	it := engine.Iteration{Scenario: "s", Stage: "s", Exec: "full", VUID: 1, Warmup: true, Scheduled: scheduled}
	if err := v.RunIteration(testContext(t), it); err != nil {
		t.Fatal(err)
	}
	samples := sink.all()
	if got, want := len(samples), 1; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	want := engine.Sample{Scenario: "s", Stage: "s", Warmup: true, Scheduled: scheduled,
		Tags:   map[string]string{"suite": "chat", "prompt": "short", "n": "3"},
		Result: engine.Result{Status: 200, OutputTokens: 3}}
	if !reflect.DeepEqual(samples[0], want) {
		t.Errorf("sample = %+v, want %+v", samples[0], want)
	}
}

func TestChatWithoutClient(t *testing.T) {
	s := mustCompile(t, "testdata/chat.lua", Options{})
	v := newVU(t, s, api.RunnerConfig{}, 1)
	err := run(t, v, "minimal")
	if err == nil || !strings.Contains(err.Error(), "llm.chat: no client configured") {
		t.Errorf("error = %v, want no client configured", err)
	}
}

// BenchmarkChatIteration measures what Lua adds to one request: an
// iteration of testdata/basic.lua (pool, chat table, result, check) with a
// client that answers at once.
func BenchmarkChatIteration(b *testing.B) {
	s, err := Compile("testdata/basic.lua", Options{})
	if err != nil {
		b.Fatal(err)
	}
	client := &fakeClient{result: engine.Result{Status: 200, TTFT: time.Millisecond}}
	v, err := s.NewRunner(api.RunnerConfig{Client: client}).NewVU(context.Background(), 1)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	it := engine.Iteration{Scenario: "sweep", Stage: "c1", Exec: "chat", VUID: 1}
	for b.Loop() {
		client.reqs = client.reqs[:0]
		if err := v.RunIteration(context.Background(), it); err != nil {
			b.Fatal(err)
		}
	}
}

func TestChatScheduledOnFirstSampleOnly(t *testing.T) {
	v, _, sink := chatVU(t, engine.Result{Status: 200})
	scheduled := time.Unix(1700000000, 0)
	for range 2 {
		it := engine.Iteration{Scenario: "s", Stage: "s", Exec: "two", VUID: 1, Scheduled: scheduled}
		if err := v.RunIteration(testContext(t), it); err != nil {
			t.Fatal(err)
		}
	}
	samples := sink.all()
	if got, want := len(samples), 4; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	for i, want := range []time.Time{scheduled, {}, scheduled, {}} {
		if got := samples[i].Scheduled; !got.Equal(want) {
			t.Errorf("sample %d: Scheduled = %v, want %v", i, got, want)
		}
	}
}

func TestChatInSetupIsNotRecorded(t *testing.T) {
	path := writeScript(t, "s.lua", "local llm = require('llmload')\noptions = { vus = 1, duration = '1s' }\n"+
		"function iteration(vu) end\nfunction setup() llm.chat { messages = { { role = 'user', content = 'x' } } } end\n")
	client := &fakeClient{result: engine.Result{Status: 200}}
	sink := &fakeSink{}
	_, lc := lifecycleRunner(t, path, api.RunnerConfig{Client: client, Sink: sink})
	if err := lc.Setup(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(client.requests()), 1; got != want {
		t.Errorf("%d requests, want %d", got, want)
	}
	if got := len(sink.all()); got != 0 {
		t.Errorf("%d samples recorded from setup, want 0", got)
	}
}

// A request the back-off held back until its VU stopped never reached the
// server: it must not count as a failed request.
func TestChatNotSentIsNotRecorded(t *testing.T) {
	v, _, sink := chatVU(t, engine.Result{NotSent: true, Err: &engine.Error{Class: engine.ErrCanceled, Message: "not sent"}})
	it := engine.Iteration{Scenario: "s", Stage: "s", Exec: "full", VUID: 1}
	if err := v.RunIteration(testContext(t), it); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.all()); got != 0 {
		t.Errorf("%d samples recorded for a request never sent, want 0", got)
	}
}
