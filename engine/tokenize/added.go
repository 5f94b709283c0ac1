package tokenize

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// addedTokens are a tokenizer.json's added tokens (<|im_start|>, <s>, …).
// Hugging Face tokenizers find them in the text before anything else and
// give each its id, whatever the model would make of its characters; a
// chat template's markers or a pasted "<|endoftext|>" count one token each
// with the real tokenizer, and so they do here. The lstrip, rstrip and
// single_word refinements are not modelled: no Llama, Qwen or Mistral
// tokenizer sets them.
type addedTokens struct {
	re  *regexp.Regexp // nil without added tokens
	ids map[string]int
}

// newAddedTokens checks and indexes the added tokens of a file whose
// vocabulary has vocabSize tokens.
func newAddedTokens(list []hfAddedToken, vocabSize int) (*addedTokens, error) {
	a := &addedTokens{ids: map[string]int{}}
	var contents []string
	for i, t := range list {
		if t.Content == "" || t.ID < 0 || t.ID >= maxIDSpread*(vocabSize+len(list)) {
			return nil, fmt.Errorf("added_tokens[%d]: empty content, or id %d out of range", i, t.ID)
		}
		if _, dup := a.ids[t.Content]; !dup {
			contents = append(contents, t.Content)
		}
		a.ids[t.Content] = t.ID
	}
	if len(contents) == 0 {
		return a, nil
	}
	// RE2 takes the first alternative that matches at the leftmost
	// position: longest first makes it the longest match, as the
	// tokenizers library's matcher does.
	slices.SortFunc(contents, func(x, y string) int { return cmp.Compare(len(y), len(x)) })
	quoted := make([]string, len(contents))
	for i, c := range contents {
		quoted[i] = regexp.QuoteMeta(c)
	}
	a.re = regexp.MustCompile(strings.Join(quoted, "|"))
	return a, nil
}

// split calls text for each stretch of s between added tokens, with its
// offset in s, and token for each added token, in order.
func (a *addedTokens) split(s string, text func(seg string, at int), token func(id int)) {
	if a.re == nil {
		text(s, 0)
		return
	}
	last := 0
	for _, m := range a.re.FindAllStringIndex(s, -1) {
		if m[0] > last {
			text(s[last:m[0]], last)
		}
		token(a.ids[s[m[0]:m[1]]])
		last = m[1]
	}
	if last < len(s) {
		text(s[last:], last)
	}
}

// each lists the added tokens, for the decoding tables.
func (a *addedTokens) each(f func(content string, id int)) {
	for c, id := range a.ids {
		f(c, id)
	}
}
