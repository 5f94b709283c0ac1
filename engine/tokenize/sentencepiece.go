package tokenize

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	sentencepiece "github.com/eliben/go-sentencepiece"
	"google.golang.org/protobuf/encoding/protowire"
)

// spaceMark is SentencePiece's visible space.
const spaceMark = "▁"

// sentencePiecePlan is how a SentencePiece-style tokenizer (Llama 2,
// Mistral, TinyLlama) prepares text: spaces become ▁, and a ▁ opens each
// stretch of text (every) or only the input's first (first).
type sentencePiecePlan struct {
	prependEvery, prependFirst bool
}

// sentencePieceStyle recognises the two spellings of SentencePiece's
// normalization in tokenizer.json: the normalizers Prepend("▁") and
// Replace(" ", "▁") with no pre-tokenizer (the "legacy" Llama 2 files), or
// a Metaspace pre-tokenizer with no normalizer. ok is false for any other
// file, which may be byte-level.
func sentencePieceStyle(f *hfFile) (p sentencePiecePlan, ok bool, err error) {
	if f.PreTokenizer == nil && f.Normalizer != nil {
		return legacyPlan(f.Normalizer)
	}
	mt := f.PreTokenizer
	if mt == nil || mt.Type != "Metaspace" {
		return p, false, nil
	}
	if f.Normalizer != nil {
		return p, true, fmt.Errorf("normalizer %q with a Metaspace pre-tokenizer is not supported", f.Normalizer.Type)
	}
	if mt.Replacement != spaceMark {
		return p, true, fmt.Errorf("Metaspace replacement %q is not supported (want %q)", mt.Replacement, spaceMark)
	}
	switch mt.PrependScheme {
	case "always":
		p.prependEvery = true
	case "first":
		p.prependFirst = true
	case "never":
	case "":
		p.prependEvery = mt.AddPrefixSpace
	default:
		return p, true, fmt.Errorf("Metaspace prepend_scheme %q is not supported", mt.PrependScheme)
	}
	return p, true, nil
}

// legacyPlan reads Sequence[Prepend("▁"), Replace(" ", "▁")] (Prepend
// optional); ok is false when the normalizer is something else.
func legacyPlan(n *hfNormalizer) (p sentencePiecePlan, ok bool, err error) {
	steps := []hfNormalizer{*n}
	if n.Type == "Sequence" {
		steps = n.Normalizers
	}
	replaced := false
	for _, s := range steps {
		switch {
		case s.Type == "Prepend" && s.Prepend == spaceMark && !replaced:
			p.prependEvery = true
		case s.Type == "Replace" && s.Pattern.String != nil && *s.Pattern.String == " " && s.Content == spaceMark:
			replaced = true
		default:
			return p, false, nil
		}
	}
	return p, replaced, nil
}

// sentencePiece counts with eliben/go-sentencepiece's BPE, SentencePiece's
// own algorithm (merge the adjacent pair whose joined piece scores best,
// leftmost first; bytes for what the vocabulary lacks), fed a model proto
// built from the tokenizer.json: each piece scores minus the rank of the
// first merge that makes it, so the best score is the merge the tokenizers
// library would apply first. Safe for concurrent use: the processor only
// reads its tables.
type sentencePiece struct {
	plan   sentencePiecePlan
	proc   *sentencepiece.Processor
	pieces []string // id → bytes, ▁ already a space
}

func newSentencePiece(name string, m *bpeModel, added *addedTokens, p sentencePiecePlan) (Codec, error) {
	proto, err := modelProto(m, added)
	if err != nil {
		return nil, err
	}
	proc, err := sentencepiece.NewProcessor(bytes.NewReader(proto))
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	s := &sentencePiece{plan: p, proc: proc, pieces: make([]string, 0, len(m.vocab))}
	for piece, id := range m.vocab {
		if b, ok := byteToken(piece); ok && m.bytes {
			piece = string([]byte{b})
		}
		s.pieces = setPiece(s.pieces, id, strings.ReplaceAll(piece, spaceMark, " "))
	}
	added.each(func(c string, id int) { s.pieces = setPiece(s.pieces, id, c) })
	return &hfCodec{name: name, added: added, seg: s}, nil
}

// encode implements segmenter. The processor turns spaces into ▁ itself.
func (s *sentencePiece) encode(ids []uint, seg string, start bool) []uint {
	if s.plan.prependEvery || (s.plan.prependFirst && start) {
		seg = " " + seg
	}
	for _, t := range s.proc.Encode(seg) {
		ids = append(ids, uint(t.ID))
	}
	return ids
}

