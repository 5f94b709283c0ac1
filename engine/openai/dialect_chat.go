package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llmload/llmload/engine"
)

// chatDialect speaks chat completions (POST /chat/completions) and, with
// completions, the legacy completions endpoint (POST /completions): one
// JSON chunk per event with choices[].delta (or choices[].text), usage in
// a final chunk or in every chunk, and a [DONE] sentinel.
type chatDialect struct{ completions bool }

func (d chatDialect) url(c *Client) string {
	if d.completions {
		return c.completionsURL
	}
	return c.chatURL
}

func (chatDialect) body(req *engine.ChatRequest, continuous bool) ([]byte, error) {
	return buildBody(req, continuous)
}

func (chatDialect) auth(c *Client, h http.Header) { bearer(c, h) }

func (chatDialect) cutEnd(data []byte) bool { return isDone(data) }

func (chatDialect) endName() string { return "[DONE] or a finish_reason" }

func (chatDialect) prompt(req *engine.ChatRequest) *engine.ChatRequest { return req }

// event applies one chunk: an event of type "error" or an error object is
// an api_error; the first [DONE] ends the stream.
func (chatDialect) event(s *stream, ev event) (delta, *engine.Error) {
	if isDone(ev.Data) {
		if s.events == 0 {
			return noText, &engine.Error{Class: engine.ErrStreamMalformed, Message: "stream ended with [DONE] before any chunk"}
		}
		s.end(ev.At)
		return noText, nil
	}
	if string(ev.Type) == "error" {
		return noText, &engine.Error{Class: engine.ErrAPI, Message: serverMessage(ev.Data)}
	}
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		return noText, nil
	}
	if err := s.dec.decode(ev.Data, s.chunk); err != nil {
		return noText, undecodableEvent(err, ev.Data)
	}
	if msg, ok := s.chunk.apiError(ev.Data); ok {
		return noText, &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	s.events++
	if t := s.chunk.Timings; t != nil {
		s.res.Server = t.result()
	}
	k := s.chunkTokens()
	gen, content := s.choices()
	return delta{gen: gen, content: content, tokens: k}, nil
}

// chunkTokens keeps the chunk's usage and returns how many completion
// tokens it added to the cumulative count, or -1 when it carries none.
func (s *stream) chunkTokens() int {
	u := &s.chunk.Usage
	if u.known() {
		s.tally.usage = *u
	}
	if !u.Completion.ok {
		return -1
	}
	k := u.Completion.n - s.cumTokens
	if k < 0 {
		s.tokensBad = true
	}
	s.cumTokens = u.Completion.n
	return k
}

// choices records texts, tool calls and finish reasons. It returns the
// bytes of generated text the choices carried and whether any was answer
// text (anything but reasoning). Texts are choice 0's only: with n > 1 the
// choices' tokens interleave.
func (s *stream) choices() (gen int, content bool) {
	reasoning := false
	for i := range s.chunk.Choices {
		ch := &s.chunk.Choices[i]
		gen += ch.generated()
		content = content || ch.Delta.answer() || ch.Text != ""
		reasoning = reasoning || ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != ""
		if ch.Index == 0 {
			s.text.WriteString(ch.Delta.Content)
			s.text.WriteString(ch.Text)
			ch.Delta.writeText(&s.reasoning, &s.other)
			ch.Delta.addToolCalls(&s.tools)
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			s.finished = true
			if s.res.FinishReason == "" || ch.Index == 0 {
				s.res.FinishReason = string(ch.FinishReason)
			}
		}
	}
	if reasoning {
		s.tally.reasoningEvents++
	}
	return gen, content
}

// complete reads a chat.completion or a text_completion.
func (chatDialect) complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error {
	var cr completion
	err := json.Unmarshal(data, &cr)
	if usageShapeError(err) {
		cr = completion{}
		err = json.Unmarshal(data, &completionWithoutUsage{completion: &cr})
	}
	if err != nil {
		return undecodable("completion", err, data)
	}
	if msg, ok := errorObject(cr.Error, cr.Message, bool(cr.Object)); ok {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	res.Server = cr.Timings.result()
	t := cr.tally(res)
	c.countTokens(res, &t, req)
	return nil
}

// tally copies text, tool calls and finish reason into res and returns
// what the answer generated. The whole answer counts as one text event.
func (cr *completion) tally(res *engine.Result) tally {
	t := tally{usage: cr.Usage}
	var reasoning, other strings.Builder
	for i := range cr.Choices {
		ch := &cr.Choices[i]
		if ch.Message.generated()+len(ch.Text) > 0 {
			t.textEvents = 1
		}
		if ch.Message.ReasoningContent != "" || ch.Message.Reasoning != "" {
			t.reasoningEvents = 1
		}
		if ch.Index == 0 {
			res.Text = ch.Message.Content + ch.Text
			res.FinishReason = ch.FinishReason
			ch.Message.writeText(&reasoning, &other)
			var calls toolCalls
			ch.Message.addToolCalls(&calls)
			res.ToolCalls = calls.list()
		}
	}
	res.TextEvents = t.textEvents
	t.content, t.reasoning, t.other = res.Text, reasoning.String(), other.String()
	return t
}
