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
// The parts are counted apart: they are separate token sequences. When the
// server sent a completion count the tokenizer runs only on a sample of
// requests (tokenCounter.sample), enough for the token check, since it
// costs as much CPU as the whole stream did.
func (c *Client) countTokens(r *engine.Result, t *tally, req *engine.ChatRequest) {
	client, reasoning := -1, -1
	if !t.usage.Completion.ok || c.tok.sample() {
		var okR, okA, okO bool
		var answer, other int
		reasoning, okR = c.tok.count(t.reasoning)
		answer, okA = c.tok.count(t.content)
		other, okO = c.tok.count(t.other)
		if okR && okA && okO {
			client = reasoning + answer + other
			r.ClientOutputTokens = client
		}
		if !okR {
			reasoning = -1
		}
	}
	r.OutputTokens, r.TokensSource = outputTokens(t.visibleUsage(), t.textEvents, client, t.bytes())
	if r.TokensSource == engine.TokensFromUsage {
		r.OutputTokens = t.usage.Completion.n
	}
	r.ReasoningTokens = reasoningTokens(r, t, reasoning)
	r.InputTokens, r.InputTokensSource = c.inputTokens(t.usage.Prompt, req)
	r.CachedTokens = cachedTokens(t.usage, r.Server)
}

// cachedTokens is the prompt tokens usage says came from the prefix
// cache, else llama.cpp's timings' cache_n; a count above usage's prompt
// count is nonsense, and none.
func cachedTokens(u usage, server *engine.ServerTimings) int {
	n := u.PromptDetails.Cached
	if !n.ok && server != nil && server.CachedN > 0 {
		n = tokenCount{server.CachedN, true}
	}
	if !n.ok || (u.Prompt.ok && n.n > u.Prompt.n) {
		return 0
	}
	return n.n
}

// bytes is the length of the generated text of every kind.
func (t *tally) bytes() int { return len(t.content) + len(t.reasoning) + len(t.other) }

// visibleUsage is usage's completion count less the reasoning tokens it
// says it holds when no reasoning text was streamed (OpenAI's reasoning
// models count hidden reasoning in completion_tokens): the tokens the
// streamed text can vouch for.
func (t *tally) visibleUsage() tokenCount {
	u := t.usage.Completion
	if d := t.usage.Details.Reasoning; u.ok && d.ok && t.reasoningEvents == 0 && d.n <= u.n {
		u.n -= d.n
	}
	return u
}

// outputTokens picks the output token count and its source. Every text
// event carries at least one token, so the number of events is a lower
// bound for any count: usage below it is nonsense, and a tokenizer count
// below it (a token split across events) is beaten by the events. client
// is the tokenizer's count, -1 when it did not count; textBytes the length
// of the text, which bounds usage when the tokenizer did not count.
func outputTokens(u tokenCount, events, client, textBytes int) (int, string) {
	if saneUsage(u, events, client, textBytes) {
		return u.n, engine.TokensFromUsage
	}
	if client >= 0 && client >= events {
		return client, engine.TokensFromTokenizer
	}
	return events, engine.TokensFromEvents
}

// saneUsage reports whether a usage count is believable: known, not below
// the events seen, positive unless nothing was generated, and not absurdly
// above what the text holds: the tokenizer's count when it counted (client
// ≥ 0; tokenizers differ, but not tenfold), else the text's bytes (a token
// is at least a byte of text, give or take a few special tokens), when
// they are known (textBytes ≥ 0).
func saneUsage(u tokenCount, events, client, textBytes int) bool {
	switch {
	case !u.ok || u.n < events:
		return false
	case u.n == 0 && events > 0:
		return false
	case client >= 0 && u.n > absurdFactor*client+absurdSlack:
		return false
	case client < 0 && textBytes >= 0 && u.n > textBytes+absurdSlack:
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
	for i := range req.Messages {
		n, ok := c.tok.count(partsText(&req.Messages[i]))
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
