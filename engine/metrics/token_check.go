package metrics

import (
	"math"

	"github.com/llmload/llmload/engine"
)

// TokenMismatch is the relative difference between the server's and the
// client's count of a request's output tokens beyond which TokenCheck
// counts the request as a mismatch.
const TokenMismatch = 0.05

// TokenCheck compares, over a stage's successful requests whose output
// tokens came from the server's usage and that the client's tokenizer also
// counted (engine.Result.ClientOutputTokens > 0), the two counts: a server
// under-reporting usage, or a tokenizer unlike the model's, shows here.
// The relative difference of one request is |usage − client| / usage (with
// usage 0 read as 1, so that a server reporting nothing stands out).
type TokenCheck struct {
	Compared int64 `json:"compared"`
	// Mismatched counts the requests whose relative difference exceeds
	// TokenMismatch (5%).
	Mismatched int64 `json:"mismatched"`
	// MeanRelDiff is the mean relative difference, 0.02 for 2%.
	MeanRelDiff float64 `json:"mean_rel_diff"`
}

// tokenCheck accumulates a TokenCheck. Owned by the aggregator.
type tokenCheck struct {
	compared, mismatched int64
	relSum               float64
}

// add compares the counts of one successful request, if it has both.
func (t *tokenCheck) add(e *event) {
	if e.source != engine.TokensFromUsage || e.clientTok <= 0 {
		return
	}
	usage := float64(max(e.outTok, 1))
	rel := math.Abs(float64(e.outTok-e.clientTok)) / usage
	t.compared++
	t.relSum += rel
	if rel > TokenMismatch {
		t.mismatched++
	}
}

func (t *tokenCheck) summary() TokenCheck {
	s := TokenCheck{Compared: t.compared, Mismatched: t.mismatched}
	if t.compared > 0 {
		s.MeanRelDiff = t.relSum / float64(t.compared)
	}
	return s
}
