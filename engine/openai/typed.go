package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	gojson "github.com/goccy/go-json"

	"github.com/llmload/llmload/engine"
)

// What the dialects of typed events (Responses, Messages) share: each
// event is a JSON object {"type":...} the dialect decodes into its own
// reused struct, and its text, reasoning and tool-call pieces are kept and
// timed the same way whatever the API calls them. A dialect keeps only
// the mapping from its event types to these.

// encode is the JSON of a request body b, with extra merged in.
func encode(b any, extra map[string]any) ([]byte, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return withExtra(body, extra)
}

// undecodable is the failure of a whole answer (what names it) that is
// not JSON of its shape.
func undecodable(what string, err error, data []byte) *engine.Error {
	return &engine.Error{Class: engine.ErrStreamMalformed,
		Message: "undecodable " + what + ": " + err.Error() + "; body: " + truncate(string(data), 100)}
}

// undecodableEvent is the failure of a streamed event that is not JSON of
// its dialect's shape.
func undecodableEvent(err error, data []byte) *engine.Error {
	return &engine.Error{Class: engine.ErrStreamMalformed,
		Message: "undecodable event: " + err.Error() + "; data: " + truncate(string(data), 100)}
}

// decodeTyped decodes ev into e, zeroed first since the stream reuses it,
// and counts it as a decoded event. It reports false, with no error, for
// an event without data, which carries nothing.
func decodeTyped[T any](s *stream, ev event, e *T) (bool, *engine.Error) {
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		return false, nil
	}
	var zero T
	*e = zero
	if err := gojson.Unmarshal(ev.Data, e); err != nil {
		return false, undecodableEvent(err, ev.Data)
	}
	s.events++
	return true, nil
}

// answerText keeps a piece of answer text.
func (s *stream) answerText(text string) delta {
	s.text.WriteString(text)
	return delta{gen: len(text), content: true, tokens: -1}
}

// otherText keeps generated text that is neither answer nor reasoning (a
// refusal, a tool call's arguments), timed as answer text.
func (s *stream) otherText(text string) delta {
	s.other.WriteString(text)
	return delta{gen: len(text), content: true, tokens: -1}
}

// toolArgs adds a piece of the arguments of the tool call at index.
func (s *stream) toolArgs(index int, piece string) delta {
	s.tools.at(index).arg(piece)
	return s.otherText(piece)
}

// reasoningText keeps a piece of reasoning; an empty one is no reasoning
// event.
func (s *stream) reasoningText(text string) delta {
	if text == "" {
		return noText
	}
	s.reasoning.WriteString(text)
	s.tally.reasoningEvents++
	return delta{gen: len(text), tokens: -1}
}

// wholeAnswer gathers a whole (non-streamed) answer of a typed-event
// dialect as its items or blocks are read. Used by one goroutine.
type wholeAnswer struct {
	text, reasoning, other strings.Builder
	calls                  toolCalls
}

// call adds the tool call at index, whole.
func (w *wholeAnswer) call(index int, id, name, args string) {
	tc := w.calls.at(index)
	tc.named(id, name)
	tc.arg(args)
	w.other.WriteString(args)
}

// fill puts the answer in res, the whole of it one text event, with
// finish as its finish reason, and counts its tokens against t's usage
// and prompt.
func (w *wholeAnswer) fill(c *Client, res *engine.Result, t *tally, finish string, prompt *engine.ChatRequest) {
	t.content, t.reasoning, t.other = w.text.String(), w.reasoning.String(), w.other.String()
	if t.bytes() > 0 {
		t.textEvents = 1
	}
	if t.reasoning != "" {
		t.reasoningEvents = 1
	}
	res.Text, res.TextEvents, res.ToolCalls = t.content, t.textEvents, w.calls.list()
	res.FinishReason = finish
	c.countTokens(res, t, prompt)
}
