package dataset

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"unsafe"

	"github.com/llmload/llmload/engine/tokenize"
)

// TracePrompter builds the prompt of a trace record out of blocks: block k
// is the content of hash id HashIDs[k], BlockTokens single-token words
// drawn from a PCG seeded by the salt and the id, so equal ids give
// token-identical blocks wherever they appear and a server's prefix cache
// sees the sharing the trace recorded. Immutable; safe for concurrent use.
type TracePrompter struct {
	codec tokenize.Codec
	words []packedWord // single-token words, each with its leading space
	// start are the words that are one token without their space too. Each
	// block opens with one, so that any block can open a prompt (whose
	// leading space goes) and still count one token a word.
	start []packedWord
	block int
	// blockKey and tailKey seed the PCGs of blocks and of the words past
	// them, so that a record's own words never repeat a block.
	blockKey, tailKey uint64
}

// packedWord is a word laid out for a copy of fixed size: a prompt's
// words are written with one 16-byte store each instead of a call to
// memmove, which took half the time of a prompt.
type packedWord struct {
	b [wordBytes]byte
	n uint8
}

// wordBytes bounds a word with its space; the longest is 12 bytes.
const wordBytes = 15

func pack(words []string) []packedWord {
	out := make([]packedWord, 0, len(words))
	for _, w := range words {
		if len(w) <= wordBytes {
			pw := packedWord{n: uint8(len(w))}
			copy(pw.b[:], w)
			out = append(out, pw)
		}
	}
	return out
}

// minStartWords is the fewest prompt-opening words a tokenizer must offer.
const minStartWords = 16

// startSets caches, per encoding, the words of singleTokenWords that are
// one token without their leading space as well.
var startSets sync.Map // encoding name → []string

// NewTracePrompter prepares prompts in tokenizer (a tokenize.Get name: a
// tiktoken encoding, "" for the default, or a tokenizer.json path) with
// blockTokens tokens a hash id, salted by salt: another salt gives other
// text of the same lengths and sharing. It is an error for the tokenizer to
// have too few single-token words to build exact lengths.
func NewTracePrompter(tokenizer string, blockTokens int, salt uint64) (*TracePrompter, error) {
	if blockTokens < 1 || blockTokens > MaxSyntheticTokens {
		return nil, fmt.Errorf("trace prompts: block_tokens %d out of range [1, %d]", blockTokens, MaxSyntheticTokens)
	}
	codec, err := tokenize.Get(tokenizer)
	if err != nil {
		return nil, fmt.Errorf("trace prompts: %w", err)
	}
	words, err := singleTokenWords(codec)
	if err != nil {
		return nil, fmt.Errorf("trace prompts: %w: prompts of exact lengths cannot be built from its words", err)
	}
	start, err := startWords(codec, words)
	if err != nil {
		return nil, err
	}
	return &TracePrompter{codec: codec, words: pack(words), start: pack(start), block: blockTokens,
		blockKey: mix64(salt ^ 0x626c6f636b), tailKey: mix64(salt ^ 0x7461696c)}, nil
}

func startWords(codec tokenize.Codec, words []string) ([]string, error) {
	if v, ok := startSets.Load(codec.Name()); ok {
		return v.([]string), nil
	}
	var start []string
	for _, w := range words {
		if codec.Count(w[1:]) == 1 {
			start = append(start, w)
		}
	}
	if len(start) < minStartWords {
		return nil, fmt.Errorf("trace prompts: tokenizer %s has only %d words that are one token at a prompt's start, want %d", codec.Name(), len(start), minStartWords)
	}
	v, _ := startSets.LoadOrStore(codec.Name(), start)
	return v.([]string), nil
}

// Prompt returns the prompt of rec, the index-th record of its trace, and
// its length in tokens. A record with Text is sent as written (counted
// with the tokenizer); one with Messages has no prompt text ("", 0): the
// caller sends its messages. Otherwise the prompt is exactly rec.Input
// tokens (at most MaxSyntheticTokens): its blocks, the last cut short when
// Input ends inside it, then, past the blocks (or without any), words of
// the record's own, drawn from the salt and index, so that records share
// no prefix the trace did not record (but for a chance word or two). Ids
// beyond Input are ignored. No tokenizer call: every word is one token by
// construction, which the tests check against each tokenizer.
func (p *TracePrompter) Prompt(rec *TraceRecord, index int) (text string, tokens int) {
	switch {
	case rec.Text != "":
		return rec.Text, p.codec.Count(rec.Text)
	case rec.Messages != nil:
		return "", 0
	}
	n := min(rec.Input, MaxSyntheticTokens)
	if n <= 0 {
		return "", 0
	}
	// Two passes, the first only measuring, so that the text is one
	// allocation of its exact size: drawing a word costs less than the
	// copies of a growing buffer.
	size := p.compose(nil, rec.HashIDs, index, n)
	buf := make([]byte, size+wordBytes) // room for the last word's whole store
	p.compose(buf, rec.HashIDs, index, n)
	// buf is never written again: the string may take its bytes.
	return unsafe.String(&buf[1], size-1), n // a prompt does not start with a space
}

// Check counts the prompt Prompt builds for rec with the tokenizer, for a
// caller to spot-check a few records against the length Prompt reports.
func (p *TracePrompter) Check(rec *TraceRecord, index int) (got int) {
	text, _ := p.Prompt(rec, index)
	return p.codec.Count(text)
}

// compose writes the n words of a prompt to buf (when not nil, it has
// their size and wordBytes more) and returns their size in bytes.
func (p *TracePrompter) compose(buf []byte, ids []int64, index, n int) (size int) {
	for _, id := range ids {
		if n == 0 {
			return size
		}
		k := min(p.block, n)
		size = p.segment(buf, size, p.blockKey, uint64(id), k)
		n -= k
	}
	if n > 0 {
		size = p.segment(buf, size, p.tailKey, uint64(index), n)
	}
	return size
}

// segment writes the first n words of the block (or tail) that key and id
// seed to buf at off, and returns the offset after them.
func (p *TracePrompter) segment(buf []byte, off int, key, id uint64, n int) int {
	var r rand.PCG
	r.Seed(key, mix64(id^key))
	w := &p.start[pick(r.Uint64(), len(p.start))]
	for i := 0; ; {
		if buf != nil {
			*(*[wordBytes]byte)(buf[off:]) = w.b
		}
		off += int(w.n)
		if i++; i == n {
			return off
		}
		w = &p.words[pick(r.Uint64(), len(p.words))]
	}
}

// pick maps a random 64-bit value onto [0, n) by multiplying: no division,
// and a bias of n/2^64, nothing next to the handful of words.
func pick(v uint64, n int) int {
	hi, _ := bits.Mul64(v, uint64(n))
	return int(hi)
}

// mix64 is SplitMix64's finalizer, a bijection that spreads close inputs
// (consecutive ids) over unrelated PCG states.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
