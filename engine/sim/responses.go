package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// serveResponses answers POST /v1/responses, OpenAI's Responses API.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, parseResponses, apiResponses)
}

// responsesRequest is the part of a Responses request the simulator reads;
// other fields are accepted and ignored.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Stream          bool            `json:"stream"`
	Temperature     *float32        `json:"temperature"`
	TopP            *float32        `json:"top_p"`
	Tools           []struct {
		Type       string `json:"type"`
		Name       string `json:"name"`
		Parameters any    `json:"parameters"`
	} `json:"tools"`
	ToolChoice any `json:"tool_choice"`
}

// responsesItem is an input item: a message (its content a string or
// text parts), a function call an assistant made, or a tool's output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// parseResponses decodes a Responses request into the chat request it
// amounts to (instructions as a system message, then the input), judged
// as chat requests are.
func parseResponses(cfg *Config, body []byte) (*completion, *apiError) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	mc := &mediaCount{}
	msgs, aerr := responsesInput(cfg, req.Input, mc)
	if aerr != nil {
		return nil, aerr
	}
	if req.Instructions != "" {
		msgs = append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: req.Instructions}}, msgs...)
	}
	chat := openai.ChatCompletionRequest{Model: req.Model, Messages: msgs, Stream: req.Stream, ToolChoice: req.ToolChoice}
	if req.MaxOutputTokens != nil {
		chat.MaxTokens = *req.MaxOutputTokens
	}
	if req.Temperature != nil {
		chat.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		chat.TopP = *req.TopP
	}
	for _, t := range req.Tools {
		chat.Tools = append(chat.Tools, functionTool(t.Name, t.Parameters))
	}
	c, aerr := checkTranslated(cfg, &chat, mc.orNil()) // a Responses stream always ends with its usage
	if aerr != nil && aerr.param == "max_tokens" {
		aerr.param, aerr.message = "max_output_tokens", strings.ReplaceAll(aerr.message, "max_tokens", "max_output_tokens")
	}
	return c, aerr
}

// responsesInput reads input: a string is one user message.
func responsesInput(cfg *Config, raw json.RawMessage, mc *mediaCount) ([]openai.ChatCompletionMessage, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("input", "input is required").as(KindNoMessages)
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("input", "input must be a string or a list of items: %v", err)
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(items))
	for i := range items {
		m, aerr := items[i].message(cfg, i, mc)
		if aerr != nil {
			return nil, aerr
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// message is an input item as a chat message.
func (it *responsesItem) message(cfg *Config, i int, mc *mediaCount) (openai.ChatCompletionMessage, *apiError) {
	switch it.Type {
	case "", "message":
		before := mc.items()
		text, aerr := inputParts(cfg, fmt.Sprintf("input[%d].content", i), it.Content, mc)
		msg := openai.ChatCompletionMessage{Role: it.Role}
		withMedia(&msg, text, mc, before)
		return msg, aerr
	case "function_call":
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: it.CallID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}}}}, nil
	case "function_call_output":
		text, aerr := partsText(fmt.Sprintf("input[%d].output", i), it.Output)
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID, Content: text}, aerr
	}
	return openai.ChatCompletionMessage{}, badRequest(fmt.Sprintf("input[%d].type", i),
		"input[%d].type: %s is not simulated; expected message, function_call or function_call_output", i, quoteShort(it.Type))
}

// partsText is a content that is a string, or text parts ({"type":
// "input_text","text":...}) joined: a tool's output, text only.
func partsText(param string, raw json.RawMessage) (string, *apiError) {
	return inputParts(nil, param, raw, nil)
}

// responsesPart is an input content part: text, or (when the content
// may carry media) an input_image or input_audio.
type responsesPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text"`
	ImageURL   string      `json:"image_url"`
	FileID     string      `json:"file_id"`
	InputAudio *inputAudio `json:"input_audio"`
}

