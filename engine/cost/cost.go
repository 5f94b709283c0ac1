// Package cost estimates what a run spends on a priced endpoint
// (options.cost) and caps it: the tokens a request was billed for and
// their price (Usage, Price), an upper bound on what a request can cost
// before it is sent (InputBound, OutputBound), a running total that
// reserves that bound while the request is in flight (Meter), the
// engine.Client that stops sending before the budget would be passed
// (Gate), and the worst case a whole plan could spend (WorstCase).
package cost

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// perMTok is the number of tokens a price is for.
const perMTok = 1e6

// Sources of a count beyond engine's TokensFrom* constants.
const (
	// FromBound is an input count that no one counted: the request's
	// send-time upper bound (InputBound) stands in for it, so the
	// estimate errs high, never low.
	FromBound = "bound"
)

// Usage is the tokens one request is billed for, and where their counts
// came from. The zero Usage bills nothing.
type Usage struct {
	Input  int // prompt tokens, Cached included
	Cached int // prompt tokens served from the prefix cache, ≤ Input
	Output int // generated tokens, reasoning included
	// InputFrom and OutputFrom are engine.TokensFromUsage,
	// TokensFromTokenizer, TokensFromEvents or FromBound; "" when nothing
	// was billed.
	InputFrom, OutputFrom string
	// Billed is false for a request the server refused or never got (an
	// HTTP error without usage, a connection that failed, a request never
	// sent): the usual APIs charge nothing for those.
	Billed bool
}

// FromUsage reports whether every count of u is the server's own.
func (u Usage) FromUsage() bool {
	return u.InputFrom == engine.TokensFromUsage &&
		(u.OutputFrom == engine.TokensFromUsage || u.Output == 0 && u.OutputFrom == "")
}

// Price is what u costs at c's prices: the cached prompt tokens at the
// cached price, the rest of the prompt at the input price, the output at
// the output price.
func Price(c plan.Cost, u Usage) float64 {
	if !u.Billed {
		return 0
	}
	cached := min(max(u.Cached, 0), u.Input)
	return (float64(u.Input-cached)*c.InputPerMTok + float64(cached)*c.CachedInputPerMTok +
		float64(u.Output)*c.OutputPerMTok) / perMTok
}

// Worst is the most input prompt tokens and output tokens can cost: no
// prompt token cached, unless the cache is the dearer price.
func Worst(c plan.Cost, input, output int) float64 {
	return (float64(input)*max(c.InputPerMTok, c.CachedInputPerMTok) + float64(output)*c.OutputPerMTok) / perMTok
}

// Counter counts a prompt's tokens when no one did (a request that failed
// before its answer was counted); nil leaves the send-time bound.
type Counter func(req *engine.ChatRequest) (int, bool)

// UsageOf is what r, the result of req, is billed for: the server's usage
// where it sent one, else llmload's own counts (the client's tokenizer,
// or its text events), else count's count of the prompt, else req's
// InputBound. A request that never reached a model, and an HTTP error
// without usage, bill nothing.
func UsageOf(r *engine.Result, req *engine.ChatRequest, count Counter) Usage {
	if !billed(r) {
		return Usage{}
	}
	u := Usage{Billed: true, Input: r.InputTokens, InputFrom: r.InputTokensSource,
		Output: r.OutputTokens, OutputFrom: r.TokensSource, Cached: r.CachedTokens}
	if u.InputFrom == "" {
		u.Input, u.InputFrom = InputBound(req), FromBound
		if n, ok := countPrompt(count, req); ok {
			u.Input, u.InputFrom = n, engine.TokensFromTokenizer
		}
	}
	if u.OutputFrom == "" && u.Output > 0 {
		u.OutputFrom = engine.TokensFromEvents
	}
	u.Cached = min(max(u.Cached, 0), u.Input)
	return u
}

func countPrompt(count Counter, req *engine.ChatRequest) (int, bool) {
	if count == nil || req.Raw != nil {
		return 0, false // a raw body's prompt is not the request's fields
	}
	return count(req)
}

// billed reports whether r reached a model that may charge for it: it
// was sent, and neither failed before any server took it (connection
// refused, reset, timed out or never made; a request that could not be
// encoded) nor was refused with an HTTP error and no usage.
func billed(r *engine.Result) bool {
	switch {
	case r == nil || r.NotSent:
		return false
	case r.InputTokensSource == engine.TokensFromUsage:
		return true // the server said what it counted, error or not
	case r.Status >= 300:
		return false
	case r.Status == 0 && r.Err != nil:
		switch r.Err.Class {
		case engine.ErrConnRefused, engine.ErrConnReset, engine.ErrTimeoutConnect, engine.ErrNetwork, engine.ErrInvalidRequest:
			return false
		}
	}
	return true
}
