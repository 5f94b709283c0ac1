package dataset

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/tokenize"
)

func fixedDist(t *testing.T, v float64) Dist {
	t.Helper()
	d, err := Fixed(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newSynthetic(t *testing.T, c SyntheticConfig) *Synthetic {
	t.Helper()
	s, err := NewSynthetic(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSyntheticExactLength(t *testing.T) {
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		codec, _ := tokenize.Get(enc)
		for _, target := range []int{1, 2, 7, 50, 128, 1000, 4096} {
			for _, prefix := range []int{0, 16, 200} {
				for _, unique := range []string{"", "[req_17] "} {
					name := fmt.Sprintf("%s/%d/prefix%d/unique%v", enc, target, prefix, unique != "")
					t.Run(name, func(t *testing.T) {
						s := newSynthetic(t, SyntheticConfig{Input: fixedDist(t, float64(target)),
							Output: fixedDist(t, 64), PrefixTokens: prefix, Tokenizer: enc})
						r := rand.New(rand.NewPCG(uint64(target), 3))
						for range 3 {
							prompt, in, out := next3(s, r, unique)
							if got := codec.Count(prompt); got != in {
								t.Errorf("reported %d tokens, the prompt has %d", in, got)
							}
							want := max(target, codec.Count(unique))
							if in != want {
								t.Errorf("input tokens = %d, want %d (prompt %.60q)", in, want, prompt)
							}
							if out != 64 {
								t.Errorf("output tokens = %d, want 64", out)
							}
							if unique != "" && !strings.HasPrefix(prompt, unique) {
								t.Errorf("prompt %.40q does not start with %q", prompt, unique)
							}
						}
					})
				}
			}
		}
	}
}

func TestSyntheticSharedPrefix(t *testing.T) {
	codec, _ := tokenize.Get("o200k_base")
	in, err := Uniform(300, 600)
	if err != nil {
		t.Fatal(err)
	}
	s := newSynthetic(t, SyntheticConfig{Input: in, PrefixTokens: 256, Tokenizer: "o200k_base"})
	r := rand.New(rand.NewPCG(7, 7))
	first, _, _ := next3(s, r, "")
	firstIDs := codec.Encode(first)[:256]
	for range 5 {
		p, _, out := next3(s, r, "")
		if got := codec.Encode(p)[:256]; !reflect.DeepEqual(got, firstIDs) {
			t.Fatal("the first 256 tokens differ between prompts")
		}
		if p == first {
			t.Error("two prompts are identical past the prefix")
		}
		if out != 0 {
			t.Errorf("output tokens = %d without an Output distribution, want 0", out)
		}
	}
	a, _, _ := next3(s, r, "[req_1] ")
	b, _, _ := next3(s, r, "[req_2] ")
	if strings.HasPrefix(a, first[:40]) || a[:9] == b[:9] {
		t.Errorf("unique prefixes did not replace the shared one: %.40q, %.40q", a, b)
	}
	// Another Synthetic, even with another length, opens with the same text.
	s2 := newSynthetic(t, SyntheticConfig{Input: fixedDist(t, 1000), PrefixTokens: 256, Tokenizer: "o200k_base"})
	p2, _, _ := next3(s2, rand.New(rand.NewPCG(1, 1)), "")
	if got := codec.Encode(p2)[:256]; !reflect.DeepEqual(got, firstIDs) {
		t.Error("the shared prefix differs between two Synthetics")
	}
}

func TestSyntheticReproducible(t *testing.T) {
	in, _ := Lognormal(200, 80)
	out, _ := Normal(100, 30)
	s := newSynthetic(t, SyntheticConfig{Input: in, Output: out, PrefixTokens: 10})
	run := func(seed uint64) []string {
		r := rand.New(rand.NewPCG(seed, 0))
		var got []string
		for range 5 {
			p, n, o := next3(s, r, "")
			got = append(got, fmt.Sprint(p, n, o))
		}
		return got
	}
	if a, b := run(42), run(42); !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different prompts")
	}
	if a, b := run(42), run(43); reflect.DeepEqual(a, b) {
		t.Error("different seeds gave the same prompts")
	}
}

func TestNewSyntheticErrors(t *testing.T) {
	in := fixedDist(t, 10)
	tests := []struct {
		name string
		c    SyntheticConfig
		want string
	}{
		{"no input", SyntheticConfig{}, "no input length"},
		{"negative prefix", SyntheticConfig{Input: in, PrefixTokens: -1}, "prefix_tokens -1"},
		{"bad tokenizer", SyntheticConfig{Input: in, Tokenizer: "llama"}, "unknown tokenizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewSynthetic(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSingleTokenWords(t *testing.T) {
	for _, enc := range []string{"cl100k_base", "o200k_base", "p50k_base", "r50k_base"} {
		codec, _ := tokenize.Get(enc)
		words, err := singleTokenWords(codec)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range words {
			if codec.Count(wordContext+w)-codec.Count(wordContext) != 1 {
				t.Errorf("%s: %q is not one token after a word", enc, w)
			}
		}
		t.Logf("%s: %d single-token words", enc, len(words))
	}
}

// A SentencePiece tokenizer marks a text's start with a token of its own,
// so a word is counted after another: synthetic prompts of a Llama-2-family
// tokenizer.json hit their lengths exactly too. The file is the one
// engine/tokenize's tests fetch into the cache; without it, this skips.
func TestSyntheticWithASentencePieceTokenizer(t *testing.T) {
	cache, err := os.UserCacheDir()
	if dir := os.Getenv("LLMLOAD_CACHE"); dir != "" {
		cache, err = dir, nil
	} else {
		cache = filepath.Join(cache, "llmload")
	}
	files, _ := filepath.Glob(filepath.Join(cache, "tokenizers", "mistral-*.json"))
	if err != nil || len(files) == 0 {
		t.Skip("no Mistral tokenizer.json in the cache: go test ./engine/tokenize/ fetches it")
	}
	for _, n := range []int{1, 7, 200, 1000} {
		in, _ := Fixed(float64(n))
		s, err := NewSynthetic(SyntheticConfig{Input: in, PrefixTokens: 50, Tokenizer: files[0]})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(n)))
		for range 5 {
			prompt, got, _ := next3(s, r, "")
			if got != n || s.codec.Count(prompt) != n {
				t.Errorf("want %d tokens, got %d (recount %d): %.60q", n, got, s.codec.Count(prompt), prompt)
			}
		}
	}
}

func BenchmarkSyntheticNext(b *testing.B) {
	in, _ := Lognormal(1000, 300)
	s, err := NewSynthetic(SyntheticConfig{Input: in, PrefixTokens: 100})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		s.Next(r, "")
	}
}

// next3 is Next's prompt, input and output tokens.
func next3(s *Synthetic, r *rand.Rand, uniquePrefix string) (string, int, int) {
	p := s.Next(r, uniquePrefix)
	return p.Text, p.InputTokens, p.OutputTokens
}

// BenchmarkSyntheticLong times a long prompt with a unique prefix, as
// llm.synthetic { input_tokens = llm.dist.fixed(32000), unique_prefix =
// true } makes one per request: the cost the client pays per request.
func BenchmarkSyntheticLong(b *testing.B) {
	for _, n := range []float64{32000, 128000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			in, err := Fixed(n)
			if err != nil {
				b.Fatal(err)
			}
			s, err := NewSynthetic(SyntheticConfig{Input: in, Tokenizer: "cl100k_base"})
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := s.Next(r, fmt.Sprintf("[req_%d] ", i))
				if p.InputTokens != int(n) {
					b.Fatalf("got %d tokens, want %v", p.InputTokens, n)
				}
			}
		})
	}
}
