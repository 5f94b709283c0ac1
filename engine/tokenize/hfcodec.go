package tokenize

import (
	"strings"
	"unicode/utf8"
)

// segmenter is one backing of a tokenizer.json: it tokenizes the text
// between added tokens and turns ids back into text.
type segmenter interface {
	// encode appends the ids of seg; start says seg opens the input.
	encode(ids []uint, seg string, start bool) []uint
	// decode returns the text of ids, skipping ids it does not know.
	decode(ids []uint) string
}

// hfCodec is the Codec of a Hugging Face tokenizer.json: added tokens are
// found first, the rest goes to the segmenter. Safe for concurrent use.
// The segmenters are third-party code fed whatever a server or a
// dirty-data scenario produced: a failure in them must cost accuracy,
// never the run, hence the recovers, as in bpe.
type hfCodec struct {
	name  string
	added *addedTokens
	seg   segmenter
}

// Name implements Codec: the file's path as Get was given it.
func (h *hfCodec) Name() string { return h.name }

// Count implements Codec, falling back to the four-bytes-a-token estimate
// should the tokenizer fail.
func (h *hfCodec) Count(s string) (n int) {
	if s == "" {
		return 0
	}
	ids := h.Encode(s)
	if ids == nil {
		return estimate(s)
	}
	return len(ids)
}

// Encode implements Codec; nil when the tokenizer fails. Invalid UTF-8
// is read as U+FFFD, as servers read it from JSON.
func (h *hfCodec) Encode(s string) (ids []uint) {
	if s == "" {
		return nil
	}
	defer func() {
		if recover() != nil {
			ids = nil
		}
	}()
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	ids = make([]uint, 0, len(s)/3+1)
	h.added.split(s,
		func(seg string, at int) { ids = h.seg.encode(ids, seg, at == 0) },
		func(id int) { ids = append(ids, uint(id)) })
	return ids
}

// Decode implements Codec.
func (h *hfCodec) Decode(ids []uint) (s string) {
	if len(ids) == 0 {
		return ""
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return h.seg.decode(ids)
}

// setPiece sets the text of id in a decoding table, growing it as needed.
func setPiece(table []string, id int, text string) []string {
	if id >= len(table) {
		table = append(table, make([]string, id+1-len(table))...)
	}
	table[id] = text
	return table
}

// joinPieces concatenates the texts of ids, skipping unknown ones.
func joinPieces(table []string, ids []uint) string {
	var b strings.Builder
	for _, id := range ids {
		if id < uint(len(table)) {
			b.WriteString(table[id])
		}
	}
	return b.String()
}
