package openai

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
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
// finish_reason is still generated text and is timed like any other. What
// an event means is its dialect's to say (see dialect.event); the timing
// is the same for every dialect. Used by one goroutine.
type stream struct {
	res     *engine.Result
	w       *watchdog
	dialect dialect
	// The decoders' reused values: a chat chunk, a Responses or a
	// Messages event.
	chunk *streamChunk
	dec   *chunkDecoder
	rev   *responsesEvent
	mev   *messagesEvent

	text, reasoning, other strings.Builder
	tally                  tally
	tools                  toolCalls

	firstText, lastText time.Time
	itlHint             int
	events              int  // decoded events, text or not
	finished            bool // a finish (stop) reason arrived: EOF after it is a normal end
	done                bool // the stream's last event arrived
	idRead              bool // the first event was read for the answer's id

	// Per-chunk usage: cumTokens is the latest cumulative completion count;
	// the flags void TokenITL when a text event lacked a count, or a count
	// went backwards or claimed more tokens than its text can hold.
	cumTokens                int
	tokensMissing, tokensBad bool
}

// handle applies one event. It returns a non-nil error for an event that
// ends the request as a failure.
func (s *stream) handle(ev event) *engine.Error {
	if !s.idRead {
		// The first event names the answer (its "id"), as the server's
		// trace span and logs do.
		s.idRead = true
		if id := answerID(ev.Data); id != "" {
			s.res.RequestID = id
		}
	}
	d, err := s.dialect.event(s, ev)
	if err != nil {
		return err
	}
	if d.gen > 0 {
		s.textAt(ev.At, d.content, d.gen, d.tokens)
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

// end marks the stream's last event, which arrived at at.
func (s *stream) end(at time.Time) {
	s.done = true
	s.res.E2E = at.Sub(s.res.Start)
}

// Bounds on one answer, so a server that never stops cannot exhaust the
// client's memory (timings, ITL samples and text grow with every event).
const (
	MaxTextEvents = 1 << 20
	MaxTextBytes  = 64 << 20
)

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
	r.ToolCalls = s.tools.list()
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
