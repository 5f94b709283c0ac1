package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// streamChunk is one decoded stream event: go-openai's chunk plus what
// servers send beyond it, an error object ({"error":{...}}, or vLLM's older
// {"object":"error","message":...}), delta.reasoning, and the legacy
// completions endpoint's choices[].text. The identifying strings that every
// chunk repeats, and logprobs, are shadowed by fields that skip them, which
// saves allocations per event. Usage is decoded leniently (see usage).
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	ID                skipped         `json:"id"`
	Model             skipped         `json:"model"`
	SystemFingerprint skipped         `json:"system_fingerprint"`
	Object            errorKind       `json:"object"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             usage           `json:"usage"`
	Error             json.RawMessage `json:"error"`
	Message           json.RawMessage `json:"message"`
}

type chunkChoice struct {
	openai.ChatCompletionStreamChoice
	Delta    chunkDelta `json:"delta"`
	Text     string     `json:"text"` // completions endpoint
	Logprobs skipped    `json:"logprobs"`
}

// generated returns how many bytes of generated text the choice carries,
// of any kind (see chunkDelta.generated) or as completions text.
func (c *chunkChoice) generated() int {
	return c.Delta.generated() + len(c.Text)
}

type chunkDelta struct {
	openai.ChatCompletionStreamChoiceDelta
	Reasoning string `json:"reasoning"`
}

// generated returns how many bytes of generated tokens the delta carries:
// content, reasoning under either name, a refusal, or tool-call arguments.
// Role-only and empty deltas carry none; whitespace counts, it is a real
// token.
func (d *chunkDelta) generated() int {
	n := len(d.Content) + len(d.ReasoningContent) + len(d.Reasoning) + len(d.Refusal)
	if d.FunctionCall != nil {
		n += len(d.FunctionCall.Arguments)
	}
	for i := range d.ToolCalls {
		n += len(d.ToolCalls[i].Function.Arguments)
	}
	return n
}

// writeText appends the delta's reasoning and other generated text (a
// refusal, tool-call arguments) to their builders.
func (d *chunkDelta) writeText(reasoning, other *strings.Builder) {
	reasoning.WriteString(d.ReasoningContent)
	reasoning.WriteString(d.Reasoning)
	other.WriteString(d.Refusal)
	if d.FunctionCall != nil {
		other.WriteString(d.FunctionCall.Arguments)
	}
	for i := range d.ToolCalls {
		other.WriteString(d.ToolCalls[i].Function.Arguments)
	}
}

// skipped accepts any JSON value and keeps nothing.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// errorKind records whether an "object" member says "error", without
// allocating the string.
type errorKind bool

func (k *errorKind) UnmarshalJSON(b []byte) error {
	*k = string(b) == `"error"`
	return nil
}

// reset zeroes c but keeps the choices array. Cleared elements matter:
// json reuses them as they are when it extends the slice.
func (c *streamChunk) reset() {
	choices := c.Choices[:cap(c.Choices)]
	clear(choices)
	*c = streamChunk{Choices: choices[:0]}
}

// apiError returns the message of an error object, if the chunk is one.
func (c *streamChunk) apiError() (string, bool) {
	return errorObject(c.Error, c.Message, bool(c.Object))
}

// errorObject reads an error answer: an "error" member, or vLLM's
// {"object":"error","message":...}.
func errorObject(errField, message json.RawMessage, objectIsError bool) (string, bool) {
	if len(errField) > 0 && string(errField) != "null" {
		return firstText(errorText(errField), "error object without message"), true
	}
	if objectIsError {
		return firstText(rawText(message), "error object without message"), true
	}
	return "", false
}

var errTrailingData = errors.New("data after the JSON value")

// chunkDecoder decodes event payloads with one json.Decoder for the whole
// stream: unlike json.Unmarshal, a Decoder keeps its scanner state and
// error context between values, which halves the allocations per event.
// Used by one goroutine.
type chunkDecoder struct {
	src eventSource
	dec *json.Decoder
	fed int64 // bytes handed to dec so far
}

// eventSource feeds the decoder one event at a time.
type eventSource struct{ data []byte }

func (s *eventSource) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// decode decodes data, which must hold exactly one JSON value, into c.
func (d *chunkDecoder) decode(data []byte, c *streamChunk) error {
	if d.dec == nil {
		d.dec, d.fed = json.NewDecoder(&d.src), 0
	}
	c.reset()
	d.src.data = data
	d.fed += int64(len(data))
	err := d.dec.Decode(c)
	if err == nil {
		rest := d.fed - d.dec.InputOffset()
		if rest > int64(len(data)) || len(bytes.TrimSpace(data[int64(len(data))-rest:])) > 0 {
			err = errTrailingData
		}
	}
	if err != nil {
		d.dec = nil // a Decoder's errors are sticky; start afresh
	}
	if usageShapeError(err) {
		// A type error hides any later one: decode again without usage
		// to find out whether the rest of the event is sound.
		c.reset()
		err = json.Unmarshal(data, &chunkWithoutUsage{streamChunk: c})
	}
	return err
}

// chunkWithoutUsage decodes a chunk but skips its usage member.
type chunkWithoutUsage struct {
	*streamChunk
	Usage skipped `json:"usage"`
}
