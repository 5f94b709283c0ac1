package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/llmload/llmload/engine"
	openai "github.com/sashabaranov/go-openai"
)

// chatBody is the request body. It embeds go-openai's request type and
// shadows the fields whose go-openai encoding would change what a scenario
// asked for: Temperature and TopP are float32 with omitempty there, so an
// explicit 0 would vanish and 0.7 would become 0.699999988; Seed is an int;
// and go-openai drops an empty message content, which must be sent as ""
// (an empty prompt is a dirty-data case worth measuring). encoding/json
// lets the shallower field win, so the shadowing costs one Marshal.
type chatBody struct {
	openai.ChatCompletionRequest
	Messages    []engine.Message `json:"messages"`
	Temperature *float64         `json:"temperature,omitempty"`
	TopP        *float64         `json:"top_p,omitempty"`
	Seed        *int64           `json:"seed,omitempty"`
}

// bodyKeys are the top-level keys chatBody can emit. An Extra key outside
// this set is appended to the marshalled body; one inside it needs a merge.
var bodyKeys = map[string]bool{
	"model": true, "messages": true, "max_tokens": true, "stream": true,
	"stop": true, "stream_options": true, "temperature": true, "top_p": true,
	"seed": true,
}

// streamOptions asks for the final usage chunk; shared because it never changes.
var streamOptions = &openai.StreamOptions{IncludeUsage: true}

// buildBody encodes req as a streaming chat completion body.
func buildBody(req *engine.ChatRequest) ([]byte, error) {
	msgs := req.Messages
	if msgs == nil {
		msgs = []engine.Message{}
	}
	b := chatBody{
		ChatCompletionRequest: openai.ChatCompletionRequest{
			Model:         req.Model,
			MaxTokens:     req.MaxTokens,
			Stream:        true,
			Stop:          req.Stop,
			StreamOptions: streamOptions,
		},
		Messages:    msgs,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Seed:        req.Seed,
	}
	body, err := json.Marshal(&b)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	if len(req.Extra) == 0 {
		return body, nil
	}
	return mergeExtra(body, req.Extra)
}

// mergeExtra adds extra to the JSON object body, extra winning. The common
// case, only new keys, appends them in sorted order without re-parsing.
func mergeExtra(body []byte, extra map[string]any) ([]byte, error) {
	keys := slices.Sorted(maps.Keys(extra))
	for _, k := range keys {
		if bodyKeys[k] {
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
