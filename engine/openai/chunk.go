package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	openai "github.com/sashabaranov/go-openai"
)

// streamChunk is one decoded stream event: go-openai's chunk plus what
// servers send beyond it, an error object ({"error":{...}}, or vLLM's older
// {"object":"error","message":...}) and delta.reasoning. The identifying
// strings that every chunk repeats are shadowed by fields that skip them,
// which saves three allocations per event.
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	ID                skipped         `json:"id"`
	Model             skipped         `json:"model"`
	SystemFingerprint skipped         `json:"system_fingerprint"`
	Object            errorKind       `json:"object"`
	Choices           []chunkChoice   `json:"choices"`
	Error             json.RawMessage `json:"error"`
	Message           json.RawMessage `json:"message"`
}

type chunkChoice struct {
	openai.ChatCompletionStreamChoice
	Delta chunkDelta `json:"delta"`
}

type chunkDelta struct {
	openai.ChatCompletionStreamChoiceDelta
	Reasoning string `json:"reasoning"`
}

// generated reports whether the delta carries generated tokens: content,
// reasoning under either name, a refusal, or tool-call arguments. Role-only
// and empty deltas do not; whitespace does, it is a real token.
func (d *chunkDelta) generated() bool {
	if d.Content != "" || d.ReasoningContent != "" || d.Reasoning != "" || d.Refusal != "" {
		return true
	}
	if d.FunctionCall != nil && d.FunctionCall.Arguments != "" {
		return true
	}
	for i := range d.ToolCalls {
		if d.ToolCalls[i].Function.Arguments != "" {
			return true
		}
	}
	return false
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
	return err
}
