package api

import (
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// HeaderPath names one header below path as a script writes it:
// options.target.headers["X-Tenant"], since a header name is rarely a
// Lua identifier.
func HeaderPath(path, name string) string { return fmt.Sprintf("%s[%q]", path, name) }

// DecodeHeaders reads a table of header names to string values
// (options.target.headers, a request's headers), sorted by name because a
// Lua table has no order. Each is checked with plan.CheckHeader; two names
// that differ only in case are one header set twice, an error. A number is
// refused rather than converted: a header value is text, and a script that
// means "1" can say so.
func DecodeHeaders(d *luaval.Decoder, path string, v lua.LValue) []plan.Header {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected a table of header names to values, got %s", v.Type())
		return nil
	}
	var out []plan.Header
	seen := map[string]string{} // lower-case name → the name as first written
	for _, k := range luaval.SortedKeys(tbl) {
		name, isStr := k.(lua.LString)
		if !isStr {
			d.Errorf(luaval.KeyPath(path, k), "header names are strings, got %s", k.Type())
			continue
		}
		at := HeaderPath(path, string(name))
		value, ok := headerValue(d, at, tbl.RawGet(k))
		if !ok {
			continue
		}
		if first, dup := seen[strings.ToLower(string(name))]; dup {
			d.Errorf(at, "the same header as [%q] (header names are case-insensitive)", first)
			continue
		}
		seen[strings.ToLower(string(name))] = string(name)
		if err := plan.CheckHeader(string(name), value); err != nil {
			d.Errorf(at, "%v", err)
			continue
		}
		out = append(out, plan.Header{Name: string(name), Value: value})
	}
	return out
}

// headerValue reads one header's value, never quoting it in an error.
func headerValue(d *luaval.Decoder, path string, v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		d.Errorf(path, "expected string, got number (a header value is text: write it in quotes)")
	default:
		d.Errorf(path, "expected string, got %s", v.Type())
	}
	return "", false
}

// requestHeaders reads a request table's headers = { ... } into req: sent
// after the target's own, each replacing the target's header of that name.
func (d *ArgDecoder) requestHeaders(path string, f map[string]lua.LValue, req *engine.ChatRequest) {
	v := f["headers"]
	if v == nil {
		return
	}
	for _, h := range DecodeHeaders(&d.Decoder, luaval.Child(path, "headers"), v) {
		req.Headers = append(req.Headers, engine.Header{Name: h.Name, Value: h.Value})
	}
}
