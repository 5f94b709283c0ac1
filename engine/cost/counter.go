package cost

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/tokenize"
)

// TokenizerCounter counts a request's prompt with codec as the client
// does when the server sends no usage: the texts' own tokens, without a
// chat template's; nil codec counts nothing.
func TokenizerCounter(codec tokenize.Codec) Counter {
	if codec == nil {
		return nil
	}
	return func(req *engine.ChatRequest) (n int, ok bool) {
		// The codec is third-party code fed whatever a scenario built: a
		// failure in it costs a count, not the run.
		defer func() {
			if recover() != nil {
				n, ok = 0, false
			}
		}()
		return PromptTokens(codec, req), true
	}
}

// PromptTokens is codec's count of the texts req sends: its prompt,
// system prompt, messages (tool calls' arguments included) and inputs.
func PromptTokens(codec tokenize.Codec, req *engine.ChatRequest) int {
	count := func(s string) int {
		if s == "" {
			return 0
		}
		return codec.Count(s)
	}
	n := count(req.Prompt) + count(req.System)
	for i := range req.Messages {
		m := &req.Messages[i]
		n += count(m.Content)
		for _, c := range m.ToolCalls {
			n += count(c.Arguments)
		}
	}
	for _, in := range req.Inputs {
		n += count(in)
	}
	return n
}
