package api

import (
	"math"
	"strconv"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// synthetic is a VU's generator of prompts of chosen token lengths, as
// made by llm.synthetic.
type synthetic struct {
	gen          *dataset.Synthetic
	uniquePrefix bool
	// prefixHit says the prompts are built for a target hit rate, so each
	// one's request carries what it asked (engine.PrefixAsked).
	prefixHit bool
}

var syntheticKeys = []string{"input_tokens", "output_tokens", "prefix_hit", "prefix_tokens", "tokenizer", "unique_prefix"}

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
// gets the same effect from vu.request_id. prefix_hit = 0.6 builds each
// prompt so that its first round(0.6 × its length) tokens are the shared
// prefix and the rest its own: a target prefix-cache hit rate, which the
// summary sets beside what the server served (see askPrefix).
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
	if v := f["prefix_hit"]; v != nil {
		cfg.PrefixHit, s.prefixHit = d.prefixHit(path, v, cfg.PrefixTokens, s.uniquePrefix), true
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

// prefixHit reads llm.synthetic's prefix_hit, a share in [0, 1), and
// refuses the options it contradicts: prefix_tokens sets the shared
// prefix's length too, and unique_prefix defeats the cache it asks to hit.
func (d *ArgDecoder) prefixHit(path string, v lua.LValue, prefixTokens int, unique bool) *float64 {
	at := luaval.Child(path, "prefix_hit")
	h := d.Number(at, v, math.Inf(-1))
	if h < 0 || h >= 1 {
		d.Errorf(at, "must be a share in [0, 1) of each prompt's tokens (0.6 for 60%%), got %v", h)
		h = 0
	}
	if prefixTokens > 0 {
		d.Errorf(luaval.Child(path, "prefix_tokens"), "cannot be set with prefix_hit: both set the shared prefix's length (a share of each prompt, or a fixed count); give one")
	}
	if unique {
		d.Errorf(luaval.Child(path, "unique_prefix"), "cannot be true with prefix_hit: a unique prefix defeats the cache prefix_hit asks to hit")
	}
	return &h
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
// max_tokens = m, shared_tokens = k }, drawn from the VU's seeded source,
// so a run with the same seed sends the same prompts. shared_tokens are
// the prompt's first tokens that every prompt of the source opens with.
func (m *Module) syntheticNext(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	s, isGen := (*synthetic)(nil), false
	if ok {
		s, isGen = ud.Value.(*synthetic)
	}
	if !isGen {
		L.ArgError(1, "synthetic generator expected (call it with a colon: gen:next())")
	}
	p := s.gen.Next(m.rng, m.uniquePrefix(s))
	if s.prefixHit {
		m.askPrefix(p.Text, engine.PrefixAsked{Shared: p.SharedTokens, Tokens: p.InputTokens})
	}
	t := L.CreateTable(0, 4)
	t.RawSetString("prompt", lua.LString(p.Text))
	t.RawSetString("input_tokens", lua.LNumber(p.InputTokens))
	t.RawSetString("max_tokens", lua.LNumber(p.OutputTokens))
	t.RawSetString("shared_tokens", lua.LNumber(p.SharedTokens))
	L.Push(t)
	return 1
}

// maxAsked bounds the prompts drawn for a target hit rate and not sent
// yet: a script that draws prompts it never sends must not grow the map.
const maxAsked = 64

// askPrefix remembers what a prompt built for a target hit rate asks, until
// a request sends it. The script passes only the prompt's text to the
// request, so the text is the key: the sample of the request that sends it
// (askedBy) carries what it asked to the summary, exactly per prompt
// however many sources with different shares a script mixes.
func (m *Module) askPrefix(prompt string, a engine.PrefixAsked) {
	if len(m.asked) >= maxAsked {
		clear(m.asked) // drawn long ago and never sent
	}
	if m.asked == nil {
		m.asked = make(map[string]engine.PrefixAsked)
	}
	m.asked[prompt] = a
}

// askedBy takes what req's prompt asked of the server's prefix cache: the
// prompt must be the request's whole prompt (llm.complete) or its last
// message's text (llm.chat, conv:send), as gen:next() made it. Each prompt
// counts once: a later turn that re-sends it asks nothing.
func (m *Module) askedBy(req *engine.ChatRequest) engine.PrefixAsked {
	if len(m.asked) == 0 {
		return engine.PrefixAsked{}
	}
	text := req.Prompt
	if n := len(req.Messages); n > 0 {
		text = messageText(&req.Messages[n-1])
	}
	a, ok := m.asked[text]
	if ok {
		delete(m.asked, text)
	}
	return a
}

// messageText is a message's text when it is one piece: its content, or
// its only part when that is text.
func messageText(msg *engine.Message) string {
	if len(msg.Parts) == 1 && msg.Parts[0].Type == engine.PartText {
		return msg.Parts[0].Text
	}
	return msg.Content
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
