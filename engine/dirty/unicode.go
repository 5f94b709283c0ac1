package dirty

import (
	"math/rand/v2"
	"strings"

	"github.com/llmload/llmload/engine"
)

// Invisible characters: zero-width space, non-joiner, joiner, word joiner
// and the byte order mark (zero-width no-break space).
const (
	zwsp = '\u200b'
	zwnj = '\u200c'
	zwj  = '\u200d'
	wj   = '\u2060'
	bom  = '\ufeff'
)

var invisibles = []rune{zwsp, zwnj, zwj, wj, bom}

// sprinkle writes s with a random one of extra after about one rune in
// every; every ≥ 1.
func sprinkle(s string, extra []string, every int, rng *rand.Rand) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	for _, r := range s {
		b.WriteRune(r)
		if rng.IntN(every) == 0 {
			b.WriteString(extra[rng.IntN(len(extra))])
		}
	}
	return b.String()
}

func runeStrings(rs []rune) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// invisible starts with a BOM, as text pasted from a Windows file does,
// and always holds a zero-width space and a word joiner.
func invisible(req *engine.ChatRequest, rng *rand.Rand) error {
	decorate(req, func(s string) string {
		return string(bom) + sprinkle(s, runeStrings(invisibles), 3, rng) + string(zwsp) + string(wj)
	})
	return nil
}

// Bidirectional controls.
const (
	lre = "\u202a" // left-to-right embedding
	rle = "\u202b" // right-to-left embedding
	pdf = "\u202c" // pop directional formatting
	lro = "\u202d" // left-to-right override
	rlo = "\u202e" // right-to-left override
	lri = "\u2066" // left-to-right isolate
	rli = "\u2067" // right-to-left isolate
	fsi = "\u2068" // first strong isolate
	pdi = "\u2069" // pop directional isolate
)

// bidiPatterns wrap text in bidirectional controls: balanced overrides,
// Trojan-Source-style isolates, and unbalanced controls that never pop.
var bidiPatterns = []func(string) string{
	func(s string) string { return rlo + s + pdf + " " + lro + "olleh" + pdf },
	func(s string) string { return rli + lro + s + pdf + pdi + " " + lri + "שלום" + pdi },
	func(s string) string { return fsi + s + pdi + rle + "مرحبا" + pdf + lre + "end" },
	func(s string) string { return rlo + rlo + rli + s + lre },
}

func bidi(req *engine.ChatRequest, rng *rand.Rand) error {
	p := bidiPatterns[rng.IntN(len(bidiPatterns))]
	decorate(req, func(s string) string { return p(s) + " " + rlo + "!" + pdf })
	return nil
}

// controls are C0 controls and DEL, as a terminal paste or a binary file
// would bring them; tab, newline and carriage return are left out as
// ordinary whitespace.
var controls = []string{"\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1b[31m", "\x1b[2J", "\x1f", "\x7f"}

// controlChars always includes NUL, ESC and DEL.
func controlChars(req *engine.ChatRequest, rng *rand.Rand) error {
	decorate(req, func(s string) string {
		return "\x00" + sprinkle(s, controls, 4, rng) + "\x1b[0m\x7f"
	})
	return nil
}

// Astral-plane text. The emoji include ZWJ sequences (which contain the
// zero-width joiner U+200D by construction), regional-indicator flags and
// skin-tone modifiers; the CJK characters are from Extension B
// (U+20000–U+2A6DF), outside the Basic Multilingual Plane.
var (
	emoji = []string{"😀", "🦙", "🚀", "👨‍👩‍👧‍👦", "🏳️‍🌈", "👩🏽‍💻", "🇯🇵", "🇺🇳", "🇪🇺", "👍🏿"}
	cjkB  = []string{"𠀀", "𠜎", "𠮷", "𡃁", "𤭢", "𪚥", "𩸽", "𠀋"}
)

// emojiCJK always ends with a ZWJ family, a flag and two Extension B
// characters, so each property is present whatever rng picks.
func emojiCJK(req *engine.ChatRequest, rng *rand.Rand) error {
	mixed := append(append([]string{}, emoji...), cjkB...)
	decorate(req, func(s string) string {
		return sprinkle(s, mixed, 3, rng) + " 👨‍👩‍👧‍👦🇯🇵𠮷𪚥"
	})
	return nil
}
