package api

import (
	"strconv"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// synthetic is a VU's generator of prompts of chosen token lengths, as
// made by llm.synthetic.
type synthetic struct {
	gen          *dataset.Synthetic
	uniquePrefix bool
}

var syntheticKeys = []string{"input_tokens", "output_tokens", "prefix_tokens", "tokenizer", "unique_prefix"}

// newSynthetic implements llm.synthetic{ input_tokens = dist,
// output_tokens = dist, prefix_tokens = 0, tokenizer = "cl100k_base",
// unique_prefix = false } -> generator with :next() returning
// { prompt = "...", input_tokens = n, max_tokens = m }. The script passes
// prompt and max_tokens to llm.chat itself, usually with ignore_eos = true
// so the server generates exactly max_tokens.
//
// Prefix control: prefix_tokens > 0 starts every prompt with the same
// shared prefix of that many tokens (what a server's prefix cache can
// reuse); unique_prefix = true puts "[req_<vu.request_id>] " first, so no
// two requests share a prefix at all. A script that builds its own content
// gets the same effect from vu.request_id.
func (m *Module) newSynthetic(L *lua.LState) int {
	d := &ArgDecoder{}
	const path = "llm.synthetic"
	f := d.Record(path, L.CheckTable(1), syntheticKeys)
	var cfg dataset.SyntheticConfig
	cfg.Input = d.dist(luaval.Child(path, "input_tokens"), f["input_tokens"], true)
	cfg.Output = d.dist(luaval.Child(path, "output_tokens"), f["output_tokens"], true)
	if v := f["prefix_tokens"]; v != nil {
		cfg.PrefixTokens = d.Count(luaval.Child(path, "prefix_tokens"), v, 0)
	}
	cfg.Tokenizer = m.initTokenizer(L)
	if v := f["tokenizer"]; v != nil {
		cfg.Tokenizer = m.tokenizerOption(&d.Decoder, luaval.Child(path, "tokenizer"), v)
	}
	s := &synthetic{}
	if v := f["unique_prefix"]; v != nil {
		s.uniquePrefix = d.Boolean(luaval.Child(path, "unique_prefix"), v)
	}
	if err := d.Joined(); err != nil {
		L.RaiseError("%v", err)
	}
	gen, err := dataset.NewSynthetic(cfg)
	if err != nil {
		L.RaiseError("%s: %v", path, err)
	}
	s.gen = gen
	L.Push(m.syntheticValue(L, s))
	return 1
}

// dist reads a distribution made by llm.dist.*.
func (d *ArgDecoder) dist(path string, v lua.LValue, required bool) dataset.Dist {
	if v == nil {
		if required {
			d.Errorf(path, "required (e.g. llm.dist.normal(512, 64))")
		}
		return nil
	}
	if ud, ok := v.(*lua.LUserData); ok {
		if dv, ok := ud.Value.(*distValue); ok && dv.dist != nil {
			return dv.dist
		}
	}
	d.Errorf(path, "expected a distribution (llm.dist.fixed/normal/lognormal/uniform), got %s", v.Type())
	return nil
}

func (m *Module) syntheticValue(L *lua.LState, s *synthetic) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = s
	methods := L.SetFuncs(L.CreateTable(0, 1), map[string]lua.LGFunction{"next": m.syntheticNext})
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", methods)
	mt.RawSetString("__metatable", lua.LString("llmload.synthetic"))
	L.SetMetatable(ud, mt)
	return ud
}

// syntheticNext implements gen:next() -> { prompt = "...", input_tokens = n,
// max_tokens = m }, drawn from the VU's seeded source, so a run with the
// same seed sends the same prompts.
func (m *Module) syntheticNext(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	s, isGen := (*synthetic)(nil), false
	if ok {
		s, isGen = ud.Value.(*synthetic)
	}
	if !isGen {
		L.ArgError(1, "synthetic generator expected (call it with a colon: gen:next())")
	}
	prompt, in, out := s.gen.Next(m.rng, m.uniquePrefix(s))
	t := L.CreateTable(0, 3)
	t.RawSetString("prompt", lua.LString(prompt))
	t.RawSetString("input_tokens", lua.LNumber(in))
	t.RawSetString("max_tokens", lua.LNumber(out))
	L.Push(t)
	return 1
}

// uniquePrefix is "[req_<request_id>] " when the generator asks for one;
// outside an iteration there is no request id, and the VU id stands in.
func (m *Module) uniquePrefix(s *synthetic) string {
	if !s.uniquePrefix {
		return ""
	}
	if m.it != nil {
		return "[req_" + strconv.FormatInt(m.it.RequestID, 10) + "] "
	}
	return "[vu_" + strconv.Itoa(m.VUID) + "] "
}
