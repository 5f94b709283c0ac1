package api

import (
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// DirtyConfig is options.dirty: the share of an iteration's requests that
// are deliberately malformed, and the weight of each kind. It is applied
// here, in luabind, because the requests are built here.
type DirtyConfig struct {
	Ratio   float64
	Kinds   []string // sorted, so a seeded run picks the same kinds
	Weights map[string]float64
	Total   float64
	// Text is the mix a request without media draws from when the script
	// named no kinds: every kind but the media ones, which would put
	// images into a text model's traffic. Nil when it named them.
	Text *DirtyConfig
}

// UnknownDirtyKind is the error text for a dirty-data kind llmload does
// not know, naming the nearest one that it does.
func UnknownDirtyKind(name string) string {
	msg := fmt.Sprintf("unknown dirty-data kind %q", name)
	if best, ok := luaval.Nearest(name, dirty.Names()); ok {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	}
	return msg + " (valid: " + strings.Join(dirty.Names(), ", ") + ")"
}

// dirtyKind decides whether the request about to be sent is malformed and
// how: forced is the request's own dirty key, which always wins; otherwise
// only measured iterations (not warmup, not setup or teardown) draw, with
// probability options.dirty.ratio, from the VU's seeded source.
func (m *Module) dirtyKind(forced string, req *engine.ChatRequest) string {
	if forced != "" {
		return forced
	}
	c := &m.prog.DirtyMix
	if c.Ratio <= 0 || m.Phase != phaseIteration || m.it == nil || m.it.Warmup {
		return ""
	}
	if m.rng.Float64() >= c.Ratio {
		return ""
	}
	if c.Text != nil && req.Audio == nil && !engine.HasMedia(req.Messages) {
		c = c.Text
	}
	return pickWeighted(c.Kinds, c.Weights, m.rng.Float64()*c.Total)
}

// maybeMalform returns the request to send and its dirty kind. A kind the
// script forces must apply, or it is the script's error; a kind drawn for
// options.dirty that cannot express this request (a chat-only kind on a
// completion) leaves it clean rather than failing the iteration.
func (m *Module) maybeMalform(req *engine.ChatRequest, forced string) (*engine.ChatRequest, string, error) {
	if req.Endpoint == engine.EndpointEmbeddings {
		return req, "", nil // options.dirty malforms generation requests only (see errEmbedDirty)
	}
	kind := m.dirtyKind(forced, req)
	if kind == "" {
		return req, "", nil
	}
	dirtyReq := *req // dirty copies the slices it changes
	if err := m.malform(kind, &dirtyReq); err != nil {
		if forced != "" {
			return nil, "", err
		}
		return req, "", nil
	}
	return &dirtyReq, kind, nil
}

// malform applies kind to req and labels it, so its sample goes to the
// dirty-data table rather than the clean statistics.
func (m *Module) malform(kind string, req *engine.ChatRequest) error {
	if err := dirty.Apply(kind, req, m.rng); err != nil {
		return fmt.Errorf("dirty kind %q: %w", kind, err)
	}
	tags := make(map[string]string, len(req.Tags)+1)
	for k, v := range req.Tags {
		tags[k] = v
	}
	tags["dirty"] = kind
	req.Tags = tags
	return nil
}

// dirtyTable is llm.dirty.
func (m *Module) dirtyTable(L *lua.LState) *lua.LTable {
	return L.SetFuncs(L.CreateTable(0, 2), map[string]lua.LGFunction{
		"kinds": dirtyKinds,
		"apply": dirtyApply,
	})
}

// dirtyKinds implements llm.dirty.kinds() -> { {name=, sends=, healthy=},
// ... }: every dirty-data kind, what it sends and how a healthy server
// answers it.
func dirtyKinds(L *lua.LState) int {
	kinds := dirty.Kinds()
	t := L.CreateTable(len(kinds), 0)
	for _, k := range kinds {
		e := L.CreateTable(0, 3)
		e.RawSetString("name", lua.LString(k.Name))
		e.RawSetString("sends", lua.LString(k.Sends))
		e.RawSetString("healthy", lua.LString(k.Healthy))
		t.Append(e)
	}
	L.Push(t)
	return 1
}

// dirtyApply implements llm.dirty.apply(kind, request) -> request: a
// shallow copy of the request table with dirty = kind, which llm.chat and
// llm.complete, llm.respond and llm.messages then send malformed that
// way. It is the table form of
// writing dirty = kind in the request directly.
func dirtyApply(L *lua.LState) int {
	kind := L.CheckString(1)
	if !dirty.Valid(kind) {
		L.ArgError(1, UnknownDirtyKind(kind))
	}
	src := luaval.PlainTable(L.CheckTable(2))
	t := L.CreateTable(0, 8)
	src.ForEach(func(k, v lua.LValue) { t.RawSet(k, v) })
	t.RawSetString("dirty", lua.LString(kind))
	L.Push(t)
	return 1
}
