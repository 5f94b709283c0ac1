package api

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// ArgDecoder decodes the arguments of the llm.* calls: a Decoder with the
// request fields' own readers.
type ArgDecoder struct {
	luaval.Decoder
	// m and rules, when set, let messages have content parts: the VU
	// whose sources and caches they draw from, and the parts the API
	// takes.
	m     *Module
	rules *partRules
}

// commonKeys are the request fields llm.chat and llm.complete share.
var commonKeys = []string{"model", "max_tokens", "temperature", "top_p", "seed", "stop", "extra", "tags", "target", "stream",
	"ignore_eos", "min_tokens", "dirty", "headers"}

var (
	chatKeys     = append([]string{"messages", "tools", "tool_choice"}, commonKeys...)
	completeKeys = append([]string{"prompt"}, commonKeys...)
	convKeys     = append([]string{"tools", "tool_choice"}, commonKeys...)
	messageKeys  = []string{"role", "content", "tool_calls", "tool_call_id"}
	toolCallKeys = []string{"id", "name", "arguments"}
)

// chatRequest validates a llm.chat table into a request and the dirty
// kind it forces ("" for none).
func (m *Module) chatRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.chat"
	d := &ArgDecoder{m: m, rules: chatParts}
	f := d.Record(path, tbl, chatKeys)
	req := &engine.ChatRequest{Model: m.cfg.Model}
	if v := f["messages"]; v != nil {
		req.Messages = d.Messages(luaval.Child(path, "messages"), v)
	} else if f != nil {
		d.Errorf(luaval.Child(path, "messages"), "required")
	}
	d.tools(path, f, req)
	kind := d.commonFields(path, f, req)
	return req, kind, d.Joined()
}

// tools reads a request's tools (a list of tool tables, in the endpoint's
// own shape) and tool_choice (a string such as "auto", "required",
// "none", or a table).
func (d *ArgDecoder) tools(path string, f map[string]lua.LValue, req *engine.ChatRequest) {
	if v := f["tools"]; v != nil {
		items := d.List(luaval.Child(path, "tools"), v)
		for i, item := range items {
			if obj := d.JsonObject(luaval.Index(luaval.Child(path, "tools"), i+1), item); obj != nil {
				req.Tools = append(req.Tools, obj)
			}
		}
	}
	switch v := f["tool_choice"].(type) {
	case nil:
	case lua.LString:
		req.ToolChoice = string(v)
	default:
		if obj := d.JsonObject(luaval.Child(path, "tool_choice"), v); obj != nil {
			req.ToolChoice = obj
		}
	}
}

// convFields reads conv:send's table: the fields of llm.chat but the
// messages, which the conversation supplies.
func (m *Module) convFields(path string, tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	d := &ArgDecoder{}
	f := d.Record(path, tbl, convKeys)
	req := &engine.ChatRequest{Model: m.cfg.Model}
	d.tools(path, f, req)
	kind := d.commonFields(path, f, req)
	return req, kind, d.Joined()
}

// completeRequest validates a llm.complete table into a request for the
// legacy completions endpoint. An empty prompt is allowed: sending one is
// a legitimate test of the server.
func (m *Module) completeRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.complete"
	d := &ArgDecoder{}
	f := d.Record(path, tbl, completeKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: m.cfg.Model}
	if v := f["prompt"]; v != nil {
		if _, isTable := luaval.Plain(v).(*lua.LTable); isTable {
			d.Errorf(luaval.Child(path, "prompt"), "%s", errTextOnly("completions", "llm.complete"))
		} else {
			req.Prompt = d.Str(luaval.Child(path, "prompt"), v)
		}
	} else {
		d.Errorf(luaval.Child(path, "prompt"), "required")
	}
	kind := d.commonFields(path, f, req)
	return req, kind, d.Joined()
}

// commonFields reads the fields both endpoints share into req and returns
// the dirty kind the request forces, "" for none.
func (d *ArgDecoder) commonFields(path string, f map[string]lua.LValue, req *engine.ChatRequest) string {
	if v := f["model"]; v != nil {
		if s := d.Str(luaval.Child(path, "model"), v); s != "" {
			req.Model = s
		}
	}
	if v := f["max_tokens"]; v != nil {
		req.MaxTokens = d.Count(luaval.Child(path, "max_tokens"), v, 0)
	}
	req.Temperature = d.optNumber(luaval.Child(path, "temperature"), f["temperature"])
	req.TopP = d.optNumber(luaval.Child(path, "top_p"), f["top_p"])
	if v := f["seed"]; v != nil {
		if n, ok := d.Integer(luaval.Child(path, "seed"), v); ok {
			req.Seed = &n
		}
	}
	if v := f["stop"]; v != nil {
		req.Stop = d.stop(luaval.Child(path, "stop"), v)
	}
	if v := f["extra"]; v != nil {
		req.Extra = d.JsonObject(luaval.Child(path, "extra"), v)
	}
	if v := f["tags"]; v != nil {
		req.Tags = d.StringMap(luaval.Child(path, "tags"), v)
	}
	d.target(path, f, req)
	if v := f["stream"]; v != nil {
		req.NoStream = !d.Boolean(luaval.Child(path, "stream"), v)
	}
	if v := f["ignore_eos"]; v != nil {
		req.IgnoreEOS = d.Boolean(luaval.Child(path, "ignore_eos"), v)
	}
	if v := f["min_tokens"]; v != nil {
		req.MinTokens = d.Count(luaval.Child(path, "min_tokens"), v, 0)
	}
	d.requestHeaders(path, f, req)
	return d.forcedDirty(luaval.Child(path, "dirty"), f["dirty"])
}

