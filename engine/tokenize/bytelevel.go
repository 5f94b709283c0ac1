package tokenize

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	tiktoken "github.com/pkoukk/tiktoken-go"
	"golang.org/x/text/unicode/norm"
)

// gpt2Split is the split of a ByteLevel pre-tokenizer that uses its own
// regex (use_regex, the default): GPT-2's.
const gpt2Split = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// maxPiece bounds the bytes of one pre-tokenized piece handed to the BPE
// merge, whose cost grows with the square of a piece's length: a piece
// longer than that (100 kB of one letter in a dirty-data prompt) is merged
// in slices, which may cost a token or two at each cut and keeps counting
// linear. No piece of real text is that long.
const maxPiece = 2048

// byteLevelPlan is how a byte-level BPE tokenizer (GPT-2, Llama 3, Qwen)
// prepares text: NFC or not, its split regex, a space before each stretch
// or not.
type byteLevelPlan struct {
	nfc         bool
	split       string // "" splits nothing
	prefixSpace bool
}

// byteLevelStyle reads the normalizer and pre-tokenizer of a byte-level
// BPE tokenizer: an optional NFC, then an optional Split by one regex
// followed by a ByteLevel step.
func byteLevelStyle(f *hfFile) (byteLevelPlan, error) {
	var p byteLevelPlan
	if n := f.Normalizer; n != nil {
		if !onlyNFC(n) {
			return p, fmt.Errorf("normalizer %q is not supported (byte-level BPE with no normalizer or NFC; %s)", n.Type, supported)
		}
		p.nfc = true
	}
	pt := f.PreTokenizer
	if pt == nil {
		return p, fmt.Errorf("no pre-tokenizer and no SentencePiece normalizer; %s", supported)
	}
	steps := []hfPreTokenizer{*pt}
	if pt.Type == "Sequence" {
		steps = pt.PreTokenizers
	}
	if len(steps) == 0 || len(steps) > 2 || steps[len(steps)-1].Type != "ByteLevel" {
		return p, fmt.Errorf("pre-tokenizer %s is not supported (want ByteLevel, or Split then ByteLevel; %s)", stepTypes(steps), supported)
	}
	bl := steps[len(steps)-1]
	p.prefixSpace = bl.AddPrefixSpace
	if bl.UseRegex == nil || *bl.UseRegex {
		p.split = gpt2Split
	}
	if len(steps) == 2 {
		re, err := splitRegex(steps[0], p.split != "")
		if err != nil {
			return p, err
		}
		p.split = re
	}
	return p, nil
}

// splitRegex checks the Split step before a ByteLevel one.
func splitRegex(s hfPreTokenizer, byteLevelSplits bool) (string, error) {
	switch {
	case s.Type != "Split":
		return "", fmt.Errorf("pre-tokenizer %s before ByteLevel is not supported (want Split)", s.Type)
	case s.Pattern.Regex == nil:
		return "", errors.New("a Split pre-tokenizer by a string is not supported (want a regex)")
	case s.Behavior != "Isolated" || s.Invert:
		return "", fmt.Errorf("a Split pre-tokenizer with behavior %q, invert %t is not supported (want Isolated, false)", s.Behavior, s.Invert)
	case byteLevelSplits:
		return "", errors.New("a Split followed by a ByteLevel step that splits again (use_regex) is not supported")
	}
	return *s.Pattern.Regex, nil
}

func onlyNFC(n *hfNormalizer) bool {
	if n.Type == "NFC" {
		return true
	}
	if n.Type != "Sequence" || len(n.Normalizers) == 0 {
		return false
	}
	for i := range n.Normalizers {
		if !onlyNFC(&n.Normalizers[i]) {
			return false
		}
	}
	return true
}

func stepTypes(steps []hfPreTokenizer) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Type
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// byteLevel counts with a byte-level BPE: each split piece is merged by
// tiktoken's algorithm (pkoukk/tiktoken-go), with the token ids as ranks.
// That is the tokenizers library's BPE exactly when the merges are in the
// order of the ids they make, which newByteLevel checks: so it is for
// GPT-2, Llama 3 and Qwen, whose vocabularies are tiktoken's or built the
// same way. Safe for concurrent use: everything is read-only after
// construction, and regexp2 and tiktoken-go keep per-call state.
type byteLevel struct {
	plan   byteLevelPlan
	split  *regexp2.Regexp // nil: no split
	bpe    *tiktoken.Tiktoken
	pieces []string // id → bytes
}

