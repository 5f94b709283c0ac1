package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/llmload/llmload/engine"
)

// AnthropicVersion is the anthropic-version header every Messages request
// carries: the API version whose shapes the Messages dialect reads.
const AnthropicVersion = "2023-06-01"

// messagesDialect speaks Anthropic's Messages API (POST /messages), the
// API key in x-api-key. A stream is typed events: message_start (input
// usage), content_block_start (a tool call's id and name),
// content_block_delta (text_delta, thinking_delta as reasoning,
// input_json_delta as a tool call's arguments), message_delta (the stop
// reason and output usage), message_stop (the end); ping is ignored and
// an error event is an api_error.
type messagesDialect struct{}

func (messagesDialect) url(c *Client) string { return c.messagesURL }

// auth sends the key as Anthropic wants it (x-api-key) unless Config.Auth
// says otherwise (a gateway in front of it), and the API version.
func (messagesDialect) auth(c *Client, h http.Header) {
	c.messagesCred.set(h)
	anthropicVersion.set(h)
}

// anthropicVersion is the header of every Messages request.
var anthropicVersion = newField("Anthropic-Version", AnthropicVersion)

func (messagesDialect) endName() string { return "message_stop" }

// messagesBody is a Messages request.
type messagesBody struct {
	Model         string             `json:"model"`
	MaxTokens     int                `json:"max_tokens,omitempty"`
	System        string             `json:"system,omitempty"`
	Messages      []anthropicMessage `json:"messages"`
	Stream        bool               `json:"stream"`
	Temperature   *float64           `json:"temperature,omitempty"`
	TopP          *float64           `json:"top_p,omitempty"`
	StopSequences []string           `json:"stop_sequences,omitempty"`
	Tools         []any              `json:"tools,omitempty"`
	ToolChoice    any                `json:"tool_choice,omitempty"`
}

// anthropicMessage is a message whose content is a string, or blocks
// for a tool-calling turn.
type anthropicMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// anthropicBlock is a content block of a request: text, a tool_use an
// assistant made, or the tool_result answering it.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
}

// imageSource is an image block's source: base64 data or a URL.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

func (messagesDialect) body(req *engine.ChatRequest, _ bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	if err := unsupported(req, "Messages API", true); err != nil {
		return nil, err
	}
	msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	return encode(&messagesBody{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System, Stream: !req.NoStream,
		Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.Stop, Tools: req.Tools, ToolChoice: req.ToolChoice,
		Messages: msgs}, req.Extra)
}

// anthropicMessages turns chat messages into Anthropic's: an assistant's
// tool calls become tool_use blocks after its text, a tool message a
// user's tool_result block, parts text and image blocks; other messages
// keep their string content. The API takes no audio or video.
func anthropicMessages(msgs []engine.Message) ([]anthropicMessage, error) {
	out := make([]anthropicMessage, 0, len(msgs))
	n := 0
	for i := range msgs {
		m := &msgs[i]
		switch {
		case len(m.Parts) > 0:
			blocks := make([]anthropicBlock, len(m.Parts))
			for j := range m.Parts {
				p := &m.Parts[j]
				switch p.Type {
				case engine.PartText:
					blocks[j] = anthropicBlock{Type: "text", Text: p.Text}
				case engine.PartImage:
					src := &imageSource{Type: "url", URL: p.URL}
					if p.Media != nil {
						src = &imageSource{Type: "base64", MediaType: p.Media.MIME, Data: mediaRef(p, &n, false)}
					}
					blocks[j] = anthropicBlock{Type: "image", Source: src}
				default:
					return nil, partsError("Messages API", i, j, p)
				}
			}
			out = append(out, anthropicMessage{Role: m.Role, Content: blocks})
		case m.Role == "tool":
			out = append(out, anthropicMessage{Role: "user",
				Content: []anthropicBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &m.Content}}})
		case len(m.ToolCalls) > 0:
			var blocks []anthropicBlock
			if m.Content != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
			}
			out = append(out, anthropicMessage{Role: m.Role, Content: blocks})
		default:
			out = append(out, anthropicMessage{Role: m.Role, Content: m.Content})
		}
	}
	return out, nil
}

