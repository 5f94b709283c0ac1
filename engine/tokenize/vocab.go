package tokenize

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

//go:generate go run ./internal/vocabgen -dir vocab cl100k_base o200k_base p50k_base r50k_base

// vocabFiles are the tiktoken vocabularies, compressed, as
// internal/vocabgen writes them from github.com/tiktoken-go/tokenizer.
// Embedded, they need no file beside the binary and no network; compressed,
// the four cost 2 MB of the binary where the library's map literals cost
// 11 MB, though a run uses one.
//
//go:embed vocab/*.gz
var vocabFiles embed.FS

// vocabulary is one encoding's tokens both ways. Read-only once built.
type vocabulary struct {
	ids    map[string]uint // token bytes → id, the merge ranks
	pieces []string        // id → token bytes; "" where no token has the id
}

// loadVocabulary decompresses and indexes an encoding's vocabulary. It
// costs 15 to 70 ms and 4 to 16 MB of heap (r50k_base to o200k_base),
// which is why Get does it once per process, for the encodings asked for.
func loadVocabulary(name string) (*vocabulary, error) {
	raw, err := readVocabFile(name)
	if err != nil {
		return nil, fmt.Errorf("tokenize: the embedded %s vocabulary: %w", name, err)
	}
	return parseVocabulary(raw)
}

func readVocabFile(name string) (string, error) {
	f, err := vocabFiles.Open("vocab/" + name + ".gz")
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(zr) // checks the gzip CRC at the end
	return string(b), err
}

// parseVocabulary reads a length byte and the token's bytes for each id in
// turn. The tokens are slices of the one string, so the pieces and the
// map's keys share its memory; counting them first sizes both once.
func parseVocabulary(raw string) (*vocabulary, error) {
	n := 0
	for i := 0; i < len(raw); i += 1 + int(raw[i]) {
		n++
	}
	v := &vocabulary{ids: make(map[string]uint, n), pieces: make([]string, 0, n)}
	for len(raw) > 0 {
		n := int(raw[0])
		if 1+n > len(raw) {
			return nil, fmt.Errorf("tokenize: vocabulary truncated at id %d", len(v.pieces))
		}
		tok := raw[1 : 1+n]
		if n > 0 {
			v.ids[tok] = uint(len(v.pieces))
		}
		v.pieces = append(v.pieces, tok)
		raw = raw[1+n:]
	}
	return v, nil
}
