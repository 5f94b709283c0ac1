package metrics

import "github.com/llmload/llmload/engine"

// prefixCounts accumulates a stage's prefix-cache figures (see
// StageSummary.CachedTokens) over its successful clean requests whose
// input tokens the server counted: the hit share needs a denominator the
// same server vouched for, not the client tokenizer's estimate.
type prefixCounts struct {
	usageIn, cached, hits int64
	target                targetCounts
}

// targetCounts accumulate the requests whose prompts were built for a
// target hit rate (engine.PrefixAsked): what they asked, and what the
// server served of the same requests (see PrefixTarget).
type targetCounts struct {
	requests, shared, tokens, usageIn, cached int64
}

// add counts a successful request.
func (p *prefixCounts) add(e *event) {
	usage := e.inSource == engine.TokensFromUsage
	if a := e.asked; a.Tokens > 0 {
		p.target.add(a, usage, e)
	}
	if !usage {
		return
	}
	p.usageIn += int64(e.inTok)
	p.cached += int64(e.cached)
	if e.cached > 0 {
		p.hits++
	}
}

// add counts a request that asked a; what the server served only when
// usage says it counted the request's input tokens.
func (t *targetCounts) add(a engine.PrefixAsked, usage bool, e *event) {
	t.requests++
	t.shared += int64(a.Shared)
	t.tokens += int64(a.Tokens)
	if usage {
		t.usageIn += int64(e.inTok)
		t.cached += int64(e.cached)
	}
}

// absorb adds a stage summary's prefix-cache counts, for Merge.
func (p *prefixCounts) absorb(s *StageSummary) {
	p.usageIn += s.UsageInputTokens
	p.cached += s.CachedTokens
	p.hits += s.CachedRequests
	if t := s.PrefixTarget; t != nil {
		p.target.requests += t.Requests
		p.target.shared += t.SharedTokens
		p.target.tokens += t.PromptTokens
		p.target.usageIn += t.UsageInputTokens
		p.target.cached += t.CachedTokens
	}
}

// summary is the stage's PrefixTarget; nil when no request asked a share.
// Its ServedShare waits for prefixHitShares, which knows the whole run.
func (t *targetCounts) summary() *PrefixTarget {
	if t.requests == 0 || t.tokens == 0 {
		return nil
	}
	return &PrefixTarget{
		Requests: t.requests, PromptTokens: t.tokens, SharedTokens: t.shared,
		AskedShare:       float64(t.shared) / float64(t.tokens),
		UsageInputTokens: t.usageIn, CachedTokens: t.cached,
	}
}

// prefixHitShares sets each stage's PrefixHitShare once the run's stages
// are known: only a run in which some request reported cached tokens
// shows a share, since a server that never reports them is
// indistinguishable from one that never hits. Stages without a
// server-counted input token have no share either: it would be 0/0.
func prefixHitShares(stages []StageSummary) {
	reported := false
	for i := range stages {
		reported = reported || stages[i].CachedRequests > 0
	}
	for i := range stages {
		st := &stages[i]
		st.PrefixHitShare = nil
		if reported && st.UsageInputTokens > 0 {
			share := float64(st.CachedTokens) / float64(st.UsageInputTokens)
			st.PrefixHitShare = &share
		}
		if t := st.PrefixTarget; t != nil {
			t.ServedShare = nil
			if reported && t.UsageInputTokens > 0 {
				share := float64(t.CachedTokens) / float64(t.UsageInputTokens)
				t.ServedShare = &share
			}
		}
	}
}

// RunPrefixHitShare is the prefix-cache hit share of stages together
// (their CachedTokens over their UsageInputTokens), under the rule of
// StageSummary.PrefixHitShare: nil unless some request reported cached
// tokens.
func RunPrefixHitShare(stages []StageSummary) *float64 {
	var p prefixCounts
	for i := range stages {
		p.absorb(&stages[i])
	}
	if p.hits == 0 || p.usageIn == 0 {
		return nil
	}
	share := float64(p.cached) / float64(p.usageIn)
	return &share
}
