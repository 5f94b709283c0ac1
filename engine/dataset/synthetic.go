package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	// PrefixHit, when set, is the share of each prompt's tokens that opens
	// it with the shared prefix (SharedTokens of its length), in [0, 1):
	// a target prefix-cache hit rate. It excludes PrefixTokens.
	PrefixHit *float64
	Tokenizer string // encoding name; "" is tokenize.DefaultName
}

// SyntheticPrompt is one prompt Synthetic made.
type SyntheticPrompt struct {
	Text         string
	InputTokens  int // Text's tokens, counted with the tokenizer
	OutputTokens int // the answer length drawn (max_tokens); 0 without Output
	// SharedTokens are the first tokens of Text that repeat the prefix
	// every prompt of the source opens with (PrefixTokens or PrefixHit);
	// 0 for a prompt opened by a unique prefix.
	SharedTokens int
}

// Synthetic makes prompts of drawn token lengths out of single-token
// words. Immutable; safe for concurrent use.
type Synthetic struct {
	in, out Dist
	codec   tokenize.Codec
	words   []string
	slots   []wordSlot     // words, padded for compose
	check   *junctionCheck // the tokenizer's, shared
	prefix  string         // PrefixTokens words, each with its leading space
	ends    []int          // ends[k]: byte length of prefix's first k words
	hit     *float64       // PrefixHit; nil when not asked
}

// junctionCheck holds the check that a prompt counted by its words (see
// fit) has the tokens a whole count finds: fits counts the prompts counted
// so; whole is set once such a count differed. It belongs to the
// tokenizer, shared by every Synthetic of the process: each VU makes its
// own, and 64 VUs each tokenizing their first prompts whole cost a 32k-token
// run more CPU than all its other prompts.
type junctionCheck struct {
	fits  atomic.Uint64
	whole atomic.Bool
}

// wordSet is a tokenizer's single-token words as a Synthetic uses them.
type wordSet struct {
	words []string
	slots []wordSlot
	check junctionCheck
}

// paddedSets caches a wordSet per tokenizer name.
var paddedSets sync.Map

func sharedWordSet(codec tokenize.Codec) (*wordSet, error) {
	if v, ok := paddedSets.Load(codec.Name()); ok {
		return v.(*wordSet), nil
	}
	words, err := singleTokenWords(codec)
	if err != nil {
		return nil, err
	}
	set := &wordSet{words: words, slots: padWords(words)}
	set.verify(codec)
	v, _ := paddedSets.LoadOrStore(codec.Name(), set)
	return v.(*wordSet), nil
}

// verify makes the first whole checks before the run, on prompts of
// verifyWords words with and without a head, so that the run's first
// prompts are not tokenized whole on the VUs' time.
func (set *wordSet) verify(codec tokenize.Codec) {
	s := &Synthetic{codec: codec, words: set.words, slots: set.slots, check: &set.check}
	r := rand.New(rand.NewPCG(prefixSeed, verifyStream))
	body := make([]uint32, verifyWords)
	for i := range wholeFirst {
		for j := range body {
			body[j] = uint32(r.IntN(len(s.words)))
		}
		head := ""
		if i%2 == 1 {
			head = fmt.Sprintf("[req_%d] ", i)
		}
		if s.wordsCount(head, codec.Count(head), body) != codec.Count(s.compose(head, body)) {
			set.check.whole.Store(true)
			return
		}
	}
	set.check.fits.Store(wholeFirst)
}

// verifyWords and verifyStream shape verify's prompts.
const verifyWords, verifyStream = 2000, 7

// NewSynthetic checks c and prepares its word list and shared prefix.
func NewSynthetic(c SyntheticConfig) (*Synthetic, error) {
	if c.Input == nil {
		return nil, errors.New("synthetic: no input length distribution")
	}
	if c.PrefixTokens < 0 || c.PrefixTokens > MaxSyntheticTokens {
		return nil, fmt.Errorf("synthetic: prefix_tokens %d out of range [0, %d]", c.PrefixTokens, MaxSyntheticTokens)
	}
	if err := checkPrefixHit(c); err != nil {
		return nil, err
	}
	codec, err := tokenize.Get(c.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("synthetic: %w", err)
	}
	set, err := sharedWordSet(codec)
	if err != nil {
		return nil, fmt.Errorf("synthetic: %w", err)
	}
	s := &Synthetic{in: c.Input, out: c.Output, codec: codec, words: set.words, slots: set.slots, check: &set.check, hit: c.PrefixHit}
	s.buildPrefix(c.PrefixTokens)
	return s, nil
}

