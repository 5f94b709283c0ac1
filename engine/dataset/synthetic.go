package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llmload/llmload/engine/tokenize"
)

// MaxSyntheticTokens caps a synthetic length: a lognormal tail must not
// build a prompt of gigabytes.
const MaxSyntheticTokens = 1 << 20

// SyntheticConfig describes synthetic requests.
type SyntheticConfig struct {
	Input  Dist // prompt length in tokens; required
	Output Dist // answer length in tokens (max_tokens); nil: Next returns 0
	// PrefixTokens tokens open every prompt with the same text, so a
	// server's prefix cache hits on them.
	PrefixTokens int
	Tokenizer    string // encoding name; "" is tokenize.DefaultName
}

// Synthetic makes prompts of drawn token lengths out of single-token
// words. Immutable; safe for concurrent use.
type Synthetic struct {
	in, out Dist
	codec   tokenize.Codec
	words   []string
	prefix  string // PrefixTokens words, each with its leading space
	ends    []int  // ends[k]: byte length of prefix's first k words
}

// NewSynthetic checks c and prepares its word list and shared prefix.
func NewSynthetic(c SyntheticConfig) (*Synthetic, error) {
	if c.Input == nil {
		return nil, errors.New("synthetic: no input length distribution")
	}
	if c.PrefixTokens < 0 || c.PrefixTokens > MaxSyntheticTokens {
		return nil, fmt.Errorf("synthetic: prefix_tokens %d out of range [0, %d]", c.PrefixTokens, MaxSyntheticTokens)
	}
	codec, err := tokenize.Get(c.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("synthetic: %w", err)
	}
	words, err := singleTokenWords(codec)
	if err != nil {
		return nil, fmt.Errorf("synthetic: %w", err)
	}
	s := &Synthetic{in: c.Input, out: c.Output, codec: codec, words: words}
	s.buildPrefix(c.PrefixTokens)
	return s, nil
}

// buildPrefix draws the shared prefix from a fixed seed, so it is the same
// text in every process and every run: caches warmed by one run serve the
// next.
func (s *Synthetic) buildPrefix(n int) {
	r := rand.New(rand.NewPCG(0x6c6c6d6c6f6164, 1))
	var b strings.Builder
	s.ends = make([]int, n+1)
	for k := 1; k <= n; k++ {
		w := s.words[r.IntN(len(s.words))]
		for k == 1 && s.codec.Count(w[1:]) != 1 {
			w = s.words[r.IntN(len(s.words))] // opens the prompt: one token without its space too
		}
		b.WriteString(w)
		s.ends[k] = b.Len()
	}
	s.prefix = b.String()
}

// Next draws an input and an output length and returns a prompt of exactly
// the input length in tokens when it can (always with the built-in words;
// a long uniquePrefix may exceed a short length), its actual token count,
// and the output length. Lengths are rounded and clamped to [1,
// MaxSyntheticTokens]. The prompt opens with the shared prefix, or, when
// uniquePrefix is not empty (e.g. "[req_17] "), with uniquePrefix instead,
// to defeat prefix caching. The same rng state gives the same result.
func (s *Synthetic) Next(r *rand.Rand, uniquePrefix string) (prompt string, inputTokens, outputTokens int) {
	in := length(s.in.Draw(r))
	if s.out != nil {
		outputTokens = length(s.out.Draw(r))
	}
	head, headTokens := uniquePrefix, 0
	if head == "" {
		k := min(in, len(s.ends)-1)
		head, headTokens = strings.TrimPrefix(s.prefix[:s.ends[k]], " "), k
	} else {
		headTokens = s.codec.Count(head)
	}
	prompt, inputTokens = s.fit(r, head, max(in-headTokens, 0), in)
	return prompt, inputTokens, outputTokens
}

// fit appends body words to head until the prompt counts want tokens. Each
// word is one token, so the first guess is almost always exact; the loop
// corrects the rare merge at the junction with head.
func (s *Synthetic) fit(r *rand.Rand, head string, n, want int) (string, int) {
	var body []string
	best, bestTokens := "", -1
	for range 8 {
		for len(body) < n {
			body = append(body, s.words[r.IntN(len(s.words))])
		}
		text := compose(head, body[:n])
		got := s.codec.Count(text)
		if bestTokens < 0 || abs(got-want) < abs(bestTokens-want) {
			best, bestTokens = text, got
		}
		if got == want || (got > want && n == 0) {
			break
		}
		n = max(n+want-got, 0)
	}
	return best, bestTokens
}

// compose joins head and the words; without a head, the leading space of
// the first word goes, as no prompt starts with a space.
func compose(head string, words []string) string {
	var b strings.Builder
	size := len(head)
	for _, w := range words {
		size += len(w)
	}
	b.Grow(size)
	b.WriteString(head)
	for _, w := range words {
		b.WriteString(w)
	}
	if head == "" {
		return strings.TrimPrefix(b.String(), " ")
	}
	return b.String()
}

// length turns a drawn value into a token count.
func length(v float64) int {
	if math.IsNaN(v) || v < 1 {
		return 1
	}
	if v > MaxSyntheticTokens {
		return MaxSyntheticTokens
	}
	return int(math.Round(v))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
