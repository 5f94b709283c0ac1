package openai

import (
	"github.com/llmload/llmload/engine"
)

// tally is what an answer generated as the client saw it, the input of the
// token counts. Texts are choice 0's, like Result.Text.
type tally struct {
	textEvents      int // events that carried generated text of any kind
	reasoningEvents int // events that carried reasoning text
	content         string
	reasoning       string
	other           string // refusal and tool-call arguments
	usage           usage  // the last usage object seen
}

// absurdFactor and absurdSlack bound how far server usage may exceed the
// offline tokenizer's count before it is taken as nonsense. Tokenizers
// differ (a Qwen or Llama vocabulary against cl100k), but not tenfold.
const (
	absurdFactor = 10
	absurdSlack  = 16
)

// countTokens fills the token counts of r from the answer t and the request
// that produced it (DESIGN.md "output_tokens"): server usage when it is
// sane, else the offline tokenizer, else the number of text events. It runs
// after the stream ended, so the tokenizer's cost never shows in a timing.
// The parts are counted apart: they are separate token sequences.
func (c *Client) countTokens(r *engine.Result, t *tally, req *engine.ChatRequest) {
	reasoning, okR := c.tok.count(t.reasoning)
	answer, okA := c.tok.count(t.content)
	other, okO := c.tok.count(t.other)
	client := -1
	if okR && okA && okO {
		client = reasoning + answer + other
		r.ClientOutputTokens = client
	}
	if !okR {
		reasoning = -1
	}
	r.OutputTokens, r.TokensSource = outputTokens(t.usage.Completion, t.textEvents, client)
	r.ReasoningTokens = reasoningTokens(r, t, reasoning)
	r.InputTokens, r.InputTokensSource = c.inputTokens(t.usage.Prompt, req)
}

// outputTokens picks the output token count and its source. Every text
// event carries at least one token, so the number of events is a lower
// bound for any count: usage below it is nonsense, and a tokenizer count
// below it (a token split across events) is beaten by the events.
func outputTokens(u tokenCount, events, client int) (int, string) {
	if saneUsage(u, events, client) {
		return u.n, engine.TokensFromUsage
	}
	if client >= 0 && client >= events {
		return client, engine.TokensFromTokenizer
	}
	return events, engine.TokensFromEvents
}

// saneUsage reports whether a usage count is believable: known, not below
// the events seen, positive unless nothing was generated, and, when the
// tokenizer counted too (client ≥ 0), not absurdly above its count.
func saneUsage(u tokenCount, events, client int) bool {
	switch {
	case !u.ok || u.n < events:
		return false
	case u.n == 0 && events > 0:
		return false
	case client >= 0 && u.n > absurdFactor*client+absurdSlack:
		return false
	}
	return true
}

// reasoningTokens counts the reasoning part of the output: usage's
// reasoning_tokens when the completion count itself came from usage and
// contains it, else the tokenizer's count of the reasoning text (client,
// -1 when not counted), else the reasoning events.
func reasoningTokens(r *engine.Result, t *tally, client int) int {
	u := t.usage.Details.Reasoning
	if r.TokensSource == engine.TokensFromUsage && u.ok && u.n >= t.reasoningEvents && u.n <= r.OutputTokens {
		return u.n
	}
	if client >= t.reasoningEvents {
		return client
	}
	return t.reasoningEvents
}

// inputTokens is usage's prompt count when positive (a chat template adds
// tokens even to an empty prompt), else the tokenizer's count of what was
// sent.
func (c *Client) inputTokens(u tokenCount, req *engine.ChatRequest) (int, string) {
	if u.ok && u.n > 0 {
		return u.n, engine.TokensFromUsage
	}
	if n, ok := c.promptTokens(req); ok {
		return n, engine.TokensFromTokenizer
	}
	return 0, ""
}

// promptTokens counts the prompt offline: the messages' contents, without
// the chat template the server wraps them in, or the completions prompt.
func (c *Client) promptTokens(req *engine.ChatRequest) (int, bool) {
	if c.tok == nil {
		return 0, false
	}
	if endpointOf(req) == engine.EndpointCompletions {
		return c.tok.count(req.Prompt)
	}
	total := 0
	for _, m := range req.Messages {
		n, ok := c.tok.count(m.Content)
		if !ok {
			return 0, false
		}
		total += n
	}
	return total, true
}

// endpointOf returns the endpoint a request goes to.
func endpointOf(req *engine.ChatRequest) string {
	if req.Endpoint == "" {
		return engine.EndpointChat
	}
	return req.Endpoint
}