// inputParts is a content that is a string, or parts: text parts
// joined, media parts counted in mc (nil: text only).
func inputParts(cfg *Config, param string, raw json.RawMessage, mc *mediaCount) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var parts []responsesPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "%s must be a string or a list of parts: %v", param, err)
	}
	var b strings.Builder
	for j, p := range parts {
		switch {
		case p.Type == "input_text" || p.Type == "output_text" || p.Type == "text":
			b.WriteString(p.Text)
		case mc != nil && (p.Type == "input_image" || p.Type == "input_audio"):
			if aerr := mc.responsesMedia(cfg, fmt.Sprintf("%s[%d]", param, j), &p); aerr != nil {
				return "", aerr
			}
		default:
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, j),
				"%s[%d].type: %s is not simulated; expected %s", param, j, quoteShort(p.Type), partTypes(mc))
		}
	}
	return b.String(), nil
}

// partTypes names the part types a content accepts.
func partTypes(mc *mediaCount) string {
	if mc == nil {
		return "input_text (a tool's output is text)"
	}
	return "input_text, input_image or input_audio"
}

// responsesMedia counts an input_image (a data or http(s) URL; a file_id
// names an upload the simulator has not got) or an input_audio.
func (m *mediaCount) responsesMedia(cfg *Config, param string, p *responsesPart) *apiError {
	at := where{param, p.Type}
	switch {
	case p.Type == "input_audio" && (p.InputAudio == nil || p.InputAudio.Data == ""):
		return badRequest(param, "%s: input_audio.data is required", at)
	case p.Type == "input_audio":
		return m.audio(cfg, at, p.InputAudio.Format, p.InputAudio.Data)
	case p.FileID != "":
		return badRequest(param, "%s: file_id is not simulated; send image_url", at)
	case p.ImageURL == "":
		return badRequest(param, "%s: image_url is required", at)
	}
	return m.image(cfg, at, p.ImageURL)
}

// responseObject is a response as the API returns it, whole or in a
// stream's first and last events.
type responseObject struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"`
	CreatedAt         int64            `json:"created_at"`
	Status            string           `json:"status"`
	Model             string           `json:"model"`
	Output            []responseItem   `json:"output"`
	IncompleteDetails *incompleteCause `json:"incomplete_details"`
	Usage             *responsesUsage  `json:"usage"`
}

type incompleteCause struct {
	Reason string `json:"reason"`
}

// responseItem is an output item: a message or a function call.
type responseItem struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Status    string         `json:"status"`
	Role      string         `json:"role,omitempty"`
	Content   *[]contentPart `json:"content,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments *string        `json:"arguments,omitempty"`
}

type contentPart struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// response is c's response object with status, and the output and usage
// once generation is done (text is then its whole text).
func (s *Server) response(c *completion, id, status string, done bool, text string) responseObject {
	r := responseObject{ID: id, Object: "response", CreatedAt: time.Now().Unix(), Status: status, Model: s.cfg.Model,
		Output: []responseItem{}}
	if !done {
		return r
	}
	r.Output = []responseItem{c.outputItem(id, "completed", text)}
	if c.finish == openai.FinishReasonLength {
		r.Status, r.IncompleteDetails = "incomplete", &incompleteCause{Reason: "max_output_tokens"}
	}
	u := responsesUsage{InputTokens: c.promptTokens, OutputTokens: c.usageTokens(), TotalTokens: c.promptTokens + c.usageTokens()}
	u.InputTokensDetails.CachedTokens = c.cachedTokens
	r.Usage = &u
	return r
}

// outputItem is the answer's output item: the message holding text, or
// the function call whose arguments it is.
func (c *completion) outputItem(id, status, text string) responseItem {
	if p := c.tool; p != nil {
		args := ""
		if status == "completed" {
			args = p.piece(text, true, true)
		}
		return responseItem{ID: "fc_" + id, Type: "function_call", Status: status, CallID: p.id, Name: p.name, Arguments: &args}
	}
	parts := []contentPart{}
	if status == "completed" {
		parts = append(parts, contentPart{Type: "output_text", Text: text, Annotations: []string{}})
	}
	return responseItem{ID: "msg_" + id, Type: "message", Status: status, Role: openai.ChatMessageRoleAssistant, Content: &parts}
}

// answerResponse generates c whole and answers with its response.
func (s *Server) answerResponse(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	text, err := s.generateWhole(ctx, w, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.response(c, id, "completed", true, text))
	return nil
}

// responsesStream writes the typed events of one streamed response, each
// numbered.
type responsesStream struct {
	es  *eventStream
	seq int
	buf []byte
}

// send writes the event typ whose other members are fields.
func (rs *responsesStream) send(typ string, fields map[string]any) error {
	fields["type"], fields["sequence_number"] = typ, rs.seq
	rs.seq++
	return rs.es.sendNamed(typ, fields)
}

// delta writes a delta event of typ for the item at output_index 0, built
// by hand: it is sent once per chunk.
func (rs *responsesStream) delta(typ, itemID, text string, content bool) error {
	q, _ := json.Marshal(text) // a string always encodes
	b := append(rs.buf[:0], "event: "...)
	b = append(append(append(b, typ...), "\ndata: {\"type\":\""...), typ...)
	b = strconv.AppendInt(append(b, `","sequence_number":`...), int64(rs.seq), 10)
	b = append(append(append(b, `,"item_id":"`...), itemID...), `","output_index":0`...)
	if content {
		b = append(b, `,"content_index":0`...)
	}
	b = append(append(append(b, `,"delta":`...), q...), "}\n\n"...)
	rs.seq++
	rs.buf = b
	return rs.es.write(b)
}

