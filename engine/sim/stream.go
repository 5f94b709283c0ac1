package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/sashabaranov/go-openai"
)

// eventStream writes server-sent events, one flush per event, so each
// chunk leaves when the simulated model produced it. Not safe for
// concurrent use.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// newEventStream sends the 200 and the event-stream headers.
func newEventStream(w http.ResponseWriter) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// send writes v as one "data:" event.
func (e *eventStream) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.write(append(append([]byte("data: "), b...), "\n\n"...))
}

func (e *eventStream) write(event []byte) error {
	if _, err := e.w.Write(event); err != nil {
		return err
	}
	return e.rc.Flush()
}

// streamCompletion streams c: the role chunk at once (before any queueing,
// so TTFB stays small while TTFT includes the wait), the content chunks as
// they are generated, the finish chunk, the usage-only chunk when asked
// for, and [DONE]. A stream ended early stops without [DONE].
func (s *Server) streamCompletion(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	es := newEventStream(w)
	base := openai.ChatCompletionStreamResponse{
		ID:                id,
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             s.cfg.Model,
		SystemFingerprint: systemFingerprint,
	}
	chunk := func(delta openai.ChatCompletionStreamChoiceDelta, finish openai.FinishReason) error {
		ev := base
		ev.Choices = []openai.ChatCompletionStreamChoice{{Delta: delta, FinishReason: finish}}
		return es.send(ev)
	}
	if err := chunk(openai.ChatCompletionStreamChoiceDelta{Role: openai.ChatMessageRoleAssistant}, ""); err != nil {
		return err
	}
	err := s.generate(ctx, c, func(text string) error {
		return chunk(openai.ChatCompletionStreamChoiceDelta{Content: text}, "")
	})
	if err != nil {
		return err
	}
	if err := chunk(openai.ChatCompletionStreamChoiceDelta{}, c.finish); err != nil {
		return err
	}
	if c.includeUsage {
		ev, u := base, usage(c)
		ev.Choices, ev.Usage = []openai.ChatCompletionStreamChoice{}, &u
		if err := es.send(ev); err != nil {
			return err
		}
	}
	return es.write([]byte("data: [DONE]\n\n"))
}

// textChunk is one event of a streamed /v1/completions answer.
type textChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []textChoice  `json:"choices"`
	Usage   *openai.Usage `json:"usage,omitempty"`
}

// textChoice is go-openai's CompletionChoice with a nullable finish
// reason, as servers stream it.
type textChoice struct {
	Text         string  `json:"text"`
	Index        int     `json:"index"`
	FinishReason *string `json:"finish_reason"`
}

// streamText streams a /v1/completions answer: text chunks as generated
// (no role chunk: the legacy API has none), the finish chunk, the
// usage-only chunk when asked for, and [DONE].
func (s *Server) streamText(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	es := newEventStream(w)
	base := textChunk{ID: id, Object: "text_completion", Created: time.Now().Unix(), Model: s.cfg.Model}
	chunk := func(text string, finish *string) error {
		ev := base
		ev.Choices = []textChoice{{Text: text, FinishReason: finish}}
		return es.send(ev)
	}
	if err := s.generate(ctx, c, func(text string) error { return chunk(text, nil) }); err != nil {
		return err
	}
	finish := string(c.finish)
	if err := chunk("", &finish); err != nil {
		return err
	}
	if c.includeUsage {
		ev, u := base, usage(c)
		ev.Choices, ev.Usage = []textChoice{}, &u
		if err := es.send(ev); err != nil {
			return err
		}
	}
	return es.write([]byte("data: [DONE]\n\n"))
}
