package lint

import (
	"fmt"

	"github.com/llmload/llmload/engine/plan"
)

// RepeatShare is the share of requests repeating an earlier iteration's
// start (repeated-prefix) or whole prompt (repeated-sampling) above which
// those rules fire. A pool cycled without a unique prefix repeats far
// more (every request after the pool's size); a handful of chance
// collisions among varied prompts stay far below.
const RepeatShare = 0.20

// MinObserved is the fewest requests the request rules judge a scenario
// (from the plan) or a stage (from the run) on: below it one repeat is a
// share of 5% or more, and a stage that short says nothing either way.
const MinObserved = 20

// requestLints are the rules on what a scenario's requests contain:
// repeated prompt starts (per stage when judged from the run), sampling
// that repeats with repeated prompts, and unbounded outputs.
func requestLints(sc plan.Scenario, ts []Tally, src Source) []Lint {
	t := total(ts)
	if t.Requests < MinObserved {
		return nil
	}
	var ls []Lint
	if src == FromRun {
		for _, st := range ts {
			if st.Requests >= MinObserved {
				ls = append(ls, repeatedPrefix(sc, st, st.Stage, src)...)
			}
		}
	} else {
		ls = append(ls, repeatedPrefix(sc, t, "", src)...)
	}
	ls = append(ls, repeatedSampling(sc, t, src)...)
	return append(ls, noMaxTokens(sc, t, src)...)
}

// whose names the requests a tally counts, for a message.
func whose(src Source, stage string) string {
	switch {
	case src == FromPlan:
		return "of the requests a dry run of its iterations built"
	case stage != "":
		return "of stage " + stage + "'s first requests"
	}
	return "of the run's first requests"
}

func share(n, of int) float64 { return float64(n) / float64(of) }

func repeatedPrefix(sc plan.Scenario, t Tally, stage string, src Source) []Lint {
	if share(t.PrefixRepeats, t.Requests) <= RepeatShare {
		return nil
	}
	pct := 100 * share(t.PrefixRepeats, t.Requests)
	if sc.Trace != nil {
		// A trace sends the prefixes its records share (their hash ids):
		// the replay reproduces production's reuse, which is its point.
		return []Lint{{ID: RepeatedPrefix, Severity: Info, Scenario: sc.Name, Stage: stage, Source: src,
			Message: fmt.Sprintf("%.0f%% (%d of %d) %s start as an earlier record's did: the replay reproduces "+
				"the prefix sharing the trace recorded, by design", pct, t.PrefixRepeats, t.Requests, whose(src, stage)),
			Fix: `nothing; salt = "..." in the trace loader gives every block new text when a server's cache still holds an earlier replay's`}}
	}
	if share(t.PrefixRepeats-t.AskedRepeats, t.Requests) <= RepeatShare {
		// llm.synthetic's prefix_hit builds prompts to repeat a prefix:
		// the hits are what the scenario asked for.
		return []Lint{{ID: RepeatedPrefix, Severity: Info, Scenario: sc.Name, Stage: stage, Source: src,
			Message: fmt.Sprintf("%.0f%% (%d of %d) %s start as an earlier request's did, as llm.synthetic's prefix_hit "+
				"built them to: the server's prefix cache serves that share, by design", pct, t.PrefixRepeats, t.Requests, whose(src, stage)),
			Fix: "nothing; the summary sets the share asked beside the share the server served"}}
	}
	return []Lint{{ID: RepeatedPrefix, Severity: Warning, Scenario: sc.Name, Stage: stage, Source: src,
		Message: fmt.Sprintf("%.0f%% (%d of %d) %s start with the same %d bytes (about 32 tokens) as a request of an "+
			"earlier iteration: the server's prefix cache serves those, so TTFT reads lower than traffic that does not "+
			"repeat would see", pct, t.PrefixRepeats, t.Requests, whose(src, stage), PrefixBytes),
		Fix: `start every prompt with something unique, e.g. ("[req_%d] %s"):format(vu.request_id, prompt), or ` +
			`llm.synthetic{ unique_prefix = true }; a scenario that measures the prefix cache on purpose says so: ` +
			`options.lints = { ignore = { ["repeated-prefix"] = "why" } }`}}
}

func repeatedSampling(sc plan.Scenario, t Tally, src Source) []Lint {
	what := ""
	switch {
	case t.Temperature0 == t.Requests:
		what = "temperature 0"
	case t.Seeded == t.Requests && t.Seeds == 1:
		what = fmt.Sprintf("the same seed (%d)", t.Seed)
	default:
		return nil
	}
	if share(t.PromptRepeats, t.Requests) <= RepeatShare {
		return nil
	}
	return []Lint{{ID: RepeatedSampling, Severity: Warning, Scenario: sc.Name, Source: src,
		Message: fmt.Sprintf("every request is sent with %s while %.0f%% (%d of %d) %s repeat an earlier iteration's "+
			"prompt exactly: the server then generates identical outputs, whose KV-cache blocks it can reuse, "+
			"and throughput reads higher than varied traffic would give", what, 100*share(t.PromptRepeats, t.Requests),
			t.PromptRepeats, t.Requests, whose(src, "")),
		Fix: "sample as production does — temperature = 0.7 and seed = llm.rand_int() on each request — or make every prompt unique"}}
}

func noMaxTokens(sc plan.Scenario, t Tally, src Source) []Lint {
	if t.NoMaxTokens == 0 {
		return nil
	}
	return []Lint{{ID: NoMaxTokens, Severity: Warning, Scenario: sc.Name, Source: src,
		Message: fmt.Sprintf("%d of %d %s (%.0f%%) set no max_tokens: each answer runs until the model stops or the "+
			"context fills, so TPOT and E2E depend on how long the model chose to talk and cannot be compared between runs",
			t.NoMaxTokens, t.Requests, whose(src, ""), 100*share(t.NoMaxTokens, t.Requests)),
		Fix: "set max_tokens on every request (max_output_tokens in llm.respond); with ignore_eos = true the server generates exactly that many"}}
}
