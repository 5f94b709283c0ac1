package luabind

import (
	"errors"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	lua "github.com/yuin/gopher-lua"
)

var (
	chatKeys    = []string{"messages", "model", "max_tokens", "temperature", "top_p", "seed", "stop", "extra", "tags"}
	messageKeys = []string{"role", "content"}
)

// chat implements llm.chat{ messages = {{role=, content=}, ...}, model=?,
// max_tokens=?, temperature=?, top_p=?, seed=?, stop=?, extra=?, tags=? }
// -> result. It sends one request, records its sample and returns status,
// ok, text, ttft_ms, tpot_ms, e2e_ms, ttfb_ms, output_tokens, input_tokens,
// finish_reason and error ({class=, message=}, nil on success). A failed
// request is data, not a Lua error; a malformed table is a Lua error. It
// works in iterations and in setup/teardown, whose samples are not
// recorded; at init it is an error.
func (m *module) chat(L *lua.LState) int {
	if m.phase != phaseIteration && m.phase != phaseLifecycle {
		L.RaiseError("llm.chat can only be called inside an iteration, setup() or teardown()")
	}
	if m.cfg == nil || m.cfg.Client == nil {
		L.RaiseError("llm.chat: no client configured")
	}
	req, err := m.chatRequest(L.CheckTable(1))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	res := m.cfg.Client.Chat(m.ctx, req)
	if res == nil {
		L.RaiseError("llm.chat: the client returned no result")
	}
	m.recordSample(req, res)
	L.Push(resultTable(L, res))
	return 1
}

// chatRequest validates a llm.chat table into a request.
func (m *module) chatRequest(tbl *lua.LTable) (*engine.ChatRequest, error) {
	const path = "llm.chat"
	d := &decoder{}
	f := d.record(path, tbl, chatKeys)
	req := &engine.ChatRequest{Model: m.cfg.Model}
	if v := f["messages"]; v != nil {
		req.Messages = d.messages(child(path, "messages"), v)
	} else {
		d.errorf(child(path, "messages"), "required")
	}
	if v := f["model"]; v != nil {
		if s := d.str(child(path, "model"), v); s != "" {
			req.Model = s
		}
	}
	if v := f["max_tokens"]; v != nil {
		req.MaxTokens = d.count(child(path, "max_tokens"), v, 0)
	}
	req.Temperature = d.optNumber(child(path, "temperature"), f["temperature"])
	req.TopP = d.optNumber(child(path, "top_p"), f["top_p"])
	if v := f["seed"]; v != nil {
		if n, ok := d.integer(child(path, "seed"), v); ok {
			req.Seed = &n
		}
	}
	if v := f["stop"]; v != nil {
		req.Stop = d.stop(child(path, "stop"), v)
	}
	if v := f["extra"]; v != nil {
		req.Extra = d.jsonObject(child(path, "extra"), v)
	}
	if v := f["tags"]; v != nil {
		req.Tags = d.stringMap(child(path, "tags"), v)
	}
	if len(d.errs) > 0 {
		return nil, errors.New(strings.Join(d.errs, "; "))
	}
	return req, nil
}

func (d *decoder) messages(path string, v lua.LValue) []engine.Message {
	items := d.list(path, v)
	if items != nil && len(items) == 0 {
		d.errorf(path, "needs at least one message")
	}
	msgs := make([]engine.Message, 0, len(items))
	for i, item := range items {
		p := index(path, i+1)
		f := d.record(p, item, messageKeys)
		if f == nil {
			continue
		}
		var msg engine.Message
		for _, k := range messageKeys {
			if f[k] == nil {
				d.errorf(child(p, k), "required")
			}
		}
		if f["role"] != nil {
			msg.Role = d.str(child(p, "role"), f["role"])
		}
		if f["content"] != nil {
			msg.Content = d.str(child(p, "content"), f["content"])
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// optNumber reads an optional number; 0 is kept, because temperature = 0
// (greedy decoding) differs from leaving the server's default.
func (d *decoder) optNumber(path string, v lua.LValue) *float64 {
	if v == nil {
		return nil
	}
	n, ok := v.(lua.LNumber)
	if !ok {
		d.errorf(path, "expected number, got %s", v.Type())
		return nil
	}
	f := float64(n)
	return &f
}

// stop accepts one stop string or a list of them.
func (d *decoder) stop(path string, v lua.LValue) []string {
	if s, ok := v.(lua.LString); ok {
		return []string{string(s)}
	}
	if _, ok := v.(*lua.LTable); !ok {
		d.errorf(path, "expected string or list of strings, got %s", v.Type())
		return nil
	}
	items := d.list(path, v)
	out := make([]string, 0, len(items))
	for i, item := range items {
		out = append(out, d.str(index(path, i+1), item))
	}
	return out
}

// recordSample hands the request's sample to the sink, labelled with the
// iteration's scenario and stage and the scenario's and request's tags.
// Only the iteration's first request carries its intended start: later
// ones were not scheduled, they follow the first.
func (m *module) recordSample(req *engine.ChatRequest, res *engine.Result) {
	if m.cfg.Sink == nil || m.it == nil {
		return
	}
	s := engine.Sample{
		Scenario: m.it.Scenario,
		Stage:    m.it.Stage,
		Tags:     mergeTags(m.script.tags[m.it.Scenario], req.Tags),
		Warmup:   m.it.Warmup,
		Result:   *res,
	}
	if !m.scheduled {
		s.Scheduled, m.scheduled = m.it.Scheduled, true
	}
	s.Text = ""
	m.cfg.Sink.Sample(s)
}

// mergeTags returns a new map of base overlaid with over, nil when both
// are empty; request tags win over scenario tags.
func mergeTags(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// resultTable is what llm.chat returns; times the client did not measure
// are nil rather than 0, so a script cannot mistake them for instant.
func resultTable(L *lua.LState, r *engine.Result) *lua.LTable {
	t := L.CreateTable(0, 12)
	t.RawSetString("status", lua.LNumber(r.Status))
	t.RawSetString("ok", lua.LBool(r.OK()))
	t.RawSetString("text", lua.LString(r.Text))
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"ttft_ms", r.TTFT}, {"tpot_ms", r.TPOT}, {"e2e_ms", r.E2E}, {"ttfb_ms", r.TTFB}} {
		if f.d > 0 {
			t.RawSetString(f.key, lua.LNumber(float64(f.d)/float64(time.Millisecond)))
		}
	}
	t.RawSetString("output_tokens", lua.LNumber(r.OutputTokens))
	t.RawSetString("input_tokens", lua.LNumber(r.InputTokens))
	if r.FinishReason != "" {
		t.RawSetString("finish_reason", lua.LString(r.FinishReason))
	}
	if r.Err != nil {
		e := L.CreateTable(0, 2)
		e.RawSetString("class", lua.LString(r.Err.Class))
		e.RawSetString("message", lua.LString(r.Err.Message))
		t.RawSetString("error", e)
	}
	return t
}
