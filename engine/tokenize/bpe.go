package tokenize

import (
	"strings"

	"github.com/tiktoken-go/tokenizer"
)

// bpe adapts a tiktoken-go codec to Codec. The wrapped codec only reads its
// vocabulary after loading and its error mode is never changed, so sharing
// it between goroutines is safe. It is third-party code fed with whatever a
// server or a dirty-data scenario produced: a failure inside it must cost
// accuracy, never the run, hence the recovers.
type bpe struct {
	c    tokenizer.Codec
	name string
}

// Name implements Codec.
func (b *bpe) Name() string { return b.name }

// Count implements Codec. Should the tokenizer fail, it falls back to the
// usual estimate of four bytes a token rather than to zero, so length
// filters and budgets stay roughly right.
func (b *bpe) Count(s string) (n int) {
	if s == "" {
		return 0
	}
	defer func() {
		if recover() != nil {
			n = estimate(s)
		}
	}()
	n, err := b.c.Count(s)
	if err != nil {
		return estimate(s)
	}
	return n + strings.Count(s, "\x7f")
}

// tiktoken-go v0.10.0's generated pre-tokenizer matches no piece at DEL
// (U+007F) and drops it, so "\x7f" counts 0 tokens where tiktoken counts 1
// (cl100k_base id 221: every byte has a token). DEL is a piece of its own
// or ends a punctuation piece whose merges never include it, so adding one
// token per DEL gives tiktoken's count; Count adds it.

func estimate(s string) int { return (len(s) + 3) / 4 }

// Encode implements Codec; it returns nil should the tokenizer fail.
func (b *bpe) Encode(s string) (ids []uint) {
	if s == "" {
		return nil
	}
	defer func() {
		if recover() != nil {
			ids = nil
		}
	}()
	ids, _, err := b.c.Encode(s)
	if err != nil {
		return nil
	}
	return ids
}

// Decode implements Codec.
func (b *bpe) Decode(ids []uint) string {
	if len(ids) == 0 {
		return ""
	}
	if s, err := b.c.Decode(ids); err == nil {
		return s
	}
	// One unknown id fails the whole slice; decode the rest one by one.
	// Pieces are raw bytes in the default error mode, so concatenating them
	// equals decoding them together.
	var out []byte
	one := make([]uint, 1)
	for _, id := range ids {
		one[0] = id
		if s, err := b.c.Decode(one); err == nil {
			out = append(out, s...)
		}
	}
	return string(out)
}
