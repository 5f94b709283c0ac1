package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/textfmt"
)

// SpendPlan renders what a priced plan could spend, for 'llmload
// check': per part (warmup, scenarios, setup) the iterations it can run
// and its dearest sampled iteration, then the worst case in all against
// the budget.
func SpendPlan(w cost.WorstCase) Reporter {
	return func(out io.Writer) error {
		var b bytes.Buffer
		writeSpendPlan(&b, w)
		_, err := out.Write(b.Bytes())
		return err
	}
}

func writeSpendPlan(b *bytes.Buffer, w cost.WorstCase) {
	cur := w.Cost.CurrencyCode()
	budget := "no budget"
	if w.Cost.Budget > 0 {
		budget = "budget " + cost.Amount(w.Cost.Budget) + " " + cur
	}
	fmt.Fprintf(b, "\nspend (options.cost): %s; %s\n", cost.PriceLine(w.Cost), budget)
	for _, p := range w.Parts {
		b.WriteString(wrap(p.Name+": "+partLine(p, cur), "  ", "      ", maxWidth))
		b.WriteString(wrap("each: "+iterationLine(p, cur), "    ", "      ", maxWidth))
	}
	b.WriteString(wrap("worst case: "+worstLine(w, cur), "  ", "    ", maxWidth))
	for _, note := range worstNotes(w, cur) {
		b.WriteString(wrap(note, "  ", "    ", maxWidth))
	}
}

// partLine is a part's iterations and what they can cost.
func partLine(p cost.WorstPart, cur string) string {
	priced := p.Sampled > 0 && !p.NoMaxTokens
	if p.Unbounded != "" {
		s := "unbounded (" + p.Unbounded + ")"
		if p.Estimate > 0 {
			s += fmt.Sprintf("; ≈ %s iterations (%s)", fmtCount(p.Estimate), p.EstimateHow)
			if priced {
				s += fmt.Sprintf(" ≈ %s %s", cost.Money(p.EstimateCost), cur)
			}
		}
		return s
	}
	s := fmt.Sprintf("≤ %s iterations (%s)", fmtCount(p.Iterations), p.How)
	if priced {
		s += fmt.Sprintf(" × ≤ %s %s = ≤ %s %s", cost.Money(p.PerIteration), cur, cost.Money(p.Worst), cur)
	}
	return s
}

// iterationLine describes the dearest sampled iteration.
func iterationLine(p cost.WorstPart, cur string) string {
	switch {
	case p.Sampled == 0:
		return "no request sampled (the dry run built none for it): its tokens, and its worst case, are unknown"
	case p.NoMaxTokens:
		return "a sampled request sets no max_tokens: its answer's length, and so the worst case, are unbounded (set max_tokens)"
	}
	of := fmt.Sprintf("the dearest of %s sampled", textfmt.Count(int64(p.Sampled), "iteration", "iterations"))
	if p.Name == "setup" {
		of = "setup() once"
	}
	return fmt.Sprintf("%s, ≤ %s prompt tokens + %s max_tokens ≤ %s %s (%s)", textfmt.Count(int64(p.Requests), "request", "requests"),
		fmtCount(float64(p.InputTokens)), fmtCount(float64(p.OutputTokens)), cost.Money(p.PerIteration), cur, of)
}

// worstLine is the plan's worst case in all.
func worstLine(w cost.WorstCase, cur string) string {
	if !w.Unbounded {
		return fmt.Sprintf("≤ %s %s", cost.Money(w.Bound), cur)
	}
	s := fmt.Sprintf("unbounded; the bounded parts ≤ %s %s", cost.Money(w.Bound), cur)
	if w.Estimate > w.Bound {
		s += fmt.Sprintf(", ≈ %s %s with the estimates", cost.Money(w.Estimate), cur)
	}
	if len(w.Unestimated) > 0 {
		s += " (leaving out " + strings.Join(w.Unestimated, ", ") + ")"
	}
	return s
}

// worstNotes say how the worst case was counted and what the budget does
// with it.
func worstNotes(w cost.WorstCase, cur string) []string {
	tok := "prompt tokens as " + w.Tokenizer + " counts the sampled requests (without the chat template's few per message), none of them cached"
	if w.Tokenizer == "" {
		tok = "prompt tokens bounded by the sampled requests' bytes (no tokenizer), none of them cached"
	}
	notes := []string{tok}
	switch b := w.Cost.Budget; {
	case b <= 0:
		notes = append(notes, cost.NoBudgetNote)
	case !w.Unbounded && w.Bound <= b:
		notes = append(notes, fmt.Sprintf("the budget (%s %s) is above the worst case: it cannot stop this run", cost.Amount(b), cur))
	default:
		notes = append(notes, fmt.Sprintf("the budget stops the run before its estimated spend passes %s %s: each request reserves its worst case when it is sent", cost.Amount(b), cur))
	}
	return notes
}

// fmtCount prints a count, rounded up: 1234 or 1.2M.
func fmtCount(v float64) string {
	v = math.Ceil(v)
	if v >= 1e6 {
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	return fmt.Sprintf("%.0f", v)
}
