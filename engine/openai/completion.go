package openai

import (
	"encoding/json"
)

// completion is a complete (non-streamed) answer of either endpoint, or an
// error object sent with a 2xx. Usage is decoded leniently (see usage).
type completion struct {
	Object  errorKind          `json:"object"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
	Error   json.RawMessage    `json:"error"`
	Message json.RawMessage    `json:"message"`
	Timings *timings           `json:"timings"`
}

// completionWithoutUsage decodes a completion but skips its usage member.
type completionWithoutUsage struct {
	*completion
	Usage skipped `json:"usage"`
}

// completionChoice is a chat choice (message) or a completions one (text).
type completionChoice struct {
	Index        int        `json:"index"`
	Message      chunkDelta `json:"message"`
	Text         string     `json:"text"`
	FinishReason string     `json:"finish_reason"`
}
