package luabind

import (
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// prefixHitScript sends prompts of three synthetic sources, as drawn and
// otherwise: only a prefix_hit prompt sent as it came asks a share.
const prefixHitScript = `local llm = require("llmload")
options = { vus = 1, duration = "1s" }
local hit = llm.synthetic { input_tokens = llm.dist.fixed(100), output_tokens = llm.dist.fixed(4), prefix_hit = 0.6 }
local low = llm.synthetic { input_tokens = llm.dist.uniform(50, 150), output_tokens = llm.dist.fixed(4), prefix_hit = 0.3 }
local plain = llm.synthetic { input_tokens = llm.dist.fixed(100), output_tokens = llm.dist.fixed(4), prefix_tokens = 60 }
function iteration(vu)
  local a, b, c = hit:next(), low:next(), plain:next()
  out = { shared = a.shared_tokens, low_in = b.input_tokens, low_shared = b.shared_tokens, plain_shared = c.shared_tokens }
  llm.complete { prompt = a.prompt }
  llm.chat { messages = { { role = "system", content = "be brief" }, { role = "user", content = b.prompt } } }
  llm.chat { messages = { { role = "user", content = c.prompt } } }
  llm.complete { prompt = a.prompt }
  llm.complete { prompt = "[x] " .. hit:next().prompt }
end
`

// TestPrefixHitAsked: each request's sample carries what its prompt asked
// of the prefix cache, per source, once.
func TestPrefixHitAsked(t *testing.T) {
	s := mustCompile(t, writeScript(t, "hit.lua", prefixHitScript), Options{Seed: 3})
	sink := &fakeSink{}
	v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{result: engine.Result{Status: 200}}, Sink: sink, Model: "m"}, 1)
	mustRun(t, v, "iteration")
	num := func(key string) int { return int(out(t, v, key).(lua.LNumber)) }
	lowIn := num("low_in")
	if got, want := num("low_shared"), dataset.SharedTokens(0.3, lowIn); got != want {
		t.Errorf("low:next().shared_tokens = %d, want %d of %d", got, want, lowIn)
	}
	if got := num("shared"); got != 60 {
		t.Errorf("hit:next().shared_tokens = %d, want 60", got)
	}
	if got := num("plain_shared"); got != 60 {
		t.Errorf("plain:next().shared_tokens = %d, want 60 (prefix_tokens)", got)
	}
	want := []engine.PrefixAsked{
		{Shared: 60, Tokens: 100},                                 // llm.complete's prompt
		{Shared: dataset.SharedTokens(0.3, lowIn), Tokens: lowIn}, // a chat's last message
		{}, // prefix_tokens asks no share
		{}, // the same prompt again asks nothing more
		{}, // a prompt changed on its way is not the one drawn
	}
	samples := sink.all()
	if len(samples) != len(want) {
		t.Fatalf("%d samples, want %d", len(samples), len(want))
	}
	for i, w := range want {
		if got := samples[i].PrefixAsked; got != w {
			t.Errorf("request %d asked %+v, want %+v", i+1, got, w)
		}
	}
}
