package cost

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// Summary is a run's estimated spend, as the result file keeps it (JSON
// cost).
type Summary struct {
	Currency           string  `json:"currency"`
	InputPerMTok       float64 `json:"input_per_mtok"`
	OutputPerMTok      float64 `json:"output_per_mtok"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok"`
	// Budget is options.cost.budget, absent without one; Cap is the
	// share of it this process stopped at, when it was less (a segment's,
	// --segment).
	Budget float64 `json:"budget,omitempty"`
	Cap    float64 `json:"cap,omitempty"`
	// Total is the estimated spend of every request sent: warmup, stages,
	// setup and teardown, failed requests with their tokens, dirty ones.
	Total float64 `json:"total"`
	// Requests were sent; Unbilled of them reached no model or were
	// refused with an HTTP error and no usage, and cost nothing.
	Requests int64 `json:"requests"`
	Unbilled int64 `json:"unbilled,omitempty"`
	// FromUsage are the billed requests whose counts were all the
	// server's usage; the others used llmload's own counts.
	FromUsage int64 `json:"from_usage"`
	// InputFrom and OutputFrom count the billed requests by the source of
	// their input and output counts (usage, tokenizer, events, bound).
	InputFrom  map[string]int64 `json:"input_from,omitempty"`
	OutputFrom map[string]int64 `json:"output_from,omitempty"`
	// Stages are the spend per stage, warmup first (warmup: true).
	Stages []StageSpend `json:"stages"`
	// Lifecycle is the spend of setup() and teardown(); absent when they
	// sent nothing.
	Lifecycle *StageSpend `json:"setup_teardown,omitempty"`
	// MaxRequest is the largest worst case a request reserved: the one
	// request's cost the budget stop is within.
	MaxRequest float64 `json:"max_request"`
	// Unbounded requests had no max_tokens: each reserved the longest
	// answer seen so far, a guess rather than a bound.
	Unbounded int64 `json:"unbounded,omitempty"`
	// StoppedByBudget says the budget stopped the run; Stop says when,
	// and Refused how many requests the budget kept from being sent.
	StoppedByBudget bool  `json:"stopped_by_budget,omitempty"`
	Stop            *Stop `json:"stop,omitempty"`
	Refused         int64 `json:"refused,omitempty"`
}

