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

// RunTokens is what a whole run's output token counts rest on, summed over
// its stages: a mismatch between the server's usage and the client's
// tokenizer is one fact about the run (the tokenizer is not the model's),
// not a problem of each stage, so the summary says it once.
type RunTokens struct {
	// Check is the stages' token checks together.
	Check TokenCheck
	// Sources counts the successful requests whose output tokens came
	// from each source (engine.TokensFromUsage, …FromTokenizer,
	// …FromEvents).
	Sources map[string]int64
	// OK counts the successful requests.
	OK int64
}

// SumTokens sums the token checks and token sources of stages.
func SumTokens(stages []StageSummary) RunTokens {
	var t tokenCheck
	run := RunTokens{Sources: map[string]int64{}}
	for _, s := range stages {
		t.absorb(s.TokenCheck)
		for src, n := range s.TokensSource {
			run.Sources[src] += n
		}
		run.OK += s.OK
	}
	run.Check = t.summary()
	return run
}