// checkPrefixHit refuses a target hit share outside [0, 1) (a share of 1
// would leave no token of a prompt its own) and one beside a fixed prefix
// length, which would say the prefix's length twice.
func checkPrefixHit(c SyntheticConfig) error {
	if c.PrefixHit == nil {
		return nil
	}
	if h := *c.PrefixHit; math.IsNaN(h) || h < 0 || h >= 1 {
		return fmt.Errorf("synthetic: prefix_hit %v out of range [0, 1)", h)
	}
	if c.PrefixTokens > 0 {
		return errors.New("synthetic: prefix_hit and prefix_tokens both set the shared prefix's length: give one")
	}
	return nil
}

// prefixSeed and prefixStream seed the shared prefix's words: fixed, so
// that it is the same text in every process and every run, and caches
// warmed by one run serve the next.
const prefixSeed, prefixStream = 0x6c6c6d6c6f6164, 1

// prefixWords calls each with the first n words of the shared prefix, in
// order, each with its leading space. PrefixTokens and PrefixHit draw the
// same sequence, so a prefix of k tokens is the same text either way.
func (s *Synthetic) prefixWords(n int, each func(w string)) {
	r := rand.New(rand.NewPCG(prefixSeed, prefixStream))
	for k := 1; k <= n; k++ {
		w := s.words[r.IntN(len(s.words))]
		for k == 1 && s.codec.Count(w[1:]) != 1 {
			w = s.words[r.IntN(len(s.words))] // opens the prompt: one token without its space too
		}
		each(w)
	}
}

// buildPrefix keeps the PrefixTokens words of the shared prefix, which
// every prompt opens with.
func (s *Synthetic) buildPrefix(n int) {
	var b strings.Builder
	s.ends = make([]int, 1, n+1)
	s.prefixWords(n, func(w string) {
		b.WriteString(w)
		s.ends = append(s.ends, b.Len())
	})
	s.prefix = b.String()
}

// sharedPrefix is the shared prefix's first n tokens as a prompt opens
// with them. PrefixHit's lengths vary with each prompt's, so it is made
// for each prompt rather than kept: drawing it costs what drawing the
// prompt's own words does.
func (s *Synthetic) sharedPrefix(n int) string {
	var b strings.Builder
	s.prefixWords(n, func(w string) { b.WriteString(w) })
	return strings.TrimPrefix(b.String(), " ")
}

// SharedTokens is how many of a prompt's tokens open it with the shared
// prefix for the target hit share hit: round(hit × tokens), but never the
// whole prompt, whose last token is its own (a server never serves a
// prompt's last token from its cache anyway).
func SharedTokens(hit float64, tokens int) int {
	return max(min(int(math.Round(hit*float64(tokens))), tokens-1), 0)
}

// Next draws an input and an output length and returns a prompt of exactly
// the input length in tokens when it can (always with the built-in words;
// a long uniquePrefix may exceed a short length), with its actual token
// count and the output length. Lengths are rounded and clamped to [1,
// MaxSyntheticTokens]. The prompt opens with the shared prefix (all of
// PrefixTokens, or SharedTokens of its length with PrefixHit), or, when
// uniquePrefix is not empty (e.g. "[req_17] "), with uniquePrefix instead,
// to defeat prefix caching; its other words are drawn from r, so they are
// its own. The same rng state gives the same result.
func (s *Synthetic) Next(r *rand.Rand, uniquePrefix string) SyntheticPrompt {
	in := length(s.in.Draw(r))
	var p SyntheticPrompt
	if s.out != nil {
		p.OutputTokens = length(s.out.Draw(r))
	}
	head, headTokens := s.head(in, uniquePrefix)
	if uniquePrefix == "" {
		p.SharedTokens = headTokens
	}
	p.Text, p.InputTokens = s.fit(r, head, headTokens, max(in-headTokens, 0), in)
	return p
}

// head is the text a prompt of in tokens opens with, and its tokens.
func (s *Synthetic) head(in int, uniquePrefix string) (string, int) {
	switch {
	case uniquePrefix != "":
		return uniquePrefix, s.codec.Count(uniquePrefix)
	case s.hit != nil:
		k := SharedTokens(*s.hit, in)
		return s.sharedPrefix(k), k
	}
	k := min(in, len(s.ends)-1)
	return strings.TrimPrefix(s.prefix[:s.ends[k]], " "), k
}