// forcedDirty reads a request's dirty = "kind".
func (d *ArgDecoder) forcedDirty(path string, v lua.LValue) string {
	if v == nil {
		return ""
	}
	kind := d.Str(path, v)
	if kind != "" && !dirty.Valid(kind) {
		d.Errorf(path, "%s", UnknownDirtyKind(kind))
		return ""
	}
	return kind
}

// Joined is the recorded problems as one error, nil when there are none;
// a request table's errors are raised in Lua, where the script line
// already says where.
func (d *ArgDecoder) Joined() error {
	if len(d.Errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(d.Errs, "; "))
}

// Messages reads a messages list: roles, contents, tool calls.
func (d *ArgDecoder) Messages(path string, v lua.LValue) []engine.Message {
	items := d.List(path, v)
	if items != nil && len(items) == 0 {
		d.Errorf(path, "needs at least one message")
	}
	msgs := make([]engine.Message, 0, len(items))
	for i, item := range items {
		p := luaval.Index(path, i+1)
		f := d.Record(p, item, messageKeys)
		if f == nil {
			continue
		}
		var msg engine.Message
		if f["role"] == nil {
			d.Errorf(luaval.Child(p, "role"), "required")
		} else {
			msg.Role = d.Str(luaval.Child(p, "role"), f["role"])
		}
		switch {
		case f["content"] != nil:
			d.content(luaval.Child(p, "content"), f["content"], &msg)
		case f["tool_calls"] == nil:
			d.Errorf(luaval.Child(p, "content"), "required")
		}
		if v := f["tool_calls"]; v != nil {
			msg.ToolCalls = d.toolCalls(luaval.Child(p, "tool_calls"), v)
		}
		if v := f["tool_call_id"]; v != nil {
			msg.ToolCallID = d.Str(luaval.Child(p, "tool_call_id"), v)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// toolCalls reads an assistant message's tool_calls: { {id=, name=,
// arguments=}, ... }, the shape a result's tool_calls has, so a script
// can hand a call back in the next turn.
func (d *ArgDecoder) toolCalls(path string, v lua.LValue) []engine.ToolCall {
	items := d.List(path, v)
	calls := make([]engine.ToolCall, 0, len(items))
	for i, item := range items {
		p := luaval.Index(path, i+1)
		f := d.Record(p, item, toolCallKeys)
		if f == nil {
			continue
		}
		var c engine.ToolCall
		for _, k := range []string{"id", "name"} {
			if f[k] == nil {
				d.Errorf(luaval.Child(p, k), "required")
			}
		}
		if f["id"] != nil {
			c.ID = d.Str(luaval.Child(p, "id"), f["id"])
		}
		if f["name"] != nil {
			c.Name = d.Str(luaval.Child(p, "name"), f["name"])
		}
		if f["arguments"] != nil {
			c.Arguments = d.Str(luaval.Child(p, "arguments"), f["arguments"])
		}
		calls = append(calls, c)
	}
	return calls
}

// optNumber reads an optional number; 0 is kept, because temperature = 0
// (greedy decoding) differs from leaving the server's default.
func (d *ArgDecoder) optNumber(path string, v lua.LValue) *float64 {
	if v == nil {
		return nil
	}
	n, ok := v.(lua.LNumber)
	if !ok {
		d.Errorf(path, "expected number, got %s", v.Type())
		return nil
	}
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.Errorf(path, "must be a finite number, got %v", f)
		return nil
	}
	return &f
}

// stop accepts one stop string or a list of them.
func (d *ArgDecoder) stop(path string, v lua.LValue) []string {
	if s, ok := v.(lua.LString); ok {
		return []string{string(s)}
	}
	if _, ok := v.(*lua.LTable); !ok {
		d.Errorf(path, "expected string or list of strings, got %s", v.Type())
		return nil
	}
	items := d.List(path, v)
	out := make([]string, 0, len(items))
	for i, item := range items {
		out = append(out, d.Str(luaval.Index(path, i+1), item))
	}
	return out
}

// target reads a request's target, the endpoint of options.targets it
// goes to; whether that target exists is checked when it is sent.
func (d *ArgDecoder) target(path string, f map[string]lua.LValue, req *engine.ChatRequest) {
	if v := f["target"]; v != nil {
		req.Target = d.Str(luaval.Child(path, "target"), v)
	}
}

// errTextOnly says why an API takes no content parts.
func errTextOnly(api, fn string) string {
	return fmt.Sprintf("the %s API is text-only: %s takes a string, not content parts (send images and audio with llm.chat, llm.respond or llm.messages)", api, fn)
}
