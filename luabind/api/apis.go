package api

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// Request keys of the APIs beyond chat: each takes the fields its API has,
// so a key it would not send is a Lua error rather than dropped.
var (
	respondKeys  = []string{"input", "instructions", "max_output_tokens", "model", "temperature", "top_p", "extra", "tags", "target", "stream", "tools", "tool_choice", "dirty", "headers"}
	messagesKeys = []string{"messages", "system", "max_tokens", "model", "temperature", "top_p", "stop", "extra", "tags", "target", "stream", "tools", "tool_choice", "dirty", "headers"}
	embedKeys    = []string{"input", "model", "dimensions", "encoding_format", "extra", "tags", "target", "dirty", "headers"}
)

// respond implements llm.respond{ input = "..." or {{role=, content=},
// ...}, instructions=?, max_output_tokens=?, model=?, temperature=?,
// top_p=?, tools=?, tool_choice=?, extra=?, tags=?, stream=?, dirty=?,
// headers=? } -> result: one request to OpenAI's Responses API (POST {base}/responses),
// its sample and the result table of llm.chat. TTFT counts reasoning
// (reasoning text or summary deltas), TTFC the first answer text or
// function-call argument; output usage comes from response.completed.
func (m *Module) respond(L *lua.LState) int {
	return m.sendRequest(L, "llm.respond", L.CheckTable(1), m.respondRequest, nil)
}

// messagesAPI implements llm.messages{ messages = {{role=, content=},
// ...}, max_tokens = n, system=?, model=?, temperature=?, top_p=?, stop=?,
// tools=?, tool_choice=?, extra=?, tags=?, stream=?, dirty=?, headers=? }
// -> result: one request to Anthropic's Messages API (POST {base}/messages, the key
// in x-api-key, anthropic-version 2023-06-01), its sample and the result
// table of llm.chat. max_tokens is required, as the API requires it;
// thinking counts for TTFT, not TTFC.
func (m *Module) messagesAPI(L *lua.LState) int {
	return m.sendRequest(L, "llm.messages", L.CheckTable(1), m.messagesRequest, nil)
}

// embed implements llm.embed{ input = "..." or { "a", "b", ... },
// model=?, dimensions=?, encoding_format=?, extra=?, tags=?, headers=? }
// -> result: one request to POST {base}/embeddings, never streamed. Its result has
// ok, status, error, ttfb_ms, e2e_ms, input_tokens, input_tokens_source,
// inputs (how many were embedded) and dimensions; nothing is generated,
// so there is no TTFT, TPOT or text. Dirty-data kinds malform generation
// requests and are refused here.
func (m *Module) embed(L *lua.LState) int {
	return m.sendRequest(L, "llm.embed", L.CheckTable(1), m.embedRequest, nil)
}

// respondRequest validates a llm.respond table.
func (m *Module) respondRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.respond"
	d := &ArgDecoder{m: m, rules: respondParts}
	f := d.Record(path, tbl, respondKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: m.cfg.Model}
	switch v := f["input"].(type) {
	case nil:
		if f != nil {
			d.Errorf(luaval.Child(path, "input"), "required (a string, or a list of messages)")
		}
	case lua.LString:
		req.Prompt = string(v)
	default:
		req.Messages = d.Messages(luaval.Child(path, "input"), v)
	}
	if v := f["instructions"]; v != nil {
		req.System = d.Str(luaval.Child(path, "instructions"), v)
	}
	if v := f["max_output_tokens"]; v != nil {
		req.MaxTokens = d.Count(luaval.Child(path, "max_output_tokens"), v, 0)
	}
	d.tools(path, f, req)
	kind := d.commonFields(path, f, req)
	return req, kind, d.Joined()
}

// messagesRequest validates a llm.messages table.
func (m *Module) messagesRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.messages"
	d := &ArgDecoder{m: m, rules: messagesParts}
	f := d.Record(path, tbl, messagesKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: m.cfg.Model}
	if v := f["messages"]; v != nil {
		req.Messages = d.Messages(luaval.Child(path, "messages"), v)
	} else if f != nil {
		d.Errorf(luaval.Child(path, "messages"), "required")
	}
	if v := f["system"]; v != nil {
		req.System = d.Str(luaval.Child(path, "system"), v)
	}
	if f != nil && f["max_tokens"] == nil {
		d.Errorf(luaval.Child(path, "max_tokens"), "required: the Messages API needs max_tokens")
	}
	d.tools(path, f, req)
	kind := d.commonFields(path, f, req)
	return req, kind, d.Joined()
}

// embedRequest validates a llm.embed table; a dirty kind is an error.
func (m *Module) embedRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.embed"
	d := &ArgDecoder{}
	f := d.Record(path, tbl, embedKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Model: m.cfg.Model}
	switch v := f["input"].(type) {
	case nil:
		if f != nil {
			d.Errorf(luaval.Child(path, "input"), "required (a string, or a list of strings)")
		}
	case lua.LString:
		req.Prompt = string(v)
	default:
		items := d.List(luaval.Child(path, "input"), v)
		if items != nil && len(items) == 0 {
			d.Errorf(luaval.Child(path, "input"), "needs at least one string")
		}
		req.Inputs = make([]string, 0, len(items))
		for i, item := range items {
			if _, isTable := luaval.Plain(item).(*lua.LTable); isTable {
				d.Errorf(luaval.Index(luaval.Child(path, "input"), i+1), "%s", errTextOnly("embeddings", "llm.embed"))
				continue
			}
			req.Inputs = append(req.Inputs, d.Str(luaval.Index(luaval.Child(path, "input"), i+1), item))
		}
	}
	if f["dirty"] != nil {
		d.Errorf(luaval.Child(path, "dirty"), "%s", errEmbedDirty)
	}
	m.embedExtra(d, path, f, req)
	if v := f["model"]; v != nil {
		if s := d.Str(luaval.Child(path, "model"), v); s != "" {
			req.Model = s
		}
	}
	if v := f["tags"]; v != nil {
		req.Tags = d.StringMap(luaval.Child(path, "tags"), v)
	}
	d.target(path, f, req)
	d.requestHeaders(path, f, req)
	return req, "", d.Joined()
}

// errEmbedDirty says why llm.embed takes no dirty kind.
const errEmbedDirty = "dirty-data kinds malform generation requests (llm.chat, llm.complete, llm.respond, llm.messages); " +
	"they are not defined for embeddings"

// embedExtra reads extra, dimensions and encoding_format into the body's
// extra fields: they are the embeddings API's own.
func (m *Module) embedExtra(d *ArgDecoder, path string, f map[string]lua.LValue, req *engine.ChatRequest) {
	if v := f["extra"]; v != nil {
		req.Extra = d.JsonObject(luaval.Child(path, "extra"), v)
	}
	set := func(k string, v any) {
		if req.Extra == nil {
			req.Extra = map[string]any{}
		}
		req.Extra[k] = v
	}
	if v := f["dimensions"]; v != nil {
		set("dimensions", d.Count(luaval.Child(path, "dimensions"), v, 1))
	}
	if v := f["encoding_format"]; v != nil {
		set("encoding_format", d.Str(luaval.Child(path, "encoding_format"), v))
	}
}