// fit appends body words to head until the prompt counts want tokens.
// Each word is one token, so the first guess is almost always exact; the
// loop corrects the rare merge at the junction with head. headTokens are
// head's own tokens.
//
// A prompt is not tokenized whole: its words are single tokens that the
// tokenizers' pre-tokenizers keep apart, so its count is head's, plus one
// per word, plus what the junction of head's end and the first words
// changes, counted on those few bytes alone. That makes a 32k-token prompt
// cost its words, not a tokenization (about 10 ms). A sample of prompts is
// tokenized whole to hold the sum to the truth; a tokenizer for which it
// ever differs (a tokenizer.json whose merges cross word boundaries) gets
// every prompt tokenized whole from then on.
//
// The count needs only the words' indices, so the text is composed once,
// for the count that fits.
func (s *Synthetic) fit(r *rand.Rand, head string, headTokens, n, want int) (string, int) {
	// The words as indices: a slice of 32k strings would be 32k pointers
	// for the collector to scan and barrier while it grows.
	body := make([]uint32, 0, n)
	if !s.check.whole.Load() {
		n, got := s.search(r, &body, n, want, func(words []uint32) int {
			return s.wordsCount(head, headTokens, words)
		})
		text := s.compose(head, body[:n])
		if n <= junctionWords {
			return text, got // counted whole
		}
		if k := s.check.fits.Add(1); k > wholeFirst && k%wholeEvery != 0 {
			return text, got
		}
		whole := s.codec.Count(text)
		if whole == got {
			return text, got
		}
		s.check.whole.Store(true)
		n = max(n+want-whole, 0)
	}
	n, got := s.search(r, &body, n, want, func(words []uint32) int {
		return s.codec.Count(s.compose(head, words))
	})
	return s.compose(head, body[:n]), got
}

// search draws words into body until head and body[:n] count want
// tokens, or as near as eight tries come, and returns that n and its
// count. Words drawn for a longer try are kept for the next.
func (s *Synthetic) search(r *rand.Rand, body *[]uint32, n, want int, count func([]uint32) int) (int, int) {
	bestN, bestTokens := 0, -1
	for range 8 {
		for len(*body) < n {
			*body = append(*body, uint32(r.IntN(len(s.words))))
		}
		got := count((*body)[:n])
		if bestTokens < 0 || abs(got-want) < abs(bestTokens-want) {
			bestN, bestTokens = n, got
		}
		if got == want || (got > want && n == 0) {
			break
		}
		n = max(n+want-got, 0)
	}
	return bestN, bestTokens
}

// junctionWords and junctionBytes bound the text around head's end that
// the junction count reads: merges reach a few words at most.
const junctionWords, junctionBytes = 16, 64

// wholeFirst prompts are tokenized whole to check the junction count,
// and one in wholeEvery after them: a tokenizer the sum does not fit
// shows on its first prompts, and a whole count of a 32k-token prompt
// costs fifty of its junction counts.
const wholeFirst, wholeEvery = 8, 1024

// wordsCount is the tokens of head then words (see fit): from the
// junction of head's end and the first words alone when words are many.
func (s *Synthetic) wordsCount(head string, headTokens int, words []uint32) int {
	if len(words) <= junctionWords {
		return s.codec.Count(s.compose(head, words))
	}
	tail := head[max(len(head)-junctionBytes, 0):]
	j := s.compose(tail, words[:junctionWords])
	// Without a head, compose dropped the first word's space: the
	// junction count holds that word's tokens without it.
	return headTokens + len(words) + s.codec.Count(j) - s.codec.Count(tail) - junctionWords
}

// wordSlot is a word padded to a fixed size, so compose copies it as one
// 16-byte move and advances by its length, where a copy of each few-byte
// word was most of a 32k-token prompt's cost. n is 0 for a longer word.
type wordSlot struct {
	b [slotBytes]byte
	n uint8
}

const slotBytes = 16

func padWords(words []string) []wordSlot {
	slots := make([]wordSlot, len(words))
	for i, w := range words {
		if len(w) <= slotBytes {
			copy(slots[i].b[:], w)
			slots[i].n = uint8(len(w))
		}
	}
	return slots
}

// compose joins head and the words (indices into s.words); without a
// head, the leading space of the first word goes, as no prompt starts
// with a space.
func (s *Synthetic) compose(head string, words []uint32) string {
	size := len(head)
	for _, w := range words {
		size += len(s.words[w])
	}
	buf := make([]byte, size+slotBytes) // room for the last word's padding
	pos := copy(buf, head)
	for _, w := range words {
		if sl := &s.slots[w]; sl.n > 0 {
			*(*[slotBytes]byte)(buf[pos:]) = sl.b
			pos += int(sl.n)
		} else {
			pos += copy(buf[pos:], s.words[w])
		}
	}
	text := buf[:pos]
	if head == "" && len(text) > 0 && text[0] == ' ' {
		text = text[1:]
	}
	if len(text) == 0 {
		return ""
	}
	// buf is never written again: the string can share it.
	return unsafe.String(&text[0], len(text))
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
