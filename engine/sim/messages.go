package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// AnthropicVersion is the anthropic-version the Messages route wants in
// every request, as Anthropic's API does.
const AnthropicVersion = "2023-06-01"

// serveMessages answers POST /v1/messages, Anthropic's Messages API. A
// request without anthropic-version gets Anthropic's 400.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Anthropic-Version") == "" {
		s.requests.Add(1)
		s.rejected.Add(1)
		badRequest("", "anthropic-version: header is required").writeFor(w, apiMessages)
		return
	}
	s.serve(w, r, parseMessages, apiMessages)
}

// messagesRequest is the part of a Messages request the simulator reads;
// other fields are accepted and ignored.
type messagesRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	System        json.RawMessage    `json:"system"`
	Messages      []anthropicMessage `json:"messages"`
	Stream        bool               `json:"stream"`
	Temperature   *float32           `json:"temperature"`
	TopP          *float32           `json:"top_p"`
	StopSequences []string           `json:"stop_sequences"`
	Tools         []struct {
		Name        string `json:"name"`
		InputSchema any    `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

// anthropicMessage is a message: its content a string or blocks.
type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block of a request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// anthropicRoles are the roles a Messages request's messages may have:
// the system prompt is a field of its own.
var anthropicRoles = map[string]bool{openai.ChatMessageRoleUser: true, openai.ChatMessageRoleAssistant: true}

// parseMessages decodes a Messages request into the chat request it
// amounts to (system first, tool_use blocks as tool calls, tool_result
// blocks as tool messages), judged as chat requests are. max_tokens is
// required, as Anthropic requires it.
func parseMessages(cfg *Config, body []byte) (*completion, *apiError) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	if req.MaxTokens == nil {
		return nil, badRequest("max_tokens", "max_tokens: Field required")
	}
	if len(req.Messages) == 0 {
		return nil, badRequest("messages", "messages: at least one message is required").as(KindNoMessages)
	}
	system, aerr := blocksText("system", req.System)
	if aerr != nil {
		return nil, aerr
	}
	var msgs []openai.ChatCompletionMessage
	if system != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	mc := &mediaCount{}
	for i := range req.Messages {
		m, aerr := req.Messages[i].chat(cfg, i, mc)
		if aerr != nil {
			return nil, aerr
		}
		msgs = append(msgs, m...)
	}
	chat := openai.ChatCompletionRequest{Model: req.Model, Messages: msgs, Stream: req.Stream, MaxTokens: *req.MaxTokens,
		Stop: req.StopSequences, ToolChoice: anthropicChoice(req.ToolChoice)}
	if chat.MaxTokens == 0 {
		return nil, badRequest("max_tokens", "max_tokens: must be at least 1").as(KindNegativeMax)
	}
	if req.Temperature != nil {
		if *req.Temperature > 1 {
			return nil, badRequest("temperature", "temperature: must be between 0 and 1, got %v", *req.Temperature)
		}
		chat.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		chat.TopP = *req.TopP
	}
	for _, t := range req.Tools {
		chat.Tools = append(chat.Tools, functionTool(t.Name, t.InputSchema))
	}
	return checkTranslated(cfg, &chat, mc.orNil()) // message_start and message_delta always carry usage
}

// anthropicChoice is a Messages tool_choice in the Chat API's words: any
// is required, a tool is a named function.
func anthropicChoice(c *struct {
	Type string `json:"type"`
	Name string `json:"name"`
}) any {
	switch {
	case c == nil:
		return nil
	case c.Type == "any":
		return choiceRequired
	case c.Type == "tool":
		return map[string]any{"type": "function", "function": map[string]any{"name": c.Name}}
	}
	return c.Type
}

// chat is the message as chat messages: its tool_result blocks become
// tool messages, its tool_use blocks an assistant's tool calls.
func (m *anthropicMessage) chat(cfg *Config, i int, mc *mediaCount) ([]openai.ChatCompletionMessage, *apiError) {
	param := fmt.Sprintf("messages[%d]", i)
	if !anthropicRoles[m.Role] {
		return nil, badRequest(param+".role", "%s.role: unexpected role %s; the Messages API takes user and assistant (system is a field of its own)",
			param, quoteShort(m.Role)).as(KindBadRole)
	}
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		return []openai.ChatCompletionMessage{{Role: m.Role, Content: text}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return nil, badRequest(param+".content", "%s.content must be a string or a list of blocks: %v", param, err)
	}
	out := []openai.ChatCompletionMessage{{Role: m.Role}}
	var b strings.Builder
	before := mc.items()
	for j := range blocks {
		bl := &blocks[j]
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
		case "image":
			if aerr := bl.image(cfg, fmt.Sprintf("%s.content[%d]", param, j), mc); aerr != nil {
				return nil, aerr
			}
		case "tool_use":
			out[0].ToolCalls = append(out[0].ToolCalls, openai.ToolCall{ID: bl.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: bl.Name, Arguments: string(bl.Input)}})
		case "tool_result":
			result, aerr := blocksText(fmt.Sprintf("%s.content[%d].content", param, j), bl.Content)
			if aerr != nil {
				return nil, aerr
			}
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: bl.ToolUseID, Content: result})
		default:
			return nil, badRequest(fmt.Sprintf("%s.content[%d].type", param, j),
				"%s.content[%d].type: %s is not simulated; expected text, image, tool_use or tool_result", param, j, quoteShort(bl.Type))
		}
	}
	withMedia(&out[0], b.String(), mc, before)
	if out[0].Content == "" && len(out[0].MultiContent) == 0 && len(out[0].ToolCalls) == 0 && len(out) > 1 {
		out = out[1:] // a user message of tool results only
	}
	return out, nil
}

// image counts an image block: a base64 source or a URL one.
func (bl *anthropicBlock) image(cfg *Config, param string, mc *mediaCount) *apiError {
	at := where{param, "image"}
	src := bl.Source
	switch {
	case src == nil:
		return badRequest(param+".source", "%s: source: Field required", at)
	case src.Type == "url":
		if !isHTTP(src.URL) {
			return badRequest(param+".source.url", "%s: source.url must be an http(s) URL, got %s", at, quoteShort(src.URL))
		}
		return mc.image(cfg, at, src.URL)
	case src.Type != "base64":
		return badRequest(param+".source.type", "%s: source.type %s is not simulated; expected base64 or url", at, quoteShort(src.Type))
	}
	return mc.imageData(cfg, at, src.MediaType, src.Data)
}

// blocksText is a content that is a string or text blocks, joined.
func blocksText(param string, raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", badRequest(param, "%s must be a string or a list of text blocks: %v", param, err)
	}
	var b strings.Builder
	for j, bl := range blocks {
		if bl.Type != "text" {
			return "", badRequest(param, "%s[%d].type: the model accepts text only, got %s", param, j, quoteShort(bl.Type))
		}
		b.WriteString(bl.Text)
	}
	return b.String(), nil
}

// anthropicUsage is the Messages API's usage: input_tokens leaves out the
// prompt tokens read from the cache.
type anthropicUsage struct {
	InputTokens          int `json:"input_tokens"`
	CacheReadInputTokens int `json:"cache_read_input_tokens"`
	OutputTokens         int `json:"output_tokens"`
}

func (c *completion) anthropicUsage(output int) anthropicUsage {
	return anthropicUsage{InputTokens: c.promptTokens - c.cachedTokens, CacheReadInputTokens: c.cachedTokens, OutputTokens: output}
}

// stopReason is the answer's stop_reason.
func (c *completion) stopReason() string {
	switch {
	case c.tool != nil:
		return "tool_use"
	case c.finish == openai.FinishReasonLength:
		return "max_tokens"
	}
	return "end_turn"
}

// messageObject is a whole message, as answered or as message_start
// carries it (empty, no stop reason yet).
type messageObject struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Role       string           `json:"role"`
	Model      string           `json:"model"`
	Content    []map[string]any `json:"content"`
	StopReason *string          `json:"stop_reason"`
	Usage      anthropicUsage   `json:"usage"`
}

// block is the answer's content block: text, or the tool_use its text is
// the input of (input is {} until it is complete).
func (c *completion) block(text string, complete bool) map[string]any {
	if p := c.tool; p != nil {
		input := json.RawMessage(`{}`)
		if complete {
			input = json.RawMessage(p.piece(text, true, true))
		}
		return map[string]any{"type": "tool_use", "id": p.id, "name": p.name, "input": input}
	}
	return map[string]any{"type": "text", "text": text}
}

// answerMessage generates c whole and answers with the message.
func (s *Server) answerMessage(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	text, err := s.generateWhole(ctx, w, c)
	if err != nil {
		return err
	}
	reason := c.stopReason()
	writeJSON(w, http.StatusOK, messageObject{ID: id, Type: "message", Role: openai.ChatMessageRoleAssistant, Model: s.cfg.Model,
		Content: []map[string]any{c.block(text, true)}, StopReason: &reason, Usage: c.anthropicUsage(c.usageTokens())})
	return nil
}

// sendNamed writes v as one event of type typ, the event line naming it.
func (e *eventStream) sendNamed(typ string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.write(append(append([]byte("event: "+typ+"\ndata: "), b...), "\n\n"...))
}

// streamMessage streams c as the Messages API does: message_start (with
// the input usage) and a ping at once, content_block_start with the first
// chunk, a content_block_delta per chunk (text_delta, or input_json_delta
// for a tool_use), content_block_stop, message_delta with the stop reason
// and the whole usage, and message_stop. A stream ended early stops
// without them. message_start goes out before the prefill, when the
// prefix cache has not been looked up yet, so its usage counts no cached
// tokens; message_delta's, cumulative as Anthropic's is, counts them.
func (s *Server) streamMessage(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	es := newEventStream(w)
	start := messageObject{ID: id, Type: "message", Role: openai.ChatMessageRoleAssistant, Model: s.cfg.Model,
		Content: []map[string]any{}, Usage: c.anthropicUsage(1)}
	if err := es.sendNamed("message_start", map[string]any{"type": "message_start", "message": start}); err != nil {
		return err
	}
	if err := es.sendNamed("ping", map[string]any{"type": "ping"}); err != nil {
		return err
	}
	deltaType, field := "text_delta", "text"
	if c.tool != nil {
		deltaType, field = "input_json_delta", "partial_json"
	}
	deltas := newSplicer("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": deltaType, field: spliceMark}})
	err := s.generate(ctx, c, func(text string) error {
		if c.firstChunk() {
			block := map[string]any{"type": "content_block_start", "index": 0, "content_block": c.block("", false)}
			if err := es.sendNamed("content_block_start", block); err != nil {
				return err
			}
		}
		if c.tool != nil {
			text = c.tool.piece(text, c.firstChunk(), c.lastChunk())
		}
		return es.write(deltas.event(text))
	})
	if err != nil {
		return err
	}
	if err := es.sendNamed("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}); err != nil {
		return err
	}
	end := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": c.stopReason(), "stop_sequence": nil},
		"usage": c.anthropicUsage(c.usageTokens())}
	if err := es.sendNamed("message_delta", end); err != nil {
		return err
	}
	return es.sendNamed("message_stop", map[string]any{"type": "message_stop"})
}