// streamResponse streams c as the Responses API does: response.created
// and response.in_progress at once, the output item's added events with
// the first chunk, a delta per chunk (output_text, or a function call's
// arguments), the done events, then response.completed, or
// response.incomplete when max_output_tokens cut the answer, carrying the
// usage. There is no [DONE]. A stream ended early stops without its end.
func (s *Server) streamResponse(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	rs := &responsesStream{es: newEventStream(w)}
	if err := rs.send("response.created", map[string]any{"response": s.response(c, id, "in_progress", false, "")}); err != nil {
		return err
	}
	if err := rs.send("response.in_progress", map[string]any{"response": s.response(c, id, "in_progress", false, "")}); err != nil {
		return err
	}
	item := c.outputItem(id, "in_progress", "")
	typ, content := "response.output_text.delta", true
	if c.tool != nil {
		typ, content = "response.function_call_arguments.delta", false
	}
	var text strings.Builder
	err := s.generate(ctx, c, func(chunk string) error {
		if c.firstChunk() {
			if err := rs.itemAdded(item); err != nil {
				return err
			}
		}
		text.WriteString(chunk)
		if c.tool != nil {
			chunk = c.tool.piece(chunk, c.firstChunk(), c.lastChunk())
		}
		return rs.delta(typ, item.ID, chunk, content)
	})
	if err != nil {
		return err
	}
	return rs.finish(s.response(c, id, "completed", true, text.String()))
}

// itemAdded announces the output item, and its text part for a message.
func (rs *responsesStream) itemAdded(item responseItem) error {
	if err := rs.send("response.output_item.added", map[string]any{"output_index": 0, "item": item}); err != nil {
		return err
	}
	if item.Type != "message" {
		return nil
	}
	return rs.send("response.content_part.added", map[string]any{"item_id": item.ID, "output_index": 0, "content_index": 0,
		"part": contentPart{Type: "output_text", Annotations: []string{}}})
}

// finish sends the done events of the output item and the response's
// last event.
func (rs *responsesStream) finish(r responseObject) error {
	item := r.Output[0]
	var err error
	if item.Type == "message" {
		part := (*item.Content)[0]
		err = rs.send("response.output_text.done", map[string]any{"item_id": item.ID, "output_index": 0, "content_index": 0, "text": part.Text})
		if err == nil {
			err = rs.send("response.content_part.done", map[string]any{"item_id": item.ID, "output_index": 0, "content_index": 0, "part": part})
		}
	} else {
		err = rs.send("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": 0, "arguments": *item.Arguments})
	}
	if err == nil {
		err = rs.send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	}
	if err != nil {
		return err
	}
	end := "response.completed"
	if r.Status == "incomplete" {
		end = "response.incomplete"
	}
	return rs.send(end, map[string]any{"response": r})
}
