package cost

import (
	"encoding/json"

	"github.com/llmload/llmload/engine"
)

// Slack a chat template may add beyond the text's own tokens: its special
// tokens around each message (ChatML's are 4, Llama 3's 5) and once per
// request (the assistant's turn), and the instructions a template wraps
// around tool definitions.
const (
	MessageSlack = 16
	RequestSlack = 16
	ToolsSlack   = 512
)

// InputBound is an upper bound on the prompt tokens req can be billed
// for, whatever the server's tokenizer: every token of a byte-level BPE
// or a SentencePiece vocabulary holds at least one byte of text, so a
// prompt has at most as many tokens as its text has bytes, plus the chat
// template's special tokens (MessageSlack, RequestSlack, ToolsSlack). It
// costs no tokenizer: a few nanoseconds per message, so it can run on
// the send path. A raw (dirty) body is bounded by its length.
func InputBound(req *engine.ChatRequest) int {
	if req.Raw != nil {
		return len(req.Raw) + RequestSlack
	}
	n := RequestSlack + len(req.Prompt) + len(req.System)
	for i := range req.Messages {
		m := &req.Messages[i]
		n += MessageSlack + len(m.Role) + len(m.Content) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments) + MessageSlack
		}
	}
	for _, in := range req.Inputs {
		n += len(in) + MessageSlack
	}
	if len(req.Tools) > 0 {
		n += jsonLen(req.Tools) + ToolsSlack
	}
	if len(req.Extra) > 0 {
		// Extra may carry text the server reads as prompt (a
		// chat_template_kwargs, even messages): its bytes bound that too.
		n += jsonLen(req.Extra)
	}
	return n
}

// jsonLen is the length of v's JSON; a value that does not encode cannot
// be sent either, and bounds nothing.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// limitKeys are the body fields that bound an answer's length, in the
// APIs llmload speaks and the servers' extensions; Extra may set them.
var limitKeys = []string{"max_tokens", "max_completion_tokens", "max_output_tokens", "max_new_tokens"}

// OutputBound is the most output tokens req can be billed for, and false
// when nothing bounds it: no max_tokens, in the request or in its Extra
// fields. Extra's max_tokens replaces MaxTokens, as it does in the body;
// where several limits are sent the largest bounds (servers differ in
// which they obey), and Extra's n (choices per request) multiplies it.
// An embeddings request generates nothing.
func OutputBound(req *engine.ChatRequest) (int, bool) {
	if req.Endpoint == engine.EndpointEmbeddings {
		return 0, true
	}
	limit := req.MaxTokens
	for i, k := range limitKeys {
		v, ok := req.Extra[k]
		if !ok {
			continue
		}
		n, isNum := number(v)
		if !isNum || n <= 0 {
			return 0, false // null or nonsense: the server's default applies
		}
		if i == 0 {
			limit = n // the body's max_tokens is Extra's
		}
		limit = max(limit, n)
	}
	if limit <= 0 {
		return 0, false
	}
	if v, ok := req.Extra["n"]; ok {
		if n, isNum := number(v); isNum && n > 1 {
			limit *= n
		}
	}
	return limit, true
}

// number reads a JSON-ish number of Extra: Lua numbers arrive as float64.
func number(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), x == float64(int(x))
	case int:
		return x, true
	case int64:
		return int(x), true
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	}
	return 0, false
}
