package openai

import (
	"encoding/json"
	"net/http"
	"strings"

	gojson "github.com/goccy/go-json"

	"github.com/llmload/llmload/engine"
)

// responsesDialect speaks OpenAI's Responses API (POST /responses). A
// stream is typed events, each {"type":...}: text in
// response.output_text.delta, reasoning in response.reasoning_text.delta
// and response.reasoning_summary_text.delta, tool calls in
// response.output_item.added (the name) and
// response.function_call_arguments.delta; it ends with response.completed
// or response.incomplete, which carry usage, and there is no [DONE].
// response.failed and error events are api_errors.
type responsesDialect struct{}

func (responsesDialect) url(c *Client) string { return c.responsesURL }

func (responsesDialect) auth(c *Client, h http.Header) { bearer(c, h) }

func (responsesDialect) endName() string { return "response.completed" }

// responsesBody is a Responses request. Input is the string of Prompt or
// the items of Messages.
type responsesBody struct {
	Model           string   `json:"model"`
	Input           any      `json:"input"`
	Instructions    string   `json:"instructions,omitempty"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Stream          bool     `json:"stream"`
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"top_p,omitempty"`
	Tools           []any    `json:"tools,omitempty"`
	ToolChoice      any      `json:"tool_choice,omitempty"`
}

// responsesItem is one input item: a message ({"role","content"}), a
// function call an assistant made, or a tool's output for one.
type responsesItem struct {
	Type      string  `json:"type,omitempty"`
	Role      string  `json:"role,omitempty"`
	Content   any     `json:"content,omitempty"` // a message's *string, sent also when empty, or its parts
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"` // a tool's, sent also when empty
}

func (responsesDialect) body(req *engine.ChatRequest, _ bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	if err := unsupported(req, "Responses API", false); err != nil {
		return nil, err
	}
	b := responsesBody{Model: req.Model, Instructions: req.System, MaxOutputTokens: req.MaxTokens,
		Stream: !req.NoStream, Temperature: req.Temperature, TopP: req.TopP, Tools: req.Tools, ToolChoice: req.ToolChoice}
	if req.Messages == nil {
		b.Input = req.Prompt
	} else {
		items, err := responsesInput(req.Messages)
		if err != nil {
			return nil, err
		}
		b.Input = items
	}
	return encode(&b, req.Extra)
}

