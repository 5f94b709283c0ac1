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
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []chatToolDelta `json:"tool_calls,omitempty"`
}

// chatToolDelta is a piece of a tool call, as OpenAI streams it: the
// first names the call (id, type and name, with empty arguments), later
// ones carry only the index and a piece of the arguments.
type chatToolDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolDeltas are the deltas of a chunk of a tool call's arguments: the
// naming delta first when the chunk is the first.
func (c *completion) toolDeltas(text string) []chatDelta {
	p := c.tool
	var out []chatDelta
	if c.firstChunk() {
		d := chatToolDelta{ID: p.id, Type: "function"}
		d.Function.Name = p.name
		out = append(out, chatDelta{ToolCalls: []chatToolDelta{d}})
	}
	var d chatToolDelta
	d.Function.Arguments = p.piece(text, c.firstChunk(), c.lastChunk())
	return append(out, chatDelta{ToolCalls: []chatToolDelta{d}})
}

// spliceMark stands for the text in an event template.
const spliceMark = "\x00content"

// splicer writes events that differ only in one JSON string: the bytes
// before and after it are built once, and each event splices the text's
// JSON string in, since a struct encoded per token would be most of the
// simulator's cost at thousands of streams. Not safe for concurrent use.
type splicer struct {
	head, tail, buf []byte
}

// newSplicer builds the template of v, whose one string spliceMark
// stands for the text; a non-empty name adds an event line.
func newSplicer(name string, v any) *splicer {
	b, _ := json.Marshal(v) // of plain strings and numbers: cannot fail
	mark, _ := json.Marshal(spliceMark)
	i := bytes.Index(b, mark)
	head := []byte("data: ")
	if name != "" {
		head = []byte("event: " + name + "\ndata: ")
	}
	return &splicer{head: append(head, b[:i]...), tail: append(b[i+len(mark):], "\n\n"...)}
}

// event returns the event carrying text; it is valid until the next call.
func (c *splicer) event(text string) []byte {
	q, _ := json.Marshal(text) // a string always encodes
	c.buf = append(append(append(c.buf[:0], c.head...), q...), c.tail...)
	return c.buf
}

// newContentEvents is the splicer of one stream's content chunks.
func newContentEvents(base chatChunk) *splicer {
	base.Choices = []chatChunkChoice{{Delta: chatDelta{Content: ptr(spliceMark)}}}
	return newSplicer("", base)
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
		if c.tool != nil {
			return s.toolChunks(chunk, c, text, &role)
		}
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

// toolChunks sends a chunk of a tool call's arguments, with the role
// (fixed-delay mode) and the naming delta before the first.
func (s *Server) toolChunks(chunk func(chatDelta, *string) error, c *completion, text string, role *string) error {
	for _, d := range c.toolDeltas(text) {
		d.Role, *role = *role, ""
		if err := chunk(d, nil); err != nil {
			return err
		}
	}
	return nil
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
