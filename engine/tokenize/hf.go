package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// A Hugging Face tokenizer.json is read into these types: only the parts
// that decide how text becomes ids. Anything the file sets that they do not
// model is refused by plan, so a tokenizer is either counted exactly or not
// loaded at all; a silent near miss would defeat the point of naming the
// model's own tokenizer.
type (
	hfFile struct {
		AddedTokens  []hfAddedToken  `json:"added_tokens"`
		Normalizer   *hfNormalizer   `json:"normalizer"`
		PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
		Model        hfModel         `json:"model"`
	}
	hfAddedToken struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	}
	hfNormalizer struct {
		Type        string         `json:"type"`
		Normalizers []hfNormalizer `json:"normalizers"`
		Prepend     string         `json:"prepend"`
		Pattern     hfPattern      `json:"pattern"`
		Content     string         `json:"content"`
	}
	hfPattern struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	}
	hfPreTokenizer struct {
		Type           string           `json:"type"`
		PreTokenizers  []hfPreTokenizer `json:"pretokenizers"`
		Pattern        hfPattern        `json:"pattern"`
		Behavior       string           `json:"behavior"`
		Invert         bool             `json:"invert"`
		AddPrefixSpace bool             `json:"add_prefix_space"`
		UseRegex       *bool            `json:"use_regex"` // absent means true
		Replacement    string           `json:"replacement"`
		PrependScheme  string           `json:"prepend_scheme"`
	}
	hfModel struct {
		Type                    string            `json:"type"`
		Vocab                   json.RawMessage   `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
		UnkToken                *string           `json:"unk_token"`
		ByteFallback            bool              `json:"byte_fallback"`
		Dropout                 *float64          `json:"dropout"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		MaxInputCharsPerWord    *int              `json:"max_input_chars_per_word"` // WordPiece's, in old files without a type
	}
)

// supported names the two families loadFile reads, for error messages.
const supported = "llmload reads BPE tokenizers: byte-level (GPT-2, Llama 3, Qwen) " +
	"and SentencePiece-style (Llama 2, Mistral, TinyLlama)"

// IsFile reports whether a tokenizer name is the path of a Hugging Face
// tokenizer.json rather than the name of a tiktoken encoding.
func IsFile(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".json")
}

// loadFile builds the codec of a tokenizer.json. Every error names the
// file; none is a panic, whatever the file holds.
func loadFile(path string) (Codec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("tokenize: reading %s: %w", path, err)
	}
	c, err := parseFile(data, path)
	if err != nil {
		return nil, fmt.Errorf("tokenize: %s: %w", path, err)
	}
	return c, nil
}

// parseFile builds a codec named name from a tokenizer.json's bytes.
func parseFile(data []byte, name string) (Codec, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", jsonError(data, err))
	}
	m, err := f.Model.check()
	if err != nil {
		return nil, err
	}
	added, err := newAddedTokens(f.AddedTokens, len(m.vocab))
	if err != nil {
		return nil, err
	}
	if sp, ok, err := sentencePieceStyle(&f); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return newSentencePiece(name, m, added, sp)
	}
	bl, err := byteLevelStyle(&f)
	if err != nil {
		return nil, err
	}
	return newByteLevel(name, m, added, bl)
}

// jsonError adds the line of a syntax error, which encoding/json gives only
// as a byte offset.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	off := min(int(se.Offset), len(data))
	line := 1 + strings.Count(string(data[:off]), "\n")
	return fmt.Errorf("line %d: %w", line, err)
}

// bpeModel is a checked BPE model: vocabulary and merges in order.
type bpeModel struct {
	vocab  map[string]int
	merges [][2]string
	unk    *string
	bytes  bool // byte_fallback
}

// check refuses the models and options loadFile cannot count exactly.
func (m *hfModel) check() (*bpeModel, error) {
	if m.Type == "" && m.MaxInputCharsPerWord != nil {
		m.Type = "WordPiece"
	}
	switch {
	case m.Type == "" && len(m.Merges) == 0:
		return nil, fmt.Errorf("no BPE model (model.type missing and no merges); %s", supported)
	case m.Type != "" && m.Type != "BPE":
		return nil, fmt.Errorf("model type %q is not supported; %s", m.Type, supported)
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, errors.New("BPE dropout is not supported (it makes counts random)")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, errors.New("BPE with a continuing_subword_prefix or end_of_word_suffix is not supported")
	}
	var vocab map[string]int
	if err := json.Unmarshal(m.Vocab, &vocab); err != nil || len(vocab) == 0 {
		return nil, errors.New("model.vocab is not a non-empty object of token → id")
	}
	merges := make([][2]string, len(m.Merges))
	for i, raw := range m.Merges {
		pair, ok := mergePair(raw)
		if !ok {
			return nil, fmt.Errorf("model.merges[%d] is neither \"a b\" nor [\"a\", \"b\"]", i)
		}
		merges[i] = pair
	}
	return &bpeModel{vocab: vocab, merges: merges, unk: m.UnkToken, bytes: m.ByteFallback}, nil
}

// mergePair reads one merge in either of the file's two spellings.
func mergePair(raw json.RawMessage) ([2]string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		a, b, ok := strings.Cut(s, " ")
		return [2]string{a, b}, ok
	}
	var p []string
	if json.Unmarshal(raw, &p) == nil && len(p) == 2 {
		return [2]string{p[0], p[1]}, true
	}
	return [2]string{}, false
}
