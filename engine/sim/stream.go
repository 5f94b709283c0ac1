package sim

import (
	"bytes"
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

// chatChunk is one event of a streamed chat answer, in vLLM's shape.
type chatChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	Choices           []chatChunkChoice `json:"choices"`
	SystemFingerprint string            `json:"system_fingerprint,omitempty"`
	Usage             *openai.Usage     `json:"usage,omitempty"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// chatDelta carries the role, or a content that may be "" (vLLM's role
// chunk sends both), or nothing (the finish chunk).
type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// contentMark stands for the content in a chunk template.
const contentMark = `\u0000content`

// contentEvents writes the content chunks of one stream: each is the
// template's bytes with the content's JSON string spliced in, since a
// struct encoded per token would be most of the simulator's cost at
// thousands of streams.
type contentEvents struct {
	head, tail, buf []byte
}

func newContentEvents(base chatChunk) *contentEvents {
	base.Choices = []chatChunkChoice{{Delta: chatDelta{Content: ptr("\x00content")}}}
	b, _ := json.Marshal(base) // of plain strings and numbers: cannot fail
	i := bytes.Index(b, []byte(`"`+contentMark+`"`))
	return &contentEvents{head: append([]byte("data: "), b[:i]...), tail: append(b[i+len(contentMark)+2:], "\n\n"...)}
}

// event returns the chunk carrying text; it is valid until the next call.
func (c *contentEvents) event(text string) []byte {
	q, _ := json.Marshal(text) // a string always encodes
	c.buf = append(append(append(c.buf[:0], c.head...), q...), c.tail...)
	return c.buf
}

func ptr[T any](v T) *T { return &v }

// streamCompletion streams c: the role chunk at once (before any queueing,
// so TTFB stays small while TTFT includes the wait), the content chunks as
// they are generated, the finish chunk, the usage-only chunk when asked
// for, and [DONE]. In the fixed-delay mode the first content chunk carries
// the role instead. A stream ended early stops without [DONE].
func (s *Server) streamCompletion(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	es := newEventStream(w)
	base := chatChunk{
		ID:                id,
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             s.cfg.Model,
		SystemFingerprint: systemFingerprint,
	}
	chunk := func(delta chatDelta, finish *string) error {
		ev := base
		ev.Choices = []chatChunkChoice{{Delta: delta, FinishReason: finish}}
		return es.send(ev)
	}
	role := openai.ChatMessageRoleAssistant
	if !s.cfg.fixed() {
		if err := chunk(chatDelta{Role: role, Content: ptr("")}, nil); err != nil {
			return err
		}
		role = ""
	}
	content := newContentEvents(base)
	err := s.generate(ctx, c, func(text string) error {
		if role != "" {
			d := chatDelta{Role: role, Content: &text}
			role = ""
			return chunk(d, nil)
		}
		return es.write(content.event(text))
	})
	if err != nil {
		return err
	}
	if err := chunk(chatDelta{}, ptr(string(c.finish))); err != nil {
		return err
	}
	if c.includeUsage {
		ev, u := base, usage(c)
		ev.Choices, ev.Usage = []chatChunkChoice{}, &u
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
