package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/llmload/llmload/engine"
)

// requestBody is the body of both endpoints: chat sends messages,
// completions a prompt. Its fields follow go-openai's ChatCompletionRequest
// and CompletionRequest (TestBodyDecodesAsOpenAIRequest checks it) but are
// typed to send exactly what the scenario asked for: go-openai has
// Temperature and TopP as float32 with omitempty, so an explicit 0 would
// vanish and 0.7 would become 0.699999988; its Seed is an int; it drops an
// empty message content, which must be sent as "" (an empty prompt is a
// dirty-data case worth measuring); and it omits stream=false.
type requestBody struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Stream        bool           `json:"stream"`
	Stop          []string       `json:"stop,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Messages      any            `json:"messages,omitempty"` // *[]engine.Message, or []chatMessage with parts
	Prompt        *string        `json:"prompt,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	Seed          *int64         `json:"seed,omitempty"`
	IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
	MinTokens     int            `json:"min_tokens,omitempty"`
}

// streamOptions asks for usage: in a final chunk (OpenAI's include_usage)
// and, with continuous usage, cumulatively in every chunk (vLLM's
// continuous_usage_stats; other servers ignore the unknown member).
type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"`
}

// bodyKeys are the top-level keys a body can have (requestBody's, and the
// tools appendTools adds). An Extra key outside this set is appended to
// the marshalled body; one inside it needs a merge.
var bodyKeys = map[string]bool{
	"model": true, "messages": true, "prompt": true, "max_tokens": true, "stream": true,
	"stop": true, "stream_options": true, "temperature": true, "top_p": true,
	"seed": true, "ignore_eos": true, "min_tokens": true, "tools": true, "tool_choice": true,
}

// The stream options never change, so they are shared.
var (
	finalUsage      = &streamOptions{IncludeUsage: true}
	continuousUsage = &streamOptions{IncludeUsage: true, ContinuousUsageStats: true}
)

// buildBody encodes req for its endpoint, streaming unless req.NoStream;
// continuous asks for usage in every chunk. A Raw body is returned as it is,
// unchecked: it exists to send what no valid request can.
func buildBody(req *engine.ChatRequest, continuous bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	b := requestBody{
		Model:       req.Model,
		MaxTokens:   req.MaxTokens,
		Stream:      !req.NoStream,
		Stop:        req.Stop,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Seed:        req.Seed,
		IgnoreEOS:   req.IgnoreEOS,
		MinTokens:   req.MinTokens,
	}
	switch {
	case req.NoStream:
	case continuous:
		b.StreamOptions = continuousUsage
	default:
		b.StreamOptions = finalUsage
	}
	if err := b.setInput(req); err != nil {
		return nil, err
	}
	body, err := json.Marshal(&b)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	if len(req.Tools) > 0 || req.ToolChoice != nil {
		if body, err = appendTools(body, req); err != nil {
			return nil, err
		}
	}
	if len(req.Extra) == 0 {
		return body, nil
	}
	return mergeExtra(body, req)
}

// appendTools adds tools and tool_choice to the JSON object body. They
// are appended rather than fields of requestBody, whose every field each
// request's encoding pays for, tools or not.
func appendTools(body []byte, req *engine.ChatRequest) ([]byte, error) {
	body = body[:len(body)-1] // drop the closing brace
	for _, f := range []struct {
		key string
		v   any
		set bool
	}{{`,"tools":`, req.Tools, len(req.Tools) > 0}, {`,"tool_choice":`, req.ToolChoice, req.ToolChoice != nil}} {
		if !f.set {
			continue
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", f.key[2:len(f.key)-2], err)
		}
		body = append(append(body, f.key...), v...)
	}
	return append(body, '}'), nil
}

// emits reports whether the body built from req has the key k. The vLLM
// extensions are in it only when set, so an Extra that names them (as
// scenarios did before the fields existed) still takes the fast path.
func emits(req *engine.ChatRequest, k string) bool {
	switch k {
	case "ignore_eos":
		return req.IgnoreEOS
	case "min_tokens":
		return req.MinTokens != 0
	case "tools":
		return len(req.Tools) > 0
	case "tool_choice":
		return req.ToolChoice != nil
	}
	return bodyKeys[k]
}

// setInput sets what the endpoint generates from: messages for chat (an
// empty list, never null), the prompt for completions.
func (b *requestBody) setInput(req *engine.ChatRequest) error {
	switch endpointOf(req) {
	case engine.EndpointChat:
		if hasParts(req.Messages) {
			msgs, err := chatMessages(req.Messages)
			if err != nil {
				return err
			}
			b.Messages = msgs
			break
		}
		msgs := req.Messages
		if msgs == nil {
			msgs = []engine.Message{}
		}
		b.Messages = &msgs
	case engine.EndpointCompletions:
		if engine.HasMedia(req.Messages) {
			return fmt.Errorf("completions are text-only: send images, audio and video to chat, messages or responses")
		}
		b.Prompt = &req.Prompt
	default:
		return fmt.Errorf("unknown endpoint %q (want %q or %q)", req.Endpoint, engine.EndpointChat, engine.EndpointCompletions)
	}
	return nil
}

// mergeExtra adds req.Extra to the JSON object body, Extra winning. The
// common case, only new keys, appends them in sorted order without
// re-parsing.
func mergeExtra(body []byte, req *engine.ChatRequest) ([]byte, error) {
	extra := req.Extra
	keys := slices.Sorted(maps.Keys(extra))
	for _, k := range keys {
		if emits(req, k) {
			return overlay(body, extra)
		}
	}
	body = body[:len(body)-1] // drop the closing brace
	for _, k := range keys {
		v, err := json.Marshal(extra[k])
		if err != nil {
			return nil, fmt.Errorf("encoding extra field %q: %w", k, err)
		}
		kb, _ := json.Marshal(k) // a string always encodes
		body = append(body, ',')
		body = append(body, kb...)
		body = append(body, ':')
		body = append(body, v...)
	}
	return append(body, '}'), nil
}

// withExtra adds extra to the JSON object body, extra winning, for the
// dialects whose bodies are not on the hot path: always through overlay.
func withExtra(body []byte, extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	return overlay(body, extra)
}

// unsupported refuses the fields of req that an API other than chat and
// completions does not have, so that no field a scenario set is dropped
// unsent; api names the API.
func unsupported(req *engine.ChatRequest, api string, stop bool) error {
	field := ""
	switch {
	case req.Seed != nil:
		field = "seed"
	case len(req.Stop) > 0 && !stop:
		field = "stop"
	case req.IgnoreEOS:
		field = "ignore_eos"
	case req.MinTokens != 0:
		field = "min_tokens"
	}
	if field == "" {
		return nil
	}
	return fmt.Errorf("%s is not part of the %s; send it in extra if the server takes it", field, api)
}

// overlay merges extra into body through a map, for extras that replace
// fields the body already has. Keys come out sorted.
func overlay(body []byte, extra map[string]any) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	for k, v := range extra {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding extra field %q: %w", k, err)
		}
		m[k] = raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return out, nil
}
