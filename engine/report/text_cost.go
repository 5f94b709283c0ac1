package report

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeSpend writes the estimated spend: a headline against the budget,
// a row per stage (the warmup's in one row, setup and teardown in
// another), where the counts came from, and how the budget stopped the
// run or that none caps it.
func writeSpend(b *bytes.Buffer, r *result.Result) {
	s := r.Cost
	if s == nil {
		return
	}
	fmt.Fprintf(b, "\nspend (estimated): %s; %s\n", spendHeadline(s), s.PriceLine())
	tw := newTable(b)
	rows := spendRows(s)
	labels := make([]string, len(rows))
	for i, x := range rows {
		labels[i] = x.label
	}
	head, labels := leftColumn("stage", labels)
	row(tw, head, "requests", "input tok", "cached", "output tok", "spend")
	for i, x := range rows {
		st := x.spend
		row(tw, labels[i], itoa(st.Requests), itoa(st.InputTokens), itoa(st.CachedTokens), itoa(st.OutputTokens), cost.Money(st.Spend))
	}
	tw.Flush()
	for _, line := range spendNotes(s) {
		b.WriteString(wrap(line, "", "  ", maxWidth))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// spendHeadline is "1.23 USD of a 25 USD budget (4.9%)", or the total
// alone without a budget.
func spendHeadline(s *cost.Summary) string {
	total := cost.Money(s.Total) + " " + s.Currency
	if s.Budget <= 0 {
		return total
	}
	if s.Cap > 0 {
		return fmt.Sprintf("%s of this segment's %s %s (its share of a %s %s budget), %s", total, cost.Money(s.Cap), s.Currency,
			cost.Amount(s.Budget), s.Currency, percent(s.Total, s.Cap))
	}
	return fmt.Sprintf("%s of a %s %s budget, %s", total, cost.Amount(s.Budget), s.Currency, percent(s.Total, s.Budget))
}

func percent(v, of float64) string {
	return strconv.FormatFloat(100*v/of, 'f', 1, 64) + "%"
}

// spendRow is one row of the spend table.
type spendRow struct {
	label string
	spend cost.StageSpend
}

// spendRows are the warmup's row (every warmup ledger joined), one per
// stage, setup and teardown's, and the total.
func spendRows(s *cost.Summary) []spendRow {
	var rows []spendRow
	warm := cost.StageSpend{Stage: "warmup"}
	var stages []cost.StageSpend
	multi := false
	for _, st := range s.Stages {
		if st.Warmup {
			warm.Add(st)
			continue
		}
		multi = multi || len(stages) > 0 && st.Scenario != stages[0].Scenario
		stages = append(stages, st)
	}
	if warm.Requests > 0 {
		rows = append(rows, spendRow{"warmup", warm})
	}
	for _, st := range stages {
		label := st.Stage
		if multi {
			label = st.Scenario + "/" + st.Stage
		}
		rows = append(rows, spendRow{label, st})
	}
	if s.Lifecycle != nil {
		rows = append(rows, spendRow{cost.LifecycleStage, *s.Lifecycle})
	}
	total := cost.StageSpend{}
	for _, x := range rows {
		total.Add(x.spend)
	}
	total.Spend = s.Total // the meter's own sum, not the rows' again
	return append(rows, spendRow{"total", total})
}

// spendNotes say where the counts came from, which requests cost
// nothing, how the budget stopped the run, and what a missing budget or
// max_tokens means.
func spendNotes(s *cost.Summary) []string {
	notes := []string{"token counts: " + s.Sources()}
	if s.Unbilled > 0 {
		notes = append(notes, fmt.Sprintf("%s got an HTTP error without usage or reached no server: not billed",
			textfmt.Count(s.Unbilled, "request", "requests")))
	}
	if st := s.Stop; s.StoppedByBudget && st != nil {
		notes = append(notes, stopNote(s, st))
	}
	if s.Unbounded > 0 {
		notes = append(notes, fmt.Sprintf("%s had no max_tokens: each reserved the longest answer seen so far, a guess, so the budget held only as closely as that guess",
			textfmt.Count(s.Unbounded, "request", "requests")))
	}
	if s.Budget <= 0 {
		notes = append(notes, cost.NoBudgetNote)
	}
	return notes
}

// stopNote says how the budget stopped the run.
func stopNote(s *cost.Summary, st *cost.Stop) string {
	spent := fmt.Sprintf("%s %s spent of %s %s", cost.Money(s.Total), s.Currency, cost.Amount(s.Budget), s.Currency)
	if s.Cap > 0 {
		spent = fmt.Sprintf("%s %s spent of this segment's %s %s", cost.Money(s.Total), s.Currency, cost.Money(s.Cap), s.Currency)
	}
	if st.Next == 0 {
		return "budget: the estimate reached it, and the run stopped (" + spent + "); requests in flight were canceled"
	}
	committed := fmt.Sprintf("the spend of %s %s", cost.Money(st.Committed), s.Currency)
	if st.InFlight > 0 {
		committed = fmt.Sprintf("the committed %s %s (spent, plus the worst case of %s in flight, which were canceled)",
			cost.Money(st.Committed), s.Currency, textfmt.Count(int64(st.InFlight), "request", "requests"))
	}
	return fmt.Sprintf("budget: the run stopped before sending a request whose worst case (%s %s) would have taken %s over it: %s",
		cost.Money(st.Next), s.Currency, committed, spent)
}
