package merge

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/result"
)

func costSegment(i int, c *cost.Summary) Input {
	return Input{Path: "seg.json", Result: &result.Result{Run: result.Meta{Segment: &result.Segment{Index: i, Count: 2}}, Cost: c}}
}

func TestSpendOfSegments(t *testing.T) {
	priced := func(total float64, stopped bool) *cost.Summary {
		return &cost.Summary{Currency: "USD", InputPerMTok: 1, OutputPerMTok: 2, CachedInputPerMTok: 1, Budget: 10, Cap: 5,
			Total: total, StoppedByBudget: stopped, Stages: []cost.StageSpend{{Scenario: "s", Stage: "c1", Requests: 1, Spend: total}}}
	}
	in := []Input{costSegment(0, priced(1, false)), costSegment(1, priced(4.99, true))}
	s, err := spend(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != 5.99 || s.Requests != 2 || !s.StoppedByBudget {
		t.Errorf("merged spend %+v", s)
	}
	if got := budgetStopped(in); !strings.HasPrefix(got, "segment 1/2: spend budget reached: 4.99 USD spent of 5.00 USD (this segment's share of 10)") {
		t.Errorf("budgetStopped = %q", got)
	}
	other := priced(1, false)
	other.OutputPerMTok = 3
	if _, err := spend([]Input{costSegment(0, priced(1, false)), costSegment(1, other)}); !errors.Is(err, ErrInputs) {
		t.Errorf("segments of different prices: err %v, want ErrInputs", err)
	}
	if s, err := spend([]Input{costSegment(0, nil), costSegment(1, nil)}); s != nil || err != nil {
		t.Errorf("unpriced segments: %+v, %v", s, err)
	}
}
