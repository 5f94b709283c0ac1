package dirty

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
)

// Sizes of the kinds that are about size.
const (
	// OverlongChars is the overlong prompt's length: about 500k tokens,
	// past every context window served today.
	OverlongChars = 2_000_000
	// HugeMaxTokens is huge_max_tokens' max_tokens.
	HugeMaxTokens = 1_000_000_000
)

// defaultText stands in for a target text that is empty, so that the
// kinds which decorate text have something to decorate.
const defaultText = "Explain what a load test measures, in two sentences."

// errNeedsChat is returned by the kinds that only a chat request can express.
var errNeedsChat = errors.New("needs a chat request (messages), not a completion")

// target returns the text a kind rewrites: the prompt of a completion or
// of a Responses request whose input is a string, or the content of the
// last user message, appended when there is none. The messages are copied
// first: a scenario may share one slice between requests, and only this
// request must turn dirty.
func target(req *engine.ChatRequest) *string {
	if req.Endpoint == engine.EndpointCompletions || req.Endpoint == engine.EndpointSpeech || promptInput(req) {
		return &req.Prompt
	}
	req.Messages = slices.Clone(req.Messages)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := &req.Messages[i]; m.Role == "user" {
			if len(m.Parts) == 0 {
				return &m.Content
			}
			// A message of parts sends its text parts, not Content.
			m.Parts = slices.Clone(m.Parts)
			for j := len(m.Parts) - 1; j >= 0; j-- {
				if m.Parts[j].Type == engine.PartText {
					return &m.Parts[j].Text
				}
			}
			m.Parts = append(m.Parts, engine.Part{Type: engine.PartText})
			return &m.Parts[len(m.Parts)-1].Text
		}
	}
	req.Messages = append(req.Messages, engine.Message{Role: "user"})
	return &req.Messages[len(req.Messages)-1].Content
}

// decorate rewrites the target text with f, from defaultText when it is empty.
func decorate(req *engine.ChatRequest, f func(string) string) {
	t := target(req)
	if *t == "" {
		*t = defaultText
	}
	*t = f(*t)
}

func empty(req *engine.ChatRequest, _ *rand.Rand) error {
	*target(req) = ""
	return nil
}

func whitespace(req *engine.ChatRequest, rng *rand.Rand) error {
	const blanks = " \t\n\r"
	b := make([]byte, 1+rng.IntN(64))
	for i := range b {
		b[i] = blanks[rng.IntN(len(blanks))]
	}
	*target(req) = string(b)
	return nil
}

func noMessages(req *engine.ChatRequest, _ *rand.Rand) error {
	if req.Endpoint == engine.EndpointCompletions {
		return errNeedsChat
	}
	req.Messages = []engine.Message{}
	return nil
}

// fillers are the overlong prompt's phrases; varied so that a prefix
// cache does not make every overlong request after the first one cheap.
var fillers = []string{
	"The quick brown fox jumps over the lazy dog. ",
	"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ",
	"All work and no play makes a load test a dull test. ",
	"一二三四五六七八九十，天地玄黄，宇宙洪荒。",
}

// overlong keeps the original text in front, so that a scenario's
// per-request prefix still defeats prefix caching.
func overlong(req *engine.ChatRequest, rng *rand.Rand) error {
	t := target(req)
	phrase := fillers[rng.IntN(len(fillers))]
	var b strings.Builder
	b.Grow(OverlongChars + len(phrase))
	b.WriteString(*t)
	b.WriteString("\n\n")
	b.WriteString(strings.Repeat(phrase, (OverlongChars-b.Len())/len(phrase)+1))
	*t = b.String()
	return nil
}

// badRoles are roles no OpenAI-compatible server defines.
var badRoles = []string{"wizard", "narrator", "oracle", "USER", ""}

// promptInput reports a Responses request whose input is a string.
func promptInput(req *engine.ChatRequest) bool {
	return req.Endpoint == engine.EndpointResponses && req.Messages == nil
}

func badRole(req *engine.ChatRequest, rng *rand.Rand) error {
	if req.Endpoint == engine.EndpointCompletions {
		return errNeedsChat
	}
	if promptInput(req) {
		// A role needs a message: the string input becomes the one it
		// stands for.
		req.Messages, req.Prompt = []engine.Message{{Role: "user", Content: req.Prompt}}, ""
	}
	target(req) // ensures a user message, in a copied slice
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			req.Messages[i].Role = badRoles[rng.IntN(len(badRoles))]
			break
		}
	}
	return nil
}

// hugeMaxTokens drops the vLLM length extensions: a lenient server that
// accepts the request must not also be told to generate a billion tokens.
func hugeMaxTokens(req *engine.ChatRequest, _ *rand.Rand) error {
	req.MaxTokens, req.IgnoreEOS, req.MinTokens = HugeMaxTokens, false, 0
	return nil
}

func negativeMaxTokens(req *engine.ChatRequest, _ *rand.Rand) error {
	req.MaxTokens, req.IgnoreEOS, req.MinTokens = -1, false, 0
	return nil
}

func unknownModel(req *engine.ChatRequest, rng *rand.Rand) error {
	const hex = "0123456789abcdef"
	b := []byte("llmload-no-such-model-")
	for range 12 {
		b = append(b, hex[rng.IntN(len(hex))])
	}
	req.Model = string(b)
	return nil
}

// contentTypes are Content-Types a JSON API does not accept.
var contentTypes = []string{"text/plain", "text/plain; charset=utf-8"}

func wrongContentType(req *engine.ChatRequest, rng *rand.Rand) error {
	req.ContentType = contentTypes[rng.IntN(len(contentTypes))]
	return nil
}
