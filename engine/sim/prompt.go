package sim

import (
	"strings"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/llmload/llmload/engine/tokenize"
)

// prompt is a request's prompt as the simulated model reads it.
type prompt struct {
	tokens int      // chat template included
	blocks []uint64 // prefix-cache block hashes
	// over says the prompt was found beyond the context window before it
	// was encoded whole: tokens is then only a lower bound.
	over bool
}

// readPrompt validates msgs and counts their templated prompt: by
// CountTokens' estimate, or with cfg's tokenizer when it has one.
func readPrompt(cfg *Config, msgs []openai.ChatCompletionMessage, raw bool) (prompt, *apiError) {
	if cfg.codec == nil {
		tokens, aerr := promptTokens(msgs)
		if aerr != nil {
			return prompt{}, aerr
		}
		return prompt{tokens: tokens, blocks: blockHashes(msgs)}, nil
	}
	if aerr := checkMessages(msgs); aerr != nil {
		return prompt{}, aerr
	}
	return encodePrompt(cfg.codec, msgs, cfg.MaxContext, raw), nil
}

// Chat-template token ids, beyond any vocabulary so that no text's id
// equals one: each message is <|im_start|> role "\n" text <|im_end|>
// (messageOverhead tokens around the text), and the reply is primed
// with <|im_start|> assistant "\n" (replyPrimer tokens), as in ChatML.
const (
	tplStart   uint = 1<<31 + iota // <|im_start|>
	tplEnd                         // <|im_end|>
	tplNewline                     // the newline after the role
	tplRole                        // the first role's id; roleIDs adds to it
)

// roleIDs numbers the roles knownRoles accepts.
var roleIDs = map[string]uint{
	openai.ChatMessageRoleSystem: 0, openai.ChatMessageRoleDeveloper: 1, openai.ChatMessageRoleUser: 2,
	openai.ChatMessageRoleAssistant: 3, openai.ChatMessageRoleTool: 4, openai.ChatMessageRoleFunction: 5,
}

// encodePrompt encodes msgs' texts, already validated, into the ChatML
// prompt a server would prefill and cuts its blocks of BlockTokens ids.
// Like vLLM, it never counts the prompt's last token as cacheable, so a
// prompt seen before still prefills at least one token. Texts are
// encoded once each and nothing is kept: prompts rarely repeat whole.
func encodePrompt(codec tokenize.Codec, msgs []openai.ChatCompletionMessage, maxContext int, raw bool) prompt {
	var c idCutter
	c.init()
	if raw {
		// A completions prompt is prefilled as it is, without a template.
		text, _ := messageText(0, &msgs[0])
		ids, whole := encodeWithin(codec, text, maxContext)
		c.add(ids...)
		if !whole {
			return prompt{tokens: c.n, over: true}
		}
		return prompt{tokens: c.n, blocks: c.hashes[:max(c.n-1, 0)/BlockTokens]}
	}
	for i := range msgs {
		m := &msgs[i]
		text, _ := messageText(i, m)
		c.add(tplStart, tplRole+roleIDs[m.Role], tplNewline)
		ids, whole := encodeWithin(codec, text, maxContext-c.n-1-replyPrimer)
		c.add(ids...)
		if !whole {
			return prompt{tokens: c.n, over: true}
		}
		c.add(tplEnd)
	}
	c.add(tplStart, tplRole+roleIDs[openai.ChatMessageRoleAssistant], tplNewline)
	return prompt{tokens: c.n, blocks: c.hashes[:(c.n-1)/BlockTokens]}
}

// idCutter hashes token ids as they come, FNV-1a over each id's 8 bytes,
// and keeps the running hash at the end of every block: the key of a
// block is then the hash of every id up to its end.
type idCutter struct {
	h      uint64
	n      int // ids so far
	hashes []uint64
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (c *idCutter) init() { c.h = fnvOffset }

func (c *idCutter) add(ids ...uint) {
	for _, id := range ids {
		v := uint64(id)
		for range 8 {
			c.h = (c.h ^ (v & 0xff)) * fnvPrime
			v >>= 8
		}
		c.n++
		if c.n%BlockTokens == 0 {
			c.hashes = append(c.hashes, c.h)
		}
	}
}

// A prompt far beyond the context window (a 2 MB "overlong" dirty
// request) is known to be overlong long before it is encoded whole, which
// would take the better part of a second: encodeWithin first encodes
// prefixes of probeBytesPerToken bytes for each token of room left —
// ordinary text takes 3 to 5 — doubling them until one holds more than
// the room or the whole text is encoded. A prefix cut mid-word may hold a
// few more tokens than the same bytes do in the whole text; cutSlack
// covers them.
const (
	probeBytesPerToken = 6
	cutSlack           = 16
)

// encodeWithin returns the ids of s and true, or, when a prefix of s
// already holds more than room+cutSlack tokens, that prefix's ids and
// false.
func encodeWithin(codec tokenize.Codec, s string, room int) ([]uint, bool) {
	for probe := probeBytesPerToken * (max(room, 0) + cutSlack); probe < len(s); probe *= 2 {
		for probe > 0 && !utf8.RuneStart(s[probe]) {
			probe--
		}
		if ids := codec.Encode(s[:probe]); len(ids) > room+cutSlack {
			return ids, false
		}
	}
	return codec.Encode(s), true
}

// promptText is the text of msgs, already validated, joined by newlines
// in order: the prompt as received, for the truth log.
func promptText(msgs []openai.ChatCompletionMessage) string {
	var b strings.Builder
	for i := range msgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		text, _ := messageText(i, &msgs[i])
		b.WriteString(text)
	}
	return b.String()
}
