package openai

import (
	"bytes"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	openai "github.com/sashabaranov/go-openai"
)

// stream turns the events of one response into a Result. It keeps the
// state between events; the timing rules are DESIGN.md's: TTFT at the first
// event carrying generated text, one ITL sample per gap between such events.
// Used by one goroutine.
type stream struct {
	res   *engine.Result
	w     *watchdog
	chunk *streamChunk
	dec   *chunkDecoder
	text  strings.Builder

	firstText, lastText time.Time
	itlHint             int
	usage               openai.Usage
	hasUsage            bool
	events              int // decoded chunks, text or not
	finished            bool
	done                bool
}

// handle applies one event. It returns a non-nil error for an event that
// ends the request as a failure.
func (s *stream) handle(ev event) *engine.Error {
	if isDone(ev.Data) {
		s.done = true
		s.res.E2E = ev.At.Sub(s.res.Start)
		return nil
	}
	if string(ev.Type) == "error" {
		return &engine.Error{Class: engine.ErrAPI, Message: serverMessage(ev.Data)}
	}
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		return nil
	}
	if err := s.dec.decode(ev.Data, s.chunk); err != nil {
		return &engine.Error{Class: engine.ErrStreamMalformed,
			Message: "undecodable event: " + err.Error() + "; data: " + truncate(string(ev.Data), 100)}
	}
	if msg, ok := s.chunk.apiError(); ok {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	s.events++
	if u := s.chunk.Usage; u != nil {
		s.usage, s.hasUsage = *u, true
	}
	if s.choices() {
		s.textAt(ev.At)
	}
	if !s.firstText.IsZero() {
		s.w.activity(ev.At)
	}
	return nil
}

// choices records content and finish reasons and reports whether any
// choice carried generated text. Text is choice 0's content only: with
// n > 1 the choices' tokens interleave.
func (s *stream) choices() bool {
	gen := false
	for i := range s.chunk.Choices {
		ch := &s.chunk.Choices[i]
		if ch.Delta.generated() {
			gen = true
		}
		if ch.Index == 0 {
			s.text.WriteString(ch.Delta.Content)
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			s.finished = true
			if s.res.FinishReason == "" || ch.Index == 0 {
				s.res.FinishReason = string(ch.FinishReason)
			}
		}
	}
	return gen
}

// textAt stamps a text-carrying event that arrived at at.
func (s *stream) textAt(at time.Time) {
	r := s.res
	r.TextEvents++
	if s.firstText.IsZero() {
		s.firstText = at
		r.TTFT = at.Sub(r.Start)
	} else {
		if r.ITL == nil {
			r.ITL = make([]time.Duration, 0, s.itlHint)
		}
		r.ITL = append(r.ITL, at.Sub(s.lastText))
	}
	s.lastText = at
}

// finish fills the fields computed from the whole stream. TPOT needs the
// complete token count, so only a successful stream has one.
func (s *stream) finish() {
	r := s.res
	r.Text = s.text.String()
	setTokens(r, s.usage, s.hasUsage)
	if r.Err == nil && r.OutputTokens >= 2 {
		r.TPOT = s.lastText.Sub(s.firstText) / time.Duration(r.OutputTokens-1)
	}
}

// setTokens sets the token counts, trusting usage only when it is sane: a
// completion count below the number of text events is impossible.
func setTokens(r *engine.Result, u openai.Usage, ok bool) {
	if ok && u.PromptTokens > 0 {
		r.InputTokens = u.PromptTokens
	}
	if ok && u.CompletionTokens > 0 && u.CompletionTokens >= r.TextEvents {
		r.OutputTokens, r.TokensSource = u.CompletionTokens, engine.TokensFromUsage
		return
	}
	r.OutputTokens, r.TokensSource = r.TextEvents, engine.TokensFromEvents
}

// isDone reports the end-of-stream sentinel, tolerating surrounding space.
func isDone(data []byte) bool {
	return len(data) >= 6 && string(bytes.TrimSpace(data)) == "[DONE]"
}
