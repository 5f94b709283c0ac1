package sim

import (
	"unicode"
	"unicode/utf8"
)

// Chat-template overheads, in tokens, as OpenAI's cookbook counts them: the
// role markers around every message, and the primer of the reply.
const (
	messageOverhead = 4
	replyPrimer     = 3
)

// CountTokens approximates the number of tokens s encodes to, the way BPE
// tokenizers behave on average: one token per 4 ASCII bytes, one per CJK
// character (Han, kana, Hangul, CJK and full-width punctuation) and one per
// 2 other non-ASCII characters (accented Latin, Cyrillic, emoji, invalid
// UTF-8 bytes). It is deterministic and does not allocate.
func CountTokens(s string) int {
	quarters := 0
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			quarters++
		case isCJK(r):
			quarters += 4
		default:
			quarters += 2
		}
	}
	return (quarters + 3) / 4
}

func isCJK(r rune) bool {
	switch {
	case r >= 0x3000 && r <= 0x303f, r >= 0xff00 && r <= 0xffef:
		return true // CJK symbols and punctuation, full-width forms
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