// toolInput is a tool call's arguments as the JSON object a tool_use
// block's input must be: {} when they are not one.
func toolInput(args string) json.RawMessage {
	a := bytes.TrimSpace([]byte(args))
	if len(a) > 0 && a[0] == '{' && json.Valid(a) {
		return a
	}
	return json.RawMessage(`{}`)
}

// prompt is the system prompt and the messages.
func (messagesDialect) prompt(req *engine.ChatRequest) *engine.ChatRequest {
	msgs := req.Messages
	if msgs == nil {
		msgs = []engine.Message{}
	}
	return promptView(req.System, msgs, "")
}

// messagesType is an event's type, decoded without allocating.
type messagesType uint8

const (
	mtOther messagesType = iota
	mtMessageStart
	mtBlockStart
	mtBlockDelta
	mtMessageDelta
	mtMessageStop
	mtPing
	mtError
)

func (t *messagesType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"message_start"`:
		*t = mtMessageStart
	case `"content_block_start"`:
		*t = mtBlockStart
	case `"content_block_delta"`:
		*t = mtBlockDelta
	case `"message_delta"`:
		*t = mtMessageDelta
	case `"message_stop"`:
		*t = mtMessageStop
	case `"ping"`:
		*t = mtPing
	case `"error"`:
		*t = mtError
	default:
		*t = mtOther
	}
	return nil
}

// messagesEvent is the members of a streamed event that carry text, a
// tool call, usage, the stop reason or an error.
type messagesEvent struct {
	Type    messagesType `json:"type"`
	Index   int          `json:"index"`
	Message *struct {
		Usage json.RawMessage `json:"usage"`
	} `json:"message"`
	ContentBlock anthropicContent `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// anthropicContent is a content block of an answer.
type anthropicContent struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

// anthropicUsage is the Messages API's usage: input_tokens leaves out the
// prompt tokens read from or written to the prompt cache, which the
// request sent all the same.
type anthropicUsage struct {
	Input       tokenCount `json:"input_tokens"`
	CacheRead   tokenCount `json:"cache_read_input_tokens"`
	CacheCreate tokenCount `json:"cache_creation_input_tokens"`
	Output      tokenCount `json:"output_tokens"`
}

// addUsage reads a usage member leniently into u: counts it holds replace
// the ones u has. The output count is taken only where it is final
// (message_delta, a whole answer): message_start's is a placeholder.
func addUsage(u *usage, raw json.RawMessage, output bool) {
	var a anthropicUsage
	if len(raw) == 0 || json.Unmarshal(raw, &a) != nil {
		return
	}
	if a.Input.ok {
		u.Prompt = tokenCount{a.Input.n + a.CacheRead.n + a.CacheCreate.n, true}
	}
	if a.CacheRead.ok {
		u.PromptDetails.Cached = a.CacheRead
	}
	if a.Output.ok && output {
		u.Completion = a.Output
	}
}

// event applies one typed event.
func (messagesDialect) event(s *stream, ev event) (delta, *engine.Error) {
	e := s.mev
	if ok, err := decodeTyped(s, ev, e); !ok {
		return noText, err
	}
	switch e.Type {
	case mtMessageStart:
		if e.Message != nil {
			addUsage(&s.tally.usage, e.Message.Usage, false)
		}
	case mtBlockStart:
		return blockStart(s, e), nil
	case mtBlockDelta:
		return blockDelta(s, e), nil
	case mtMessageDelta:
		addUsage(&s.tally.usage, e.Usage, true)
		if r := e.Delta.StopReason; r != "" {
			s.finished = true
			s.res.FinishReason = messagesFinish(r)
		}
	case mtMessageStop:
		s.end(ev.At)
	case mtError:
		return noText, &engine.Error{Class: engine.ErrAPI, Message: anthropicError(e.Error)}
	default:
		// A gateway's own error, in OpenAI's shape or under an error event.
		switch {
		case len(e.Error) > 0 && string(e.Error) != "null":
			return noText, &engine.Error{Class: engine.ErrAPI, Message: anthropicError(e.Error)}
		case string(ev.Type) == "error":
			return noText, &engine.Error{Class: engine.ErrAPI, Message: serverMessage(ev.Data)}
		}
	}
	return noText, nil
}

// blockStart notes a tool_use block's id and name; a block that starts
// with text (servers send it empty) carries that text.
func blockStart(s *stream, e *messagesEvent) delta {
	b := &e.ContentBlock
	switch b.Type {
	case "tool_use":
		s.tools.at(e.Index).named(b.ID, b.Name)
	case "text":
		return s.answerText(b.Text)
	case "thinking":
		return s.reasoningText(b.Thinking)
	}
	return noText
}

// blockDelta records a delta's text, thinking or tool arguments.
func blockDelta(s *stream, e *messagesEvent) delta {
	d := &e.Delta
	switch d.Type {
	case "text_delta":
		return s.answerText(d.Text)
	case "thinking_delta":
		return s.reasoningText(d.Thinking)
	case "input_json_delta":
		return s.toolArgs(e.Index, d.PartialJSON)
	}
	return noText // signature_delta, citations_delta: no generated text
}

// messagesFinish names a stop reason in chat's words.
func messagesFinish(reason string) string {
	switch reason {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	case "tool_use":
		return "tool_calls"
	}
	return reason
}

// anthropicError is the message of an error object {"type":...,
// "message":...}: its type first, since "Overloaded" alone says less
// than overloaded_error does.
func anthropicError(raw json.RawMessage) string {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || (e.Type == "" && e.Message == "") {
		return firstText(truncate(rawText(raw), maxMessageLen), "error event without message")
	}
	msg := e.Message
	if e.Type != "" && !strings.Contains(msg, e.Type) {
		msg = strings.TrimSuffix(e.Type+": "+msg, ": ")
	}
	if e.Type == "overloaded_error" {
		msg += " (the server is overloaded, as Anthropic's HTTP 529 says: lower the load, or retry later)"
	}
	return truncate(msg, maxMessageLen)
}

// cutEnd reports a message_stop.
func (messagesDialect) cutEnd(data []byte) bool {
	var e struct {
		Type messagesType `json:"type"`
	}
	return json.Unmarshal(data, &e) == nil && e.Type == mtMessageStop
}

// anthropicAnswer is a whole Messages answer, or an error object.
type anthropicAnswer struct {
	Type       string             `json:"type"`
	Content    []anthropicContent `json:"content"`
	StopReason string             `json:"stop_reason"`
	Usage      json.RawMessage    `json:"usage"`
	Error      json.RawMessage    `json:"error"`
}

// complete reads a whole message: its text, thinking and tool_use blocks,
// usage and stop reason.
func (d messagesDialect) complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error {
	var a anthropicAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return undecodable("message", err, data)
	}
	if a.Type == "error" || (len(a.Error) > 0 && string(a.Error) != "null") {
		return &engine.Error{Class: engine.ErrAPI, Message: anthropicError(a.Error)}
	}
	var t tally
	addUsage(&t.usage, a.Usage, true)
	var w wholeAnswer
	for i := range a.Content {
		b := &a.Content[i]
		switch b.Type {
		case "text":
			w.text.WriteString(b.Text)
		case "thinking":
			w.reasoning.WriteString(b.Thinking)
		case "tool_use":
			w.call(i, b.ID, b.Name, string(b.Input))
		}
	}
	w.fill(c, res, &t, messagesFinish(a.StopReason), d.prompt(req))
	return nil
}
