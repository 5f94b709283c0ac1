package report

import (
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/result"
)

// spendSection is the HTML report's estimated spend: the headline, a row
// per stage, and the notes the text summary has.
type spendSection struct {
	Headline string
	Prices   string
	Table    htmlTable
	Notes    []string
	Stopped  bool
}

// spendSectionOf is r's spend section; nil when the plan set no prices.
func spendSectionOf(r *result.Result) *spendSection {
	s := r.Cost
	if s == nil {
		return nil
	}
	sec := &spendSection{Headline: spendHeadline(s), Prices: s.PriceLine(), Notes: spendNotes(s), Stopped: s.StoppedByBudget,
		Table: htmlTable{Head: []string{"stage", "requests", "input tokens", "cached", "output tokens", "spend (" + s.Currency + ")"}}}
	for _, x := range spendRows(s) {
		st := x.spend
		sec.Table.Rows = append(sec.Table.Rows, []htmlCell{{Text: x.label, Left: true}, intCellH(st.Requests),
			intCellH(st.InputTokens), intCellH(st.CachedTokens), intCellH(st.OutputTokens), {Text: cost.Money(st.Spend)}})
	}
	return sec
}