// StageSpend is one stage's estimated spend and the tokens it is for.
type StageSpend struct {
	Scenario     string  `json:"scenario"`
	Stage        string  `json:"stage"`
	Warmup       bool    `json:"warmup,omitempty"`
	Requests     int64   `json:"requests"`
	Unbilled     int64   `json:"unbilled,omitempty"`
	InputTokens  int64   `json:"input_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Spend        float64 `json:"spend"`
	FromUsage    int64   `json:"from_usage"`
}

// Stop is the moment the budget stopped the run.
type Stop struct {
	// Committed is the spend plus the worst case of the requests then in
	// flight, which were canceled.
	Committed float64 `json:"committed"`
	// Next is the worst case of the request refused; 0 when the estimate
	// of ended requests itself reached the budget.
	Next     float64 `json:"next_request,omitempty"`
	InFlight int     `json:"in_flight"`
}

// total sums the stages into the run's request counts.
func (s *Summary) total() {
	s.Requests, s.Unbilled, s.FromUsage = 0, 0, 0
	all := s.Stages
	if s.Lifecycle != nil {
		all = append(slices.Clone(all), *s.Lifecycle)
	}
	for _, st := range all {
		s.Requests += st.Requests
		s.Unbilled += st.Unbilled
		s.FromUsage += st.FromUsage
	}
}

// Billed is the number of requests that were billed.
func (s *Summary) Billed() int64 { return s.Requests - s.Unbilled }

// capped is the cap this process stopped at: Cap, else Budget; 0 for none.
func (s *Summary) capped() float64 { return cmp.Or(s.Cap, s.Budget) }

// StopReason is the run's abort reason when the budget stopped it, e.g.
// "spend budget reached: 24.98 USD spent of 25 USD"; "" otherwise.
func (s *Summary) StopReason() string {
	if s == nil || !s.StoppedByBudget {
		return ""
	}
	of := Amount(s.capped()) + " " + s.Currency
	if s.Cap > 0 {
		of = Money(s.Cap) + " " + s.Currency + " (this segment's share of " + Amount(s.Budget) + ")"
	}
	return fmt.Sprintf("spend budget reached: %s %s spent of %s", Money(s.Total), s.Currency, of)
}

// Sources says where the counts came from, e.g. "from usage for 98% of
// requests; 2% from llmload's own counts (tokenizer 20)".
func (s *Summary) Sources() string {
	billed := s.Billed()
	if billed == 0 {
		return "no request was billed"
	}
	own := billed - s.FromUsage
	if own == 0 {
		return "from the server's usage for every request"
	}
	list := ownSources(s.InputFrom, s.OutputFrom)
	if s.FromUsage == 0 {
		return "from llmload's own counts for every request (" + list + "): the server sent no usage"
	}
	return fmt.Sprintf("from the server's usage for %s of requests; %s from llmload's own counts (%s)",
		Share(s.FromUsage, billed), Share(own, billed), list)
}

// ownSources lists the counts that were not usage's: "input: tokenizer
// 20; output: events 3".
func ownSources(in, out map[string]int64) string {
	var parts []string
	for _, side := range []struct {
		name   string
		counts map[string]int64
	}{{"input", in}, {"output", out}} {
		var each []string
		for _, k := range []string{engine.TokensFromTokenizer, engine.TokensFromEvents, FromBound} {
			if n := side.counts[k]; n > 0 {
				each = append(each, fmt.Sprintf("%s %d", k, n))
			}
		}
		if len(each) > 0 {
			parts = append(parts, side.name+": "+strings.Join(each, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// Share is n of total as a percentage: "98%", "0.4%", "<0.1%".
func Share(n, total int64) string {
	if total <= 0 {
		return "0%"
	}
	p := 100 * float64(n) / float64(total)
	switch {
	case n == 0:
		return "0%"
	case p < 0.1:
		return "<0.1%"
	case p < 10 && p != math.Trunc(p):
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Floor(p+0.5), 'f', 0, 64) + "%"
}

// Money prints an amount with two decimals from 1 up, and three
// significant digits below (0.0123), so a cent's fraction still shows.
func Money(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	decimals := 2 - int(math.Floor(math.Log10(a)))
	return strconv.FormatFloat(v, 'f', min(decimals, 12), 64)
}

// Amount prints an amount as the script gave it: 25, 0.5, 12.75.
func Amount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Merge joins the spend of a plan's segment runs: stages of the same
// name add up, as do the totals; the budget is the plan's, stopped when
// any segment was. It refuses segments priced differently.
func Merge(parts []*Summary) (*Summary, error) {
	var out *Summary
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &Summary{Currency: p.Currency, InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok,
				CachedInputPerMTok: p.CachedInputPerMTok, Budget: p.Budget, Stages: []StageSpend{}}
		}
		if p.Currency != out.Currency || p.InputPerMTok != out.InputPerMTok || p.OutputPerMTok != out.OutputPerMTok ||
			p.CachedInputPerMTok != out.CachedInputPerMTok || p.Budget != out.Budget {
			return nil, fmt.Errorf("segments priced differently (options.cost): %s and %s", p.PriceLine(), out.PriceLine())
		}
		out.add(p)
	}
	if out != nil {
		out.total()
	}
	return out, nil
}

// add joins p into s, stage by stage.
func (s *Summary) add(p *Summary) {
	s.Total += p.Total
	s.MaxRequest = max(s.MaxRequest, p.MaxRequest)
	s.Unbounded += p.Unbounded
	s.Refused += p.Refused
	s.StoppedByBudget = s.StoppedByBudget || p.StoppedByBudget
	s.InputFrom, s.OutputFrom = addCounts(s.InputFrom, p.InputFrom), addCounts(s.OutputFrom, p.OutputFrom)
	for _, st := range p.Stages {
		i := slices.IndexFunc(s.Stages, func(x StageSpend) bool {
			return x.Scenario == st.Scenario && x.Stage == st.Stage && x.Warmup == st.Warmup
		})
		if i < 0 {
			s.Stages = append(s.Stages, st)
			continue
		}
		s.Stages[i].Add(st)
	}
	if p.Lifecycle != nil {
		if s.Lifecycle == nil {
			s.Lifecycle = &StageSpend{Stage: LifecycleStage}
		}
		s.Lifecycle.Add(*p.Lifecycle)
	}
}

// Add folds st's requests, tokens and spend into x.
func (x *StageSpend) Add(st StageSpend) {
	x.Requests += st.Requests
	x.Unbilled += st.Unbilled
	x.InputTokens += st.InputTokens
	x.CachedTokens += st.CachedTokens
	x.OutputTokens += st.OutputTokens
	x.Spend += st.Spend
	x.FromUsage += st.FromUsage
}

func addCounts(a, b map[string]int64) map[string]int64 {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]int64{}
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}

// PriceLine is s's prices as PriceLine gives them.
func (s *Summary) PriceLine() string {
	return PriceLine(plan.Cost{InputPerMTok: s.InputPerMTok, OutputPerMTok: s.OutputPerMTok,
		CachedInputPerMTok: s.CachedInputPerMTok, Currency: s.Currency})
}

// PriceLine is c's prices as one phrase: "input 3, cached input 0.3,
// output 15 USD per million tokens".
func PriceLine(c plan.Cost) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	cached := ""
	if c.CachedInputPerMTok != c.InputPerMTok {
		cached = ", cached input " + f(c.CachedInputPerMTok)
	}
	return fmt.Sprintf("input %s%s, output %s %s per million tokens", f(c.InputPerMTok), cached, f(c.OutputPerMTok), c.CurrencyCode())
}

// NoBudgetNote explains prices given without a budget.
const NoBudgetNote = "spend is estimated, not capped: set options.cost.budget to stop the run at a cap"

// Note is what check and run say of c before any load: NoBudgetNote for
// prices without a budget; "" otherwise.
func Note(c plan.Cost) string {
	if c.Priced() && c.Budget <= 0 {
		return NoBudgetNote
	}
	return ""
}