// decode implements segmenter: the space the tokenizer put first goes, as
// the tokenizers library's decoder strips it.
func (s *sentencePiece) decode(ids []uint) string {
	out := joinPieces(s.pieces, ids)
	if s.plan.prependEvery || s.plan.prependFirst {
		out = strings.TrimPrefix(out, " ")
	}
	return out
}

// Types of a SentencePiece model proto's pieces.
const (
	pieceNormal  = 1
	pieceUnknown = 2
	pieceControl = 3
	pieceByte    = 6
)

// modelProto writes the sentencepiece ModelProto (sentencepiece_model.proto:
// pieces = 1, trainer_spec = 2 with model_type = 3 and byte_fallback = 35,
// normalizer_spec = 3 with add_dummy_prefix = 3 and
// remove_extra_whitespaces = 4) of a tokenizer.json's BPE model. Pieces sit
// at their ids; ids the vocabulary skips get unmatchable control pieces.
func modelProto(m *bpeModel, added *addedTokens) ([]byte, error) {
	pieces, err := pieceTable(m)
	if err != nil {
		return nil, err
	}
	score := mergeScores(m)
	special := map[int]bool{}
	added.each(func(_ string, id int) { special[id] = true })
	var out []byte
	for id, piece := range pieces {
		typ, sc := pieceNormal, score[piece]
		switch _, isByte := byteToken(piece); {
		case piece == "":
			piece, typ = fmt.Sprintf("<llmload:unused:%d>", id), pieceControl
		case m.unk != nil && piece == *m.unk:
			typ = pieceUnknown
		case special[id]:
			typ = pieceControl
		case isByte && m.bytes:
			typ = pieceByte
		case sc == 0 && len([]rune(piece)) > 1:
			typ = pieceControl // no merge makes it: the tokenizers library never produces it
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, pieceProto(piece, sc, typ))
	}
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, pieceProto(bufferPiece(pieces), 0, pieceNormal))
	trainer := protoVarint(protoVarint(nil, 3, 2), 35, boolVarint(m.bytes)) // model_type BPE
	normalizer := protoVarint(protoVarint(nil, 3, 0), 4, 0)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendBytes(out, trainer)
	out = protowire.AppendTag(out, 3, protowire.BytesType)
	return protowire.AppendBytes(out, normalizer), nil
}

// maxIDSpread bounds the ids of a vocabulary of n pieces to below
// maxIDSpread·n, so that a stray huge id in a malformed file is an error,
// not a gigabyte table.
const maxIDSpread = 4

// bufferPiece is a piece no text can make (it holds a byte invalid in
// UTF-8, and Encode's input is valid), twice as long as the longest real
// one: go-sentencepiece v0.6.0 joins two neighbouring symbols in a buffer
// as long as its longest piece, and panics when the pair is longer. It
// sits after the last id, which Encode therefore never returns.
func bufferPiece(pieces []string) string {
	n := 0
	for _, p := range pieces {
		n = max(n, len(p))
	}
	return "\xff" + strings.Repeat("-", 2*n+8)
}

// pieceTable lists the vocabulary by id; go-sentencepiece needs an unknown
// piece, which the tokenizers library does too once byte fallback fails.
func pieceTable(m *bpeModel) ([]string, error) {
	if m.unk == nil {
		return nil, fmt.Errorf("a SentencePiece-style model needs model.unk_token")
	}
	if _, ok := m.vocab[*m.unk]; !ok {
		return nil, fmt.Errorf("model.unk_token %q is not in model.vocab", *m.unk)
	}
	n := 0
	for _, id := range m.vocab {
		if id < 0 || id >= maxIDSpread*len(m.vocab) {
			return nil, fmt.Errorf("model.vocab id %d is out of range", id)
		}
		n = max(n, id+1)
	}
	pieces := make([]string, n)
	for piece, id := range m.vocab {
		pieces[id] = piece
	}
	return pieces, nil
}

// mergeScores gives each piece a merge makes minus that merge's rank
// (minus one, so that 0 means no merge makes it).
func mergeScores(m *bpeModel) map[string]float32 {
	score := make(map[string]float32, len(m.merges))
	for r, mg := range m.merges {
		if p := mg[0] + mg[1]; score[p] == 0 {
			score[p] = -float32(r + 1)
		}
	}
	return score
}

func pieceProto(piece string, score float32, typ int) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, piece)
	b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, math.Float32bits(score))
	return protoVarint(b, 3, uint64(typ))
}

func protoVarint(b []byte, field protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func boolVarint(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// byteToken reads a byte-fallback piece, "<0x0A>".
func byteToken(piece string) (byte, bool) {
	if len(piece) != 6 || !strings.HasPrefix(piece, "<0x") || piece[5] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(piece[3:5], 16, 8)
	return byte(b), err == nil
}
