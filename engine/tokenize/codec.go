// Package tokenize gives every part of llmload the same offline
// tokenizers, each built once per process: tiktoken's encodings by name,
// or a model's own Hugging Face tokenizer.json by path. Both are a Codec,
// so no caller tells them apart. The tiktoken vocabularies are embedded
// compressed and built into tables on first use, so a binary carries no
// more than 2 MB of them and a run builds only the one it counts with.
package tokenize

import (
	"fmt"
	"strings"
	"sync"

	// Registers the regexp2 code generated for the split regexes below,
	// keyed by their exact text: compiled from the same text, ours run
	// it, so the pieces are the library's, DEL quirk included, twice as
	// fast as regexp2's interpreter finds them. Nothing else of the
	// package is linked.
	_ "github.com/tiktoken-go/tokenizer/codec"
)

// DefaultName is the encoding Get uses for "".
const DefaultName = "cl100k_base"

// names are the encodings Get accepts, in the order errors list them.
var names = []string{"cl100k_base", "o200k_base", "p50k_base", "r50k_base"}

// splits are the encodings' pre-tokenizer regexes as tiktoken-go/tokenizer
// v0.10.0 spells them; a test holds the pieces to the library's.
var splits = map[string]string{
	"cl100k_base": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"o200k_base": `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
		`\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"p50k_base": gpt2Split,
	"r50k_base": gpt2Split,
}

// Names returns the encoding names Get accepts.
func Names() []string { return append([]string(nil), names...) }

// Codec turns text into token ids and back. Safe for concurrent use.
type Codec interface {
	// Count returns the number of tokens in s.
	Count(s string) int
	// Encode returns the token ids of s.
	Encode(s string) []uint
	// Decode returns the text of ids; ids outside the vocabulary are skipped.
	Decode(ids []uint) string
	// Name returns the encoding's name, e.g. "cl100k_base", or the
	// tokenizer.json's path as Get was given it.
	Name() string
}

// codecs holds one entry per encoding or file for the whole process:
// building a codec fills a vocabulary of up to 200k entries (tens of MB,
// tens of milliseconds), which must happen once, not per caller.
var (
	mu     sync.Mutex
	codecs = map[string]*entry{}
)

type entry struct {
	once  sync.Once
	codec Codec
	err   error
}

// Get returns the process-wide codec of an encoding name ("" means
// DefaultName) or of a tokenizer.json path (IsFile); a relative path is
// the working directory's, so callers resolve it first. The error of a
// file names it and says what is wrong: missing, not JSON (with the line),
// or a model llmload cannot count exactly. Safe for concurrent use:
// concurrent first calls for one name build it once; a failed load is
// remembered like a successful one.
func Get(name string) (Codec, error) {
	if name == "" {
		name = DefaultName
	}
	if !known(name) && !IsFile(name) {
		return nil, fmt.Errorf("tokenize: unknown tokenizer %q (want one of %s, or a tokenizer.json path)", name, strings.Join(names, ", "))
	}
	mu.Lock()
	e, ok := codecs[name]
	if !ok {
		e = &entry{}
		codecs[name] = e
	}
	mu.Unlock()
	e.once.Do(func() { e.codec, e.err = build(name) })
	return e.codec, e.err
}

func known(name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func build(name string) (Codec, error) {
	if IsFile(name) {
		return loadFile(name)
	}
	return newBPE(name)
}
