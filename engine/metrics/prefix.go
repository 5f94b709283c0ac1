package metrics

import "github.com/llmload/llmload/engine"

// prefixCounts accumulates a stage's prefix-cache figures (see
// StageSummary.CachedTokens) over its successful clean requests whose
// input tokens the server counted: the hit share needs a denominator the
// same server vouched for, not the client tokenizer's estimate.
type prefixCounts struct {
	usageIn, cached, hits int64
}

// add counts a successful request.
func (p *prefixCounts) add(e *event) {
	if e.inSource != engine.TokensFromUsage {
		return
	}
	p.usageIn += int64(e.inTok)
	p.cached += int64(e.cached)
	if e.cached > 0 {
		p.hits++
	}
}

// absorb adds a stage summary's prefix-cache counts, for Merge.
func (p *prefixCounts) absorb(s *StageSummary) {
	p.usageIn += s.UsageInputTokens
	p.cached += s.CachedTokens
	p.hits += s.CachedRequests
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
