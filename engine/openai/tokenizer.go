package openai

import (
	"fmt"
	"strings"
	"sync"

	"github.com/llmload/llmload/engine"
	"github.com/tiktoken-go/tokenizer"
)

// TokenizerNone turns the offline tokenizer off: output tokens then come
// from usage or, failing that, from the number of text events.
const TokenizerNone = "none"

// tokenizers are the encodings Config.Tokenizer accepts, besides "none".
var tokenizers = []tokenizer.Encoding{tokenizer.Cl100kBase, tokenizer.O200kBase, tokenizer.P50kBase, tokenizer.R50kBase}

// codecs caches one codec per encoding for the whole process: building one
// fills a vocabulary of up to 200k entries (tens of MB), which must happen
// once, not per client.
var codecs sync.Map // tokenizer.Encoding → *codecOnce

type codecOnce struct {
	once  sync.Once
	codec tokenizer.Codec
	err   error
}

// tokenCounter counts tokens offline. The codec it wraps only reads its
// vocabulary and uses a regexp2 pattern, which is safe for concurrent use,
// and its error mode is never changed after loading, so one counter is
// shared by every request of a client. Safe for concurrent use.
type tokenCounter struct {
	codec tokenizer.Codec
}

// loadTokenizer returns the counter for a Config.Tokenizer name: nil for
// "none", the default encoding for "".
func loadTokenizer(name string) (*tokenCounter, error) {
	switch name {
	case TokenizerNone:
		return nil, nil
	case "":
		name = engine.DefaultTokenizer
	}
	enc := tokenizer.Encoding(name)
	known := false
	for _, t := range tokenizers {
		known = known || t == enc
	}
	if !known {
		return nil, fmt.Errorf("openai: unknown tokenizer %q (want one of %s or %s)", name, tokenizerNames(), TokenizerNone)
	}
	v, _ := codecs.LoadOrStore(enc, &codecOnce{})
	co := v.(*codecOnce)
	co.once.Do(func() { co.codec, co.err = tokenizer.Get(enc) })
	if co.err != nil {
		return nil, fmt.Errorf("openai: loading tokenizer %s: %w", name, co.err)
	}
	return &tokenCounter{codec: co.codec}, nil
}

func tokenizerNames() string {
	names := make([]string, len(tokenizers))
	for i, t := range tokenizers {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
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
	n, err := t.codec.Count(s)
	return n, err == nil
}
