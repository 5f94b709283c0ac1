package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/tokenize"
)

// TestSyntheticLongExact holds the junction count of long prompts (see
// Synthetic.count) to a whole tokenization, for every built-in encoding
// and every way a prompt opens: with nothing, a unique prefix, a shared
// prefix of fixed length, a prefix-hit share.
func TestSyntheticLongExact(t *testing.T) {
	hit := 0.5
	opens := []struct {
		name   string
		cfg    func(c SyntheticConfig) SyntheticConfig
		unique string
	}{
		{"bare", func(c SyntheticConfig) SyntheticConfig { return c }, ""},
		{"unique prefix", func(c SyntheticConfig) SyntheticConfig { return c }, "[req_17] "},
		{"unique prefix without space", func(c SyntheticConfig) SyntheticConfig { return c }, "<<id-42>>"},
		{"shared prefix", func(c SyntheticConfig) SyntheticConfig { c.PrefixTokens = 300; return c }, ""},
		{"prefix hit", func(c SyntheticConfig) SyntheticConfig { c.PrefixHit = &hit; return c }, ""},
	}
	for _, enc := range tokenize.Names() {
		for _, o := range opens {
			t.Run(enc+"/"+o.name, func(t *testing.T) {
				in, err := Uniform(2000, 6000)
				if err != nil {
					t.Fatal(err)
				}
				s, err := NewSynthetic(o.cfg(SyntheticConfig{Input: in, Tokenizer: enc}))
				if err != nil {
					t.Fatal(err)
				}
				s.check.fits.Store(max(s.check.fits.Load(), wholeFirst)) // past the first whole checks: the junction count alone
				r := rand.New(rand.NewPCG(3, 4))
				for range 6 {
					p := s.Next(r, o.unique)
					if whole := s.codec.Count(p.Text); whole != p.InputTokens {
						t.Fatalf("counted %d tokens, the whole prompt has %d: %.80q…", p.InputTokens, whole, p.Text)
					}
				}
				if s.check.whole.Load() {
					t.Error("a whole check disagreed with the junction count")
				}
			})
		}
	}
}

// splitCodec counts a token per 3 bytes of the text: a tokenizer whose
// tokens cross word boundaries, for which a prompt's count is not the
// sum of its words'.
type splitCodec struct{ tokenize.Codec }

func (c splitCodec) Count(s string) int { return (len(s) + 2) / 3 }
func (c splitCodec) Name() string       { return "split" }

// TestSyntheticWholeFallback: with a tokenizer the sum does not fit, the
// first whole check finds it, and every prompt is counted whole after.
func TestSyntheticWholeFallback(t *testing.T) {
	base, err := tokenize.Get("")
	if err != nil {
		t.Fatal(err)
	}
	words, err := singleTokenWords(base)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := Fixed(3000)
	s := &Synthetic{in: in, codec: splitCodec{base}, words: words, slots: padWords(words), check: &junctionCheck{}, ends: []int{0}}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20 {
		p := s.Next(r, fmt.Sprintf("[req_%d] ", i))
		if got := s.codec.Count(p.Text); got != p.InputTokens {
			t.Fatalf("prompt %d: counted %d, whole %d", i, p.InputTokens, got)
		}
	}
	if !s.check.whole.Load() {
		t.Error("the tokenizer that does not add up was not found out")
	}
}

// TestSyntheticCompose keeps compose's text equal to the words joined.
func TestSyntheticCompose(t *testing.T) {
	sixteen, long := " "+strings.Repeat("x", 15), " "+strings.Repeat("y", 20) // a full slot, and beyond one
	words := []string{" a", " bb", " ccc", sixteen, long}
	s := &Synthetic{words: words, slots: padWords(words), check: &junctionCheck{}}
	for _, c := range []struct {
		head string
		idx  []uint32
		want string
	}{
		{"", []uint32{0, 1, 2}, "a bb ccc"},
		{"x:", []uint32{2, 0}, "x: ccc a"},
		{"", nil, ""},
		{"h", nil, "h"},
		{"", []uint32{3, 4, 0}, sixteen[1:] + long + " a"},
		{"h", []uint32{4, 3, 4}, "h" + long + sixteen + long},
	} {
		if got := s.compose(c.head, c.idx); got != c.want {
			t.Errorf("compose(%q, %v) = %q, want %q", c.head, c.idx, got, c.want)
		}
	}
}

// TestSyntheticSharesItsCheck: every VU makes its own Synthetic, and the
// first prompts tokenized whole as a check are the process's, not each
// VU's.
func TestSyntheticSharesItsCheck(t *testing.T) {
	in, _ := Fixed(100)
	a, errA := NewSynthetic(SyntheticConfig{Input: in, Tokenizer: "cl100k_base"})
	b, errB := NewSynthetic(SyntheticConfig{Input: in, Tokenizer: "cl100k_base"})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	before := a.check.fits.Load()
	b.Next(rand.New(rand.NewPCG(1, 1)), "[req_1] ")
	if a.check != b.check || a.check.fits.Load() != before+1 {
		t.Errorf("two Synthetics of one tokenizer keep their checks apart")
	}
}

// TestWordSetVerify: the checks made before the run find a tokenizer the
// sum does not fit, and pass one it does.
func TestWordSetVerify(t *testing.T) {
	base, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	words, err := singleTokenWords(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		codec     tokenize.Codec
		wantWhole bool
	}{{base, false}, {splitCodec{base}, true}} {
		set := &wordSet{words: words, slots: padWords(words)}
		set.verify(c.codec)
		if got := set.check.whole.Load(); got != c.wantWhole {
			t.Errorf("%s: whole = %v, want %v", c.codec.Name(), got, c.wantWhole)
		}
		if !c.wantWhole && set.check.fits.Load() != wholeFirst {
			t.Errorf("%s: %d checks counted, want %d", c.codec.Name(), set.check.fits.Load(), wholeFirst)
		}
	}
}