func newByteLevel(name string, m *bpeModel, added *addedTokens, p byteLevelPlan) (Codec, error) {
	ranks, err := byteRanks(m.vocab)
	if err != nil {
		return nil, err
	}
	if err := mergesInIDOrder(m); err != nil {
		return nil, err
	}
	b := &byteLevel{plan: p}
	if p.split != "" {
		if b.split, err = regexp2.Compile(p.split, regexp2.None); err != nil {
			return nil, fmt.Errorf("pre-tokenizer regex %q: %w", p.split, err)
		}
	}
	// Pieces come split already: the codec's own regex takes each whole.
	core, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, `[\s\S]+`)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	b.bpe = tiktoken.NewTiktoken(core, nil, nil)
	b.pieces = make([]string, 0, len(ranks))
	for tok, id := range ranks {
		b.pieces = setPiece(b.pieces, id, tok)
	}
	added.each(func(c string, id int) { b.pieces = setPiece(b.pieces, id, c) })
	return &hfCodec{name: name, added: added, seg: b}, nil
}

// byteRanks maps each vocabulary token, spelt in GPT-2's byte alphabet, to
// its bytes, and checks that every byte is a token of its own.
func byteRanks(vocab map[string]int) (map[string]int, error) {
	ranks := make(map[string]int, len(vocab))
	buf := make([]byte, 0, 64)
	for tok, id := range vocab {
		buf = buf[:0]
		for _, r := range tok {
			b, ok := unicodeByte[r]
			if !ok {
				return nil, fmt.Errorf("model.vocab token %q is not spelt in the byte-level alphabet; %s", tok, supported)
			}
			buf = append(buf, b)
		}
		ranks[string(buf)] = id
	}
	for b := range 256 {
		if _, ok := ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("model.vocab has no token for byte 0x%02X, which byte-level BPE needs", b)
		}
	}
	return ranks, nil
}

// mergesInIDOrder checks that each merge makes a token of an id no lower
// than the one before: the condition under which merging by id (tiktoken)
// and by merge rank (tokenizers) agree.
func mergesInIDOrder(m *bpeModel) error {
	last := -1
	for i, mg := range m.merges {
		id, ok := m.vocab[mg[0]+mg[1]]
		if !ok {
			return fmt.Errorf("model.merges[%d] makes %q, which is not in model.vocab", i, mg[0]+mg[1])
		}
		if id < last {
			return fmt.Errorf("model.merges are not in the order of the ids they make (merge %d makes id %d after id %d); "+
				"llmload's byte-level BPE needs that order, as GPT-2, Llama 3 and Qwen have it", i, id, last)
		}
		last = id
	}
	return nil
}

// encode implements segmenter.
func (b *byteLevel) encode(ids []uint, seg string, _ bool) []uint {
	if b.plan.nfc {
		seg = norm.NFC.String(seg)
	}
	if b.plan.prefixSpace && !strings.HasPrefix(seg, " ") {
		seg = " " + seg
	}
	if b.split == nil {
		return b.merge(ids, seg)
	}
	last := 0
	matches, err := b.split.FindAllStringIndex(seg, -1)
	if err != nil {
		panic(err) // only a match timeout, and none is set
	}
	for _, m := range matches {
		if m[0] > last { // Isolated keeps what the regex skipped
			ids = b.merge(ids, seg[last:m[0]])
		}
		ids = b.merge(ids, seg[m[0]:m[1]])
		last = m[1]
	}
	if last < len(seg) {
		ids = b.merge(ids, seg[last:])
	}
	return ids
}

// merge appends the ids of one piece, in slices of at most maxPiece bytes.
func (b *byteLevel) merge(ids []uint, piece string) []uint {
	for len(piece) > 0 {
		n := len(piece)
		if n > maxPiece {
			n = maxPiece
			for n > 0 && !utf8.RuneStart(piece[n]) {
				n--
			}
		}
		for _, id := range b.bpe.EncodeOrdinary(piece[:n]) {
			ids = append(ids, uint(id))
		}
		piece = piece[n:]
	}
	return ids
}

// decode implements segmenter.
func (b *byteLevel) decode(ids []uint) string { return joinPieces(b.pieces, ids) }

// unicodeByte inverts GPT-2's bytes_to_unicode, the alphabet byte-level
// vocabularies are spelt in: printable bytes stand for themselves, the
// others for U+0100 onwards in byte order.
var unicodeByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	next := rune(0x100)
	for b := range 256 {
		if printableByte(byte(b)) {
			m[rune(b)] = byte(b)
		} else {
			m[next] = byte(b)
			next++
		}
	}
	return m
}()

func printableByte(b byte) bool {
	return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE
}
