package api

import (
	"time"

	"github.com/llmload/llmload/engine"
	lua "github.com/yuin/gopher-lua"
)

// resultTable is what llm.chat, llm.complete, llm.respond, llm.messages
// and llm.embed return: status, ok, text, streamed, ttfb_ms, ttft_ms,
// ttfc_ms, tpot_ms, e2e_ms, output_tokens, input_tokens,
// reasoning_tokens, tokens_source, input_tokens_source, finish_reason,
// api (the endpoint: chat, completions, responses, messages, embeddings),
// tool_calls ({ {id=, name=, arguments=}, ... } when the answer called
// tools), inputs and dimensions (embeddings) and error ({class=,
// message=}, nil on success). Times the client did not measure, and
// sources and reasons it does not know, are nil rather than 0 or "", so a
// script cannot mistake them for instant or known.
func resultTable(L *lua.LState, r *engine.Result) *lua.LTable {
	t := L.CreateTable(0, 16)
	t.RawSetString("status", lua.LNumber(r.Status))
	t.RawSetString("ok", lua.LBool(r.OK()))
	t.RawSetString("text", lua.LString(r.Text))
	t.RawSetString("streamed", lua.LBool(r.Streamed))
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"ttft_ms", r.TTFT}, {"ttfc_ms", r.TTFC}, {"tpot_ms", r.TPOT}, {"e2e_ms", r.E2E}, {"ttfb_ms", r.TTFB}} {
		if f.d > 0 {
			t.RawSetString(f.key, lua.LNumber(float64(f.d)/float64(time.Millisecond)))
		}
	}
	t.RawSetString("output_tokens", lua.LNumber(r.OutputTokens))
	t.RawSetString("input_tokens", lua.LNumber(r.InputTokens))
	t.RawSetString("reasoning_tokens", lua.LNumber(r.ReasoningTokens))
	for _, f := range []struct{ key, s string }{{"tokens_source", r.TokensSource},
		{"input_tokens_source", r.InputTokensSource}, {"finish_reason", r.FinishReason}} {
		if f.s != "" {
			t.RawSetString(f.key, lua.LString(f.s))
		}
	}
	if r.API != "" {
		t.RawSetString("api", lua.LString(r.API))
	}
	if r.Target != "" {
		t.RawSetString("target", lua.LString(r.Target))
	}
	if len(r.ToolCalls) > 0 {
		t.RawSetString("tool_calls", toolCallsTable(L, r.ToolCalls))
	}
	if r.Inputs > 0 {
		t.RawSetString("inputs", lua.LNumber(r.Inputs))
		t.RawSetString("dimensions", lua.LNumber(r.Dimensions))
	}
	mediaFields(t, r)
	if r.Err != nil {
		e := L.CreateTable(0, 2)
		e.RawSetString("class", lua.LString(r.Err.Class))
		e.RawSetString("message", lua.LString(r.Err.Message))
		t.RawSetString("error", e)
	}
	return t
}

// toolCallsTable is a result's tool_calls, in the shape a message's
// tool_calls takes, so a script can send them back.
func toolCallsTable(L *lua.LState, calls []engine.ToolCall) *lua.LTable {
	t := L.CreateTable(len(calls), 0)
	for _, c := range calls {
		e := L.CreateTable(0, 3)
		e.RawSetString("id", lua.LString(c.ID))
		e.RawSetString("name", lua.LString(c.Name))
		e.RawSetString("arguments", lua.LString(c.Arguments))
		t.Append(e)
	}
	return t
}

// mediaFields are a result's figures of media: images, audios, videos
// (the parts sent), audio_in_seconds, body_bytes, encode_ms and
// upload_ms (client-side, outside TTFT, and the body's upload inside it),
// media_tokens (the server's prompt tokens beyond the text's), and for
// speech audio_seconds, audio_bytes and rtf (audio seconds per wall
// second). Each is set only when measured.
func mediaFields(t *lua.LTable, r *engine.Result) {
	for _, f := range []struct {
		key string
		n   int
	}{{"images", r.Images}, {"audios", r.Audios}, {"videos", r.Videos}, {"media_tokens", r.MediaTokens}} {
		if f.n > 0 {
			t.RawSetString(f.key, lua.LNumber(f.n))
		}
	}
	if r.BodyBytes > 0 {
		t.RawSetString("body_bytes", lua.LNumber(r.BodyBytes))
	}
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"encode_ms", r.Encode}, {"upload_ms", r.Upload}} {
		if f.d > 0 {
			t.RawSetString(f.key, lua.LNumber(float64(f.d)/float64(time.Millisecond)))
		}
	}
	if r.AudioIn > 0 {
		t.RawSetString("audio_in_seconds", lua.LNumber(r.AudioIn))
	}
	if r.AudioBytes > 0 || r.AudioOut > 0 {
		t.RawSetString("audio_seconds", lua.LNumber(r.AudioOut))
		t.RawSetString("audio_bytes", lua.LNumber(r.AudioBytes))
		if r.E2E > 0 && r.AudioOut > 0 {
			t.RawSetString("rtf", lua.LNumber(r.AudioOut/r.E2E.Seconds()))
		}
	}
}
