package openai

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	openai "github.com/sashabaranov/go-openai"
)

// Bounds on per-chunk usage. A token is at least one byte of text, give or
// take the few special tokens a server strips (the markers around
// reasoning), so a chunk claiming more tokens than bytes + chunkTokenSlack
// is nonsense; and no request records more than maxTokenITL token gaps.
const (
	chunkTokenSlack = 16
	maxTokenITL     = 1 << 20
)

// stream turns the events of one response into a Result. It keeps the
// state between events; the timing rules are DESIGN.md's: TTFT at the first
// event carrying generated text, TTFC at the first carrying answer text,
// one ITL sample per gap between text events. Text that comes after a
// finish_reason is still generated text and is timed like any other.
// Used by one goroutine.
type stream struct {
	res   *engine.Result
	w     *watchdog
	chunk *streamChunk
	dec   *chunkDecoder

	text, reasoning, other strings.Builder
	tally                  tally

	firstText, lastText time.Time
	itlHint             int
	events              int // decoded chunks, text or not
	finished            bool
	done                bool

	// Per-chunk usage: cumTokens is the latest cumulative completion count;
	// the flags void TokenITL when a text event lacked a count, or a count
	// went backwards or claimed more tokens than its text can hold.
	cumTokens                int
	tokensMissing, tokensBad bool
}

// handle applies one event. It returns a non-nil error for an event that
// ends the request as a failure.
func (s *stream) handle(ev event) *engine.Error {
	if isDone(ev.Data) {
		if s.events == 0 {
			return &engine.Error{Class: engine.ErrStreamMalformed, Message: "stream ended with [DONE] before any chunk"}
		}
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
	if msg, ok := s.chunk.apiError(ev.Data); ok {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	s.events++
	if t := s.chunk.Timings; t != nil {
		s.res.Server = t.result()
	}
	k := s.chunkTokens()
	if gen, content := s.choices(); gen > 0 {
		s.textAt(ev.At, content, gen, k)
	}
	if s.res.TextEvents > MaxTextEvents || s.text.Len()+s.reasoning.Len()+s.other.Len() > MaxTextBytes {
		return &engine.Error{Class: engine.ErrStreamMalformed, Message: fmt.Sprintf(
			"the server kept streaming past %d text events or %d MB of text (far beyond any max_tokens): stopped reading",
			MaxTextEvents, MaxTextBytes>>20)}
	}
	if !s.firstText.IsZero() {
		s.w.activity(ev.At)
	}
	return nil
}

// Bounds on one answer, so a server that never stops cannot exhaust the
// client's memory (timings, ITL samples and text grow with every event).
const (
	MaxTextEvents = 1 << 20
	MaxTextBytes  = 64 << 20
)

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

// choices records texts and finish reasons. It returns the bytes of
// generated text the choices carried and whether any was answer text.
// Texts are choice 0's only: with n > 1 the choices' tokens interleave.
func (s *stream) choices() (gen int, content bool) {
	reasoning := false
	for i := range s.chunk.Choices {
		ch := &s.chunk.Choices[i]
		gen += ch.generated()
		content = content || ch.Delta.Content != "" || ch.Text != ""
		reasoning = reasoning || ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != ""
		if ch.Index == 0 {
			s.text.WriteString(ch.Delta.Content)
			s.text.WriteString(ch.Text)
			ch.Delta.writeText(&s.reasoning, &s.other)
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

// textAt stamps a text event that arrived at at, carrying n bytes of text
// and k tokens by per-chunk usage (-1: unknown).
func (s *stream) textAt(at time.Time, content bool, n, k int) {
	r := s.res
	r.TextEvents++
	if s.firstText.IsZero() {
		s.firstText = at
		r.TTFT = at.Sub(r.Start)
	} else {
		if r.ITL == nil {
			r.ITL = make([]time.Duration, 0, s.itlHint)
		}
		gap := at.Sub(s.lastText)
		r.ITL = append(r.ITL, gap)
		s.tokenGaps(gap, n, k)
	}
	if k < 0 {
		// Without this event's count the next one's delta is unknown too.
		s.tokensMissing = true
	}
	if content && r.TTFC == 0 {
		r.TTFC = at.Sub(r.Start)
	}
	s.lastText = at
}

// tokenGaps spreads a gap over the k tokens of the event that ended it,
// which carried n bytes of text.
func (s *stream) tokenGaps(gap time.Duration, n, k int) {
	r := s.res
	switch {
	case k <= 0 || s.tokensBad || s.tokensMissing:
		return
	case k > n+chunkTokenSlack || len(r.TokenITL)+k > maxTokenITL:
		s.tokensBad = true
		return
	}
	if r.TokenITL == nil {
		r.TokenITL = make([]time.Duration, 0, max(s.itlHint, k))
	}
	per := gap / time.Duration(k)
	for range k {
		r.TokenITL = append(r.TokenITL, per)
	}
}

// finish fills the fields that need the whole stream, except the token
// counts and TPOT, which the client adds once the stream is closed.
func (s *stream) finish() {
	r := s.res
	r.Text = s.text.String()
	r.Streamed = r.Streamed || s.events > 0
	if s.tokensMissing || s.tokensBad {
		r.TokenITL = nil
	}
	t := &s.tally
	t.textEvents = r.TextEvents
	t.content, t.reasoning, t.other = r.Text, s.reasoning.String(), s.other.String()
}

// tpot sets TPOT from the complete token count; only a successful stream
// has one (DESIGN.md: (t_last_text − t_first_text) / (output_tokens − 1)).
func (s *stream) tpot() {
	r := s.res
	if r.Err == nil && r.OutputTokens >= 2 {
		r.TPOT = s.lastText.Sub(s.firstText) / time.Duration(r.OutputTokens-1)
	}
}

// isDone reports the end-of-stream sentinel, tolerating surrounding space.
func isDone(data []byte) bool {
	return len(data) >= 6 && string(bytes.TrimSpace(data)) == "[DONE]"
}
