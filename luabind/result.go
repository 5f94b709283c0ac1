package luabind

import (
	"time"

	"github.com/llmload/llmload/engine"
	lua "github.com/yuin/gopher-lua"
)

// resultTable is what llm.chat and llm.complete return: status, ok, text,
// streamed, ttfb_ms, ttft_ms, ttfc_ms, tpot_ms, e2e_ms, output_tokens,
// input_tokens, reasoning_tokens, tokens_source, input_tokens_source,
// finish_reason and error ({class=, message=}, nil on success). Times the
// client did not measure, and sources and reasons it does not know, are
// nil rather than 0 or "", so a script cannot mistake them for instant or
// known.
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
	if r.Err != nil {
		e := L.CreateTable(0, 2)
		e.RawSetString("class", lua.LString(r.Err.Class))
		e.RawSetString("message", lua.LString(r.Err.Message))
		t.RawSetString("error", e)
	}
	return t
}
