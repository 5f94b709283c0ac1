package luabind

import (
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
)

// TestMediaPartsAllocateNothingPerImage: a part of 16 images costs no
// more allocations than a part of one but the parts slice's growth; the
// images are shared, never copied or encoded per request.
func TestMediaPartsAllocateNothingPerImage(t *testing.T) {
	src := `local img = llm.synthetic.image{ width = 32, height = 32, variants = 16 }
function iteration() end
function one() llm.chat{ messages = { { role = "user", content = { { type = "image", image = img, count = 1 } } } }, max_tokens = 4 } end
function many() llm.chat{ messages = { { role = "user", content = { { type = "image", image = img, count = 16 } } } }, max_tokens = 4 } end
function files() llm.chat{ messages = { { role = "user", content = { { type = "image", path = "images/a.png", count = 16 } } } }, max_tokens = 4 } end
`
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{})
	v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{result: engine.Result{Status: 200}}, Model: "m"}, 1)
	allocs := func(exec string) float64 { return testing.AllocsPerRun(50, func() { mustRun(t, v, exec) }) }
	one := allocs("one")
	const growth = 4 // append doubling 1 → 16
	for _, exec := range []string{"many", "files"} {
		if n := allocs(exec); n > one+growth {
			t.Errorf("%s: %.0f allocations a request, want at most %.0f (one image's %.0f and the slice's growth)", exec, n, one+growth, one)
		}
	}
}