// responsesInput turns chat messages into input items: an assistant's
// tool calls become function_call items after its text, a tool message a
// function_call_output, parts input_text, input_image and input_audio
// items of the message's content.
func responsesInput(msgs []engine.Message) ([]responsesItem, error) {
	items := make([]responsesItem, 0, len(msgs))
	n := 0
	for i := range msgs {
		m := &msgs[i]
		switch {
		case len(m.Parts) > 0:
			parts := make([]responsesPart, len(m.Parts))
			for j := range m.Parts {
				p := &m.Parts[j]
				switch {
				case p.Type == engine.PartText:
					parts[j] = responsesPart{Type: "input_text", Text: &p.Text}
				case p.Type == engine.PartImage:
					parts[j] = responsesPart{Type: "input_image", ImageURL: mediaRef(p, &n, true), Detail: p.Detail}
				case p.Type == engine.PartAudio && p.Media != nil:
					parts[j] = responsesPart{Type: "input_audio", InputAudio: &audioRef{Data: mediaRef(p, &n, false), Format: p.Media.Format}}
				default:
					return nil, partsError("Responses API", i, j, p)
				}
			}
			items = append(items, responsesItem{Role: m.Role, Content: parts})
			continue
		case m.Role == "tool":
			items = append(items, responsesItem{Type: "function_call_output", CallID: m.ToolCallID, Output: &m.Content})
			continue
		case len(m.ToolCalls) == 0 || m.Content != "":
			items = append(items, responsesItem{Role: m.Role, Content: &m.Content})
		}
		for _, tc := range m.ToolCalls {
			items = append(items, responsesItem{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
	}
	return items, nil
}

// responsesPart is one part of a Responses message's content.
type responsesPart struct {
	Type       string    `json:"type"`
	Text       *string   `json:"text,omitempty"`
	ImageURL   string    `json:"image_url,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	InputAudio *audioRef `json:"input_audio,omitempty"`
}

// prompt is the instructions and the input as chat messages.
func (responsesDialect) prompt(req *engine.ChatRequest) *engine.ChatRequest {
	return promptView(req.System, req.Messages, req.Prompt)
}

// promptView is a chat request holding system, then msgs, or prompt as a
// user message when msgs is nil: what the tokenizer counts as the input.
func promptView(system string, msgs []engine.Message, prompt string) *engine.ChatRequest {
	view := make([]engine.Message, 0, len(msgs)+2)
	if system != "" {
		view = append(view, engine.Message{Role: "system", Content: system})
	}
	if msgs == nil {
		return &engine.ChatRequest{Messages: append(view, engine.Message{Role: "user", Content: prompt})}
	}
	for _, m := range msgs {
		view = append(view, engine.Message{Role: m.Role, Content: partsText(&m) + toolText(m.ToolCalls)})
	}
	return &engine.ChatRequest{Messages: view}
}

// toolText is the names and arguments of tool calls, which a prompt
// carries as text.
func toolText(calls []engine.ToolCall) string {
	if len(calls) == 0 {
		return ""
	}
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.Name)
		b.WriteString(c.Arguments)
	}
	return b.String()
}

// responsesType is an event's type, decoded without allocating.
type responsesType uint8

const (
	rtOther responsesType = iota
	rtText
	rtRefusal
	rtReasoning
	rtArguments
	rtItemAdded
	rtCompleted
	rtIncomplete
	rtFailed
	rtError
)

func (t *responsesType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"response.output_text.delta"`:
		*t = rtText
	case `"response.refusal.delta"`:
		*t = rtRefusal
	case `"response.reasoning_text.delta"`, `"response.reasoning_summary_text.delta"`:
		*t = rtReasoning
	case `"response.function_call_arguments.delta"`:
		*t = rtArguments
	case `"response.output_item.added"`:
		*t = rtItemAdded
	case `"response.completed"`:
		*t = rtCompleted
	case `"response.incomplete"`:
		*t = rtIncomplete
	case `"response.failed"`:
		*t = rtFailed
	case `"error"`:
		*t = rtError
	default:
		*t = rtOther
	}
	return nil
}

// textDelta is a delta that is a string; other shapes (the object of the
// older response.reasoning_summary.delta) carry no text we time.
type textDelta string

func (d *textDelta) UnmarshalJSON(b []byte) error {
	*d = ""
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := gojson.Unmarshal(b, &s); err != nil {
			return err
		}
		*d = textDelta(s)
	}
	return nil
}

// responsesEvent is the members of a streamed event that carry text, a
// tool call, the end, usage or an error.
type responsesEvent struct {
	Type        responsesType   `json:"type"`
	Delta       textDelta       `json:"delta"`
	OutputIndex int             `json:"output_index"`
	Item        responsesOutput `json:"item"`
	Response    *responseObject `json:"response"`
	Code        json.RawMessage `json:"code"`
	Message     json.RawMessage `json:"message"`
	Error       json.RawMessage `json:"error"`
	// Timings is llama.cpp's own timing of the request, which its
	// response.completed carries beside the response, not in it.
	Timings *timings `json:"timings"`
}

// responseObject is a response: whole when not streamed, or as the end
// of a stream carries it (its output then repeats the deltas and is not
// read again).
type responseObject struct {
	Status            string            `json:"status"`
	Output            []responsesOutput `json:"output"`
	Usage             json.RawMessage   `json:"usage"`
	Error             json.RawMessage   `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// responsesOutput is an output item: a message's content parts, a
// reasoning item's summary and text, or a function call.
type responsesOutput struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// responsesUsage is the Responses API's usage object.
type responsesUsage struct {
	Input        tokenCount    `json:"input_tokens"`
	InputDetails promptDetails `json:"input_tokens_details"`
	Output       tokenCount    `json:"output_tokens"`
	Details      struct {
		Reasoning tokenCount `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// usage reads a usage member leniently, as chat's: a member of the wrong
// shape is unknown usage, not a broken answer.
func responsesUsageOf(raw json.RawMessage) usage {
	var u responsesUsage
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return usage{}
	}
	out := usage{Prompt: u.Input, Completion: u.Output, PromptDetails: u.InputDetails}
	out.Details.Reasoning = u.Details.Reasoning
	return out
}

// event applies one typed event.
func (responsesDialect) event(s *stream, ev event) (delta, *engine.Error) {
	if isDone(ev.Data) {
		if s.events == 0 {
			return noText, &engine.Error{Class: engine.ErrStreamMalformed, Message: "stream ended with [DONE] before any event"}
		}
		return noText, &engine.Error{Class: engine.ErrStreamTruncated, Message: "stream ended with [DONE] before response.completed"}
	}
	e := s.rev
	if ok, err := decodeTyped(s, ev, e); !ok {
		return noText, err
	}
	switch e.Type {
	case rtText:
		return s.answerText(string(e.Delta)), nil
	case rtRefusal:
		return s.otherText(string(e.Delta)), nil
	case rtReasoning:
		return s.reasoningText(string(e.Delta)), nil
	case rtArguments:
		return s.toolArgs(e.OutputIndex, string(e.Delta)), nil
	case rtItemAdded:
		if e.Item.Type == "function_call" {
			s.tools.at(e.OutputIndex).named(e.Item.CallID, e.Item.Name)
		}
	case rtCompleted, rtIncomplete:
		if e.Timings != nil {
			s.res.Server = e.Timings.result()
		}
		responsesEnd(s, e.Response, ev)
	case rtFailed:
		return noText, &engine.Error{Class: engine.ErrAPI, Message: responsesFailure(e.Response)}
	case rtError:
		return noText, &engine.Error{Class: engine.ErrAPI, Message: responsesError(e)}
	default:
		if msg, ok := errorObject(e.Error, nil, false); ok && e.Type == rtOther {
			return noText, &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
		}
	}
	return noText, nil
}

// responsesEnd ends a stream with its last event's response: its usage
// and its finish.
func responsesEnd(s *stream, r *responseObject, ev event) {
	if r != nil {
		if u := responsesUsageOf(r.Usage); u.known() {
			s.tally.usage = u
		}
		s.res.FinishReason = responsesFinish(r, len(s.tools.calls) > 0)
	}
	s.finished = true
	s.end(ev.At)
}

// responsesFinish names how a response ended in chat's words: "stop" (or
// "tool_calls" when it called tools) for a completed one, "length" for one
// cut at max_output_tokens, else the incomplete reason or the status.
func responsesFinish(r *responseObject, calls bool) string {
	switch {
	case r.Status == "completed" && calls:
		return "tool_calls"
	case r.Status == "completed" || r.Status == "":
		return "stop"
	case r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		return "length"
	case r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "":
		return r.IncompleteDetails.Reason
	}
	return r.Status
}

// responsesFailure is the message of a failed response.
func responsesFailure(r *responseObject) string {
	if r != nil {
		if msg, ok := errorObject(r.Error, nil, false); ok {
			return "response failed: " + truncate(msg, maxMessageLen)
		}
	}
	return "response failed without an error message"
}

// responsesError is the message of an error event: its code and message,
// or the error object some servers nest.
func responsesError(e *responsesEvent) string {
	msg := rawText(e.Message)
	if m, ok := errorObject(e.Error, nil, false); ok && msg == "" {
		msg = m
	}
	if code := rawText(e.Code); code != "" && !strings.Contains(msg, code) {
		msg = code + ": " + msg
	}
	return truncate(firstText(msg, "error event without message"), maxMessageLen)
}

// cutEnd reports an event of the types that end a stream.
func (responsesDialect) cutEnd(data []byte) bool {
	var e struct {
		Type responsesType `json:"type"`
	}
	return json.Unmarshal(data, &e) == nil && (e.Type == rtCompleted || e.Type == rtIncomplete)
}

// complete reads a whole response: its output items' text, reasoning and
// function calls, usage and status.
func (d responsesDialect) complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error {
	var r responseObject
	if err := json.Unmarshal(data, &r); err != nil {
		return undecodable("response", err, data)
	}
	if r.Status == "failed" {
		return &engine.Error{Class: engine.ErrAPI, Message: responsesFailure(&r)}
	}
	if msg, ok := errorObject(r.Error, nil, false); ok {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	t := tally{usage: responsesUsageOf(r.Usage)}
	var w wholeAnswer
	for i, item := range r.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				w.text.WriteString(p.Text)
				w.other.WriteString(p.Refusal)
			}
		case "reasoning":
			for _, p := range item.Summary {
				w.reasoning.WriteString(p.Text)
			}
			for _, p := range item.Content {
				w.reasoning.WriteString(p.Text)
			}
		case "function_call":
			w.call(i, item.CallID, item.Name, item.Arguments)
		}
	}
	// Whether it called tools is asked as responsesEnd asks it of a stream.
	w.fill(c, res, &t, responsesFinish(&r, len(w.calls.calls) > 0), d.prompt(req))
	return nil
}
