package dataset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/tokenize"
)

func hitShare(v float64) *float64 { return &v }

// TestSyntheticPrefixHit holds each prompt to its target: its first
// SharedTokens tokens, counted with the tokenizer, are the same ids in
// every prompt of the source, and what follows is its own.
func TestSyntheticPrefixHit(t *testing.T) {
	varied, err := Uniform(40, 900)
	if err != nil {
		t.Fatal(err)
	}
	lengths := map[string]Dist{"fixed 500": fixedDist(t, 500), "fixed 7": fixedDist(t, 7), "uniform 40-900": varied}
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		codec, _ := tokenize.Get(enc)
		for _, share := range []float64{0, 0.3, 0.6, 0.95} {
			for name, in := range lengths {
				t.Run(fmt.Sprintf("%s/%v/%s", enc, share, name), func(t *testing.T) {
					s := newSynthetic(t, SyntheticConfig{Input: in, PrefixHit: hitShare(share), Tokenizer: enc})
					checkHitPrompts(t, s, codec, share)
				})
			}
		}
	}
}

// checkHitPrompts draws prompts from s and checks their shared prefixes
// and their own suffixes.
func checkHitPrompts(t *testing.T, s *Synthetic, codec tokenize.Codec, share float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 5))
	var longest []uint // the ids of the longest shared prefix so far
	suffixes := map[string]bool{}
	for range 40 {
		p := s.Next(r, "")
		ids := codec.Encode(p.Text)
		if len(ids) != p.InputTokens {
			t.Fatalf("reported %d tokens, the prompt has %d", p.InputTokens, len(ids))
		}
		if want := SharedTokens(share, p.InputTokens); p.SharedTokens != want {
			t.Fatalf("%d shared tokens of %d, want %d (round(%v × %d), below the whole)", p.SharedTokens, p.InputTokens, want, share, p.InputTokens)
		}
		shared := ids[:p.SharedTokens]
		if n := min(len(shared), len(longest)); !slices.Equal(shared[:n], longest[:n]) {
			t.Fatalf("the shared prefix of %d tokens differs from another prompt's", p.SharedTokens)
		}
		if len(shared) > len(longest) {
			longest = shared
		}
		if prefix := codec.Encode(s.sharedPrefix(p.SharedTokens)); !slices.Equal(prefix, shared) {
			t.Fatalf("the prompt's first %d tokens are not the shared prefix encoded alone", p.SharedTokens)
		}
		suffix := fmt.Sprint(ids[p.SharedTokens:])
		if suffixes[suffix] && p.InputTokens-p.SharedTokens > 2 {
			t.Fatalf("two prompts have the same own part %.60q", p.Text)
		}
		suffixes[suffix] = true
	}
}

func TestSharedTokens(t *testing.T) {
	tests := []struct {
		hit          float64
		tokens, want int
	}{
		{0, 500, 0},
		{0.6, 500, 300},
		{0.6, 7, 4},   // 4.2
		{0.3, 5, 2},   // 1.5 rounds up
		{0.95, 10, 9}, // 9.5 would round to the whole prompt
		{0.95, 1000, 950},
		{0.6, 1, 0}, // a one-token prompt is all its own
	}
	for _, tt := range tests {
		if got := SharedTokens(tt.hit, tt.tokens); got != tt.want {
			t.Errorf("SharedTokens(%v, %d) = %d, want %d", tt.hit, tt.tokens, got, tt.want)
		}
	}
}

// TestSyntheticPrefixHitSameText checks that a target share opens prompts
// with the text prefix_tokens gives, so sources share what they can.
func TestSyntheticPrefixHitSameText(t *testing.T) {
	fixed := newSynthetic(t, SyntheticConfig{Input: fixedDist(t, 300), PrefixTokens: 150})
	hit := newSynthetic(t, SyntheticConfig{Input: fixedDist(t, 300), PrefixHit: hitShare(0.5)})
	a, b := fixed.Next(rand.New(rand.NewPCG(1, 1)), ""), hit.Next(rand.New(rand.NewPCG(2, 2)), "")
	if a.SharedTokens != 150 || b.SharedTokens != 150 {
		t.Fatalf("shared tokens %d and %d, want 150", a.SharedTokens, b.SharedTokens)
	}
	prefix := hit.sharedPrefix(150)
	if !strings.HasPrefix(a.Text, prefix) || !strings.HasPrefix(b.Text, prefix) {
		t.Errorf("the two sources open with different text: %.60q, %.60q", a.Text, b.Text)
	}
}

func TestSyntheticPrefixHitErrors(t *testing.T) {
	in := fixedDist(t, 10)
	tests := []struct {
		name string
		c    SyntheticConfig
		want string
	}{
		{"one", SyntheticConfig{Input: in, PrefixHit: hitShare(1)}, "prefix_hit 1 out of range [0, 1)"},
		{"negative", SyntheticConfig{Input: in, PrefixHit: hitShare(-0.1)}, "prefix_hit -0.1 out of range"},
		{"percent", SyntheticConfig{Input: in, PrefixHit: hitShare(60)}, "prefix_hit 60 out of range"},
		{"with prefix_tokens", SyntheticConfig{Input: in, PrefixHit: hitShare(0.5), PrefixTokens: 8}, "prefix_hit and prefix_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewSynthetic(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func BenchmarkSyntheticNextPrefixHit(b *testing.B) {
	in, _ := Lognormal(1000, 300)
	s, err := NewSynthetic(SyntheticConfig{Input: in, PrefixHit: hitShare(0.6)})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		s.Next(r, "")
	}
}
