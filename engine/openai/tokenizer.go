package openai

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/llmload/llmload/engine/tokenize"
)

// TokenizerNone turns the offline tokenizer off: output tokens then come
// from usage or, failing that, from the number of text events.
const TokenizerNone = "none"

// tokenCounter counts tokens offline with a process-wide codec shared by
// every request of a client. Safe for concurrent use.
type tokenCounter struct {
	codec tokenize.Codec
	seen  atomic.Int64 // calls of sample
}

// Sampling of the tokenizer where usage already gave the count: every
// request among the first sampleAll, then one in sampleEvery.
const (
	sampleAll   = 64
	sampleEvery = 16
)

// sample says whether a request whose usage gave its count is counted
// offline too, for the token check; false without a tokenizer.
func (t *tokenCounter) sample() bool {
	if t == nil {
		return false
	}
	n := t.seen.Add(1)
	return n <= sampleAll || n%sampleEvery == 0
}

// loadTokenizer returns the counter for a Config.Tokenizer name: nil for
// "none", the default encoding for "", a tiktoken encoding, or the path of
// a tokenizer.json (tokenize.IsFile), which counts exactly as the model
// does.
func loadTokenizer(name string) (*tokenCounter, error) {
	if name == TokenizerNone {
		return nil, nil
	}
	if name != "" && !slices.Contains(tokenize.Names(), name) && !tokenize.IsFile(name) {
		return nil, fmt.Errorf("openai: unknown tokenizer %q (want one of %s or %s), or the path of a tokenizer.json",
			name, strings.Join(tokenize.Names(), ", "), TokenizerNone)
	}
	codec, err := tokenize.Get(name)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return &tokenCounter{codec: codec}, nil
}

// count returns the number of tokens in s, and false when it could not be
// counted. The codec is third-party code fed with whatever a server or a
// dirty-data scenario produced; a failure in it must cost a count, not the
// run, hence the recover.
func (t *tokenCounter) count(s string) (n int, ok bool) {
	if t == nil {
		return 0, false
	}
	if s == "" {
		return 0, true
	}
	defer func() {
		if recover() != nil {
			n, ok = 0, false
		}
	}()
	return t.codec.Count(s), true
}
