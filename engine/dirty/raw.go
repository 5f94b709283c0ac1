package dirty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/llmload/llmload/engine"
)

// NestingDepth is how deep deep_nesting nests arrays and objects: ten
// times the depth Go's own decoder refuses, far past any sane limit.
const NestingDepth = 100_000

// rawBody is what a raw kind starts from: the fields that route a request
// and shape its answer, in its API's own names, model and stream first so
// that a truncated body keeps them. Extra, tools and the vLLM extensions
// are left out: a raw body is meant to be refused, not to generate.
type rawBody struct {
	Model           string            `json:"model"`
	Stream          bool              `json:"stream"`
	StreamOptions   *streamOptions    `json:"stream_options,omitempty"`
	MaxTokens       int               `json:"max_tokens,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"` // Responses
	System          string            `json:"system,omitempty"`            // Messages
	Instructions    string            `json:"instructions,omitempty"`      // Responses
	Messages        *[]engine.Message `json:"messages,omitempty"`
	Input           any               `json:"input,omitempty"` // Responses
	Prompt          *string           `json:"prompt,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	TopP            *float64          `json:"top_p,omitempty"`
	Seed            *int64            `json:"seed,omitempty"`
	Stop            []string          `json:"stop,omitempty"`
	StopSequences   []string          `json:"stop_sequences,omitempty"` // Messages
}

// streamOptions asks for usage, as engine/openai does, so that a lenient
// server's answer is measured like any other.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// encode marshals the body a normal request would have, in the shape of
// its endpoint: chat, completions, Responses (input, instructions,
// max_output_tokens) or Messages (system, max_tokens, stop_sequences; no
// stream_options, which Anthropic's API does not take).
func encode(req *engine.ChatRequest) ([]byte, error) {
	b := rawBody{Model: req.Model, Stream: !req.NoStream, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed, Stop: req.Stop}
	if b.Stream {
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	msgs := req.Messages
	if msgs == nil {
		msgs = []engine.Message{}
	}
	switch req.Endpoint {
	case engine.EndpointCompletions:
		b.Prompt = &req.Prompt
	case engine.EndpointResponses:
		b.StreamOptions, b.MaxTokens, b.MaxOutputTokens, b.Instructions = nil, 0, req.MaxTokens, req.System
		b.Input = msgs
		if promptInput(req) {
			b.Input = req.Prompt
		}
	case engine.EndpointMessages:
		b.StreamOptions, b.System, b.Stop, b.StopSequences, b.Messages = nil, req.System, nil, req.Stop, &msgs
	default:
		b.Messages = &msgs
	}
	body, err := json.Marshal(&b)
	if err != nil {
		return nil, fmt.Errorf("encoding the body to break: %w", err)
	}
	return body, nil
}

// hole marks where broken bytes go. JSON encodes its NULs as \u0000, so
// the marker cannot be confused with text that merely looks like it.
const hole = "\x00llmload-hole\x00"

// encodeWithHole marshals req with the hole at a random rune boundary of
// its target text and returns the body and the hole's offset, the marker
// removed. req itself is not changed.
func encodeWithHole(req *engine.ChatRequest, rng *rand.Rand) ([]byte, int, error) {
	cp := *req
	t := target(&cp)
	if *t == "" {
		*t = defaultText
	}
	at := runeOffset(*t, rng.IntN(utf8.RuneCountInString(*t)+1))
	*t = (*t)[:at] + hole + (*t)[at:]
	body, err := encode(&cp)
	if err != nil {
		return nil, 0, err
	}
	marker, _ := json.Marshal(hole)
	marker = marker[1 : len(marker)-1] // without its quotes
	i := bytes.Index(body, marker)
	if i < 0 {
		return nil, 0, fmt.Errorf("encoding the body to break: marker lost")
	}
	return append(body[:i], body[i+len(marker):]...), i, nil
}

// runeOffset is the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func splice(body []byte, at int, insert string) []byte {
	out := make([]byte, 0, len(body)+len(insert))
	out = append(out, body[:at]...)
	out = append(out, insert...)
	return append(out, body[at:]...)
}

// malformedJSON breaks the body in one of three ways servers meet in
// practice: a body cut short (a client that died mid-write), a trailing
// comma (hand-written JSON), and a raw line break or quote inside a string
// (string concatenation instead of an encoder).
func malformedJSON(req *engine.ChatRequest, rng *rand.Rand) error {
	body, at, err := encodeWithHole(req, rng)
	if err != nil {
		return err
	}
	switch rng.IntN(4) {
	case 0:
		// Any proper prefix of an object lacks its closing brace; cut
		// after the stream field so that model and stream survive.
		stream := bytes.Index(body, []byte(`"stream":`))
		keep := stream + bytes.IndexByte(body[stream:], ',') + 1
		req.Raw = body[:keep+rng.IntN(len(body)-1-keep)]
	case 1:
		req.Raw = append(body[:len(body)-1:len(body)-1], ",}"...)
	case 2:
		req.Raw = splice(body, at, "line one\nline two")
	default:
		req.Raw = splice(body, at, `say "hi"`)
	}
	return nil
}

// badUTF8 are byte sequences that are not UTF-8: bytes that never occur,
// a lone continuation byte, a cut sequence, an encoded surrogate, an
// overlong encoding and a code point past U+10FFFF.
var badUTF8 = []string{"\xff", "\xfe", "\x80", "\xc3(", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"}

// invalidUTF8 always holds 0xff 0xfe and a lone continuation byte.
func invalidUTF8(req *engine.ChatRequest, rng *rand.Rand) error {
	body, at, err := encodeWithHole(req, rng)
	if err != nil {
		return err
	}
	req.Raw = splice(body, at, "\xff\xfe"+badUTF8[rng.IntN(len(badUTF8))]+"a\x80")
	return nil
}

// nestLevels are the levels deep_nesting stacks: arrays, objects, or both
// alternating.
var nestLevels = [][2]string{{"[", "]"}, {`{"a":`, "}"}}

// deepNesting appends an "extra" field nested NestingDepth levels deep;
// the body stays valid JSON.
func deepNesting(req *engine.ChatRequest, rng *rand.Rand) error {
	body, err := encode(req)
	if err != nil {
		return err
	}
	pattern := rng.IntN(3) // 0: arrays, 1: objects, 2: alternating
	level := func(i int) [2]string {
		if pattern == 2 {
			return nestLevels[i%2]
		}
		return nestLevels[pattern]
	}
	var b strings.Builder
	b.Grow(len(body) + NestingDepth*7)
	b.Write(body[:len(body)-1])
	b.WriteString(`,"extra":`)
	for i := range NestingDepth {
		b.WriteString(level(i)[0])
	}
	b.WriteString("0")
	for i := NestingDepth - 1; i >= 0; i-- {
		b.WriteString(level(i)[1])
	}
	b.WriteString("}")
	req.Raw = []byte(b.String())
	return nil
}
