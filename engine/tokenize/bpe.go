package tokenize

import (
	"strings"

	"github.com/dlclark/regexp2/v2"
)

// bpe is the Codec of a tiktoken encoding: the text is split by the
// encoding's regex, and each piece that is no token is byte-pair merged.
// It gives tiktoken-go/tokenizer's ids exactly (the tests compare them),
// from a vocabulary loaded when first asked for instead of four linked in
// as map literals. Safe for concurrent use: the vocabulary is read-only,
// and regexp2 keeps per-call state. The regex engine is third-party code
// fed whatever a server or a dirty-data scenario produced: a failure in it
// must cost accuracy, never the run, hence the recovers.
type bpe struct {
	name  string
	split *regexp2.Regexp
	v     *vocabulary
}

func newBPE(name string) (*bpe, error) {
	v, err := loadVocabulary(name)
	if err != nil {
		return nil, err
	}
	return &bpe{name: name, split: regexp2.MustCompile(splits[name], regexp2.None), v: v}, nil
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
	if !b.tokens(s, func(uint) { n++ }) {
		return estimate(s)
	}
	return n + strings.Count(s, "\x7f")
}

// The split regexes are matched by the code tiktoken-go/tokenizer
// generated for them, which matches no piece at DEL (U+007F) and so drops
// it: "\x7f" has no ids where tiktoken has 1 (cl100k_base id 221: every
// byte has a token). DEL is a piece of its own or ends a punctuation piece
// whose merges never include it, so adding one token per DEL gives
// tiktoken's count; Count adds it, Encode keeps the library's ids.

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
	if !b.tokens(s, func(id uint) { ids = append(ids, id) }) {
		return nil
	}
	return ids
}

// tokens yields the ids of s in order; false if the regex failed, which
// only a match timeout does, and none is set.
func (b *bpe) tokens(s string, yield func(uint)) bool {
	m, err := b.split.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = b.split.FindNextMatch(m) {
		// String, not the offsets: the match is of runes, so invalid
		// UTF-8 is merged as the U+FFFD it was read as, as the library
		// does.
		piece := m.String()
		if id, ok := b.v.ids[piece]; ok {
			yield(id)
		} else {
			b.v.merge(piece, yield)
		}
	}
	return err == nil
}

// Decode implements Codec: the tokens' bytes, skipping ids of no token
// (a special token's or out of range).
func (b *bpe) Decode(ids []uint) string { return joinPieces(b.v.pieces, ids) }
