package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	gojson "github.com/goccy/go-json"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmload/llmload/engine"
)

// streamChunk is one decoded stream event: the members of a chat or
// completions chunk that carry text, a finish, usage or an error
// ({"error":{...}}, or vLLM's older {"object":"error","message":...}).
// Everything else (id, model, created, logprobs...) has no field, so the
// decoder skips it without allocating; usage is decoded leniently (see
// usage).
type streamChunk struct {
	Choices []chunkChoice   `json:"choices"`
	Usage   usage           `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Message json.RawMessage `json:"message"`
	Timings *timings        `json:"timings"`
}

// timings is llama.cpp's own timing of a request, sent in the last chunk
// (or a complete answer); only servers that time requests send it, so a
// pointer costs others nothing.
type timings struct {
	PromptN             int     `json:"prompt_n"`
	CacheN              int     `json:"cache_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
}

// result converts the server's timings for a Result; nil stays nil.
func (t *timings) result() *engine.ServerTimings {
	if t == nil {
		return nil
	}
	return &engine.ServerTimings{PromptN: t.PromptN, CachedN: t.CacheN, PromptMS: t.PromptMS,
		PredictedN: t.PredictedN, PredictedMS: t.PredictedMS, PredictedPerTokenMS: t.PredictedPerTokenMS}
}

type chunkChoice struct {
	Index        int                 `json:"index"`
	Delta        chunkDelta          `json:"delta"`
	Text         string              `json:"text"` // completions endpoint
	FinishReason openai.FinishReason `json:"finish_reason"`
}

// generated returns how many bytes of generated text the choice carries,
// of any kind (see chunkDelta.generated) or as completions text.
func (c *chunkChoice) generated() int {
	return c.Delta.generated() + len(c.Text)
}

type chunkDelta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	Refusal          string          `json:"refusal"`
	FunctionCall     *chunkFunction  `json:"function_call"`
	ToolCalls        []chunkToolCall `json:"tool_calls"`
}

// chunkToolCall is a piece of a tool call: the first names it (id and
// function name), later ones carry pieces of its arguments; index tells
// parallel calls apart.
type chunkToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id"`
	Function chunkFunction `json:"function"`
}

type chunkFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// legacyCallIndex keys the deprecated function_call among tool calls.
const legacyCallIndex = -1

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

// answer reports whether the delta carries answer text: content, a
// refusal or tool-call arguments, anything generated but reasoning.
func (d *chunkDelta) answer() bool {
	if d.Content != "" || d.Refusal != "" || (d.FunctionCall != nil && d.FunctionCall.Arguments != "") {
		return true
	}
	for i := range d.ToolCalls {
		if d.ToolCalls[i].Function.Arguments != "" {
			return true
		}
	}
	return false
}

// addToolCalls adds the delta's tool-call pieces to calls.
func (d *chunkDelta) addToolCalls(calls *toolCalls) {
	if f := d.FunctionCall; f != nil {
		c := calls.at(legacyCallIndex)
		c.named("", f.Name)
		c.arg(f.Arguments)
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		c := calls.at(tc.Index)
		c.named(tc.ID, tc.Function.Name)
		c.arg(tc.Function.Arguments)
	}
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

// apiError returns the message of an error object, if the chunk (decoded
// from data) is one. vLLM's older shape is told by its "object", read only
// when a "message" member makes it possible: chunks carry no message.
func (c *streamChunk) apiError(data []byte) (string, bool) {
	objectIsError := false
	if len(c.Message) > 0 {
		var o struct {
			Object string `json:"object"`
		}
		objectIsError = json.Unmarshal(data, &o) == nil && o.Object == "error"
	}
	return errorObject(c.Error, c.Message, objectIsError)
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

// chunkDecoder decodes event payloads. It uses github.com/goccy/go-json,
// which reads the same struct tags and Unmarshalers as encoding/json and
// reports the same errors, at a ninth of its cost per chunk (355 against
// 3,242 ns for a vLLM chunk, measured with both on the same bytes): the
// decode is most of what the client spends per streamed token.
type chunkDecoder struct{}

// decode decodes data, which must hold exactly one JSON value, into c.
func (d *chunkDecoder) decode(data []byte, c *streamChunk) (err error) {
	defer func() {
		// A decoder bug must cost one request, not the run.
		if r := recover(); r != nil {
			err = fmt.Errorf("the JSON decoder failed on this event: %v", r)
		}
	}()
	c.reset()
	err = gojson.Unmarshal(data, c)
	if usageShapeError(err) {
		// A type error hides any later one: decode again without usage
		// to find out whether the rest of the event is sound.
		c.reset()
		err = gojson.Unmarshal(data, &chunkWithoutUsage{streamChunk: c})
	}
	return err
}

// chunkWithoutUsage decodes a chunk but skips its usage member.
type chunkWithoutUsage struct {
	*streamChunk
	Usage skipped `json:"usage"`
}
