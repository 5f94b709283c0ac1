package main

import (
	"io"

	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/tokenize"
	"github.com/llmload/llmload/luabind"
)

// writeSpendPlan prints what a priced plan could spend at worst: the
// iterations each part can run times the dearest iteration the dry run
// of the script built (sampled). An unpriced plan prints nothing.
func writeSpendPlan(w io.Writer, sampled []luabind.SampledRequest, p plan.Plan) error {
	if !p.Cost.Priced() {
		return nil
	}
	return report.SpendPlan(cost.Plan(p, samplesOf(sampled), planCodec(p.Target)))(w)
}

// samplesOf is the dry run's requests as engine/cost reads them.
func samplesOf(in []luabind.SampledRequest) []cost.Sampled {
	out := make([]cost.Sampled, len(in))
	for i, s := range in {
		out[i] = cost.Sampled{Scenario: s.Scenario, Iteration: s.Iteration, Setup: s.Setup, Request: s.Request}
	}
	return out
}

// planCodec is the plan's offline tokenizer; nil for none, or one that
// does not load (Compile loaded it already, so that is not expected).
func planCodec(t plan.Target) tokenize.Codec {
	if t.Tokenizer == openai.TokenizerNone {
		return nil
	}
	codec, err := tokenize.Get(t.Tokenizer)
	if err != nil {
		return nil
	}
	return codec
}
