package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmload/llmload/engine/result"
)

// CapacitySide is one file's capacity of a scenario: the estimate and the
// interval the search left it in.
type CapacitySide struct {
	Capacity float64 `json:"capacity"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"` // 0 when no probe broke (AtLeast)
	AtLeast  bool    `json:"at_least,omitempty"`
	Stopped  string  `json:"stopped,omitempty"`
}

// CapacityRow compares one capacity search in both files. A capacity is
// known only to lie in [Lo, Hi], so the rows are decided on the
// intervals: a drop beyond the bound is a regression only when even the
// new Hi is below the base Lo less the bound, and the row passes only
// when even the new Lo is at or above the base Hi less the bound;
// otherwise the intervals are too wide to tell.
type CapacityRow struct {
	Scenario string        `json:"scenario"`
	Unit     string        `json:"unit"`
	Base     *CapacitySide `json:"base,omitempty"` // nil when base has no such search
	New      *CapacitySide `json:"new,omitempty"`
	// ChangePct is the estimates' relative change; 0 without both.
	ChangePct    float64 `json:"change_pct"`
	Decision     string  `json:"verdict"`
	Regression   bool    `json:"regression,omitempty"`
	Inconclusive bool    `json:"inconclusive,omitempty"`
	NoData       bool    `json:"no_data,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// capacityScenarios names the scenarios either file searched capacity in:
// their stages are probes, whose names mean different loads in each run,
// so they are compared as capacities, never stage by stage.
func capacityScenarios(base, new *result.Result) map[string]bool {
	out := map[string]bool{}
	for _, r := range []*result.Result{base, new} {
		for _, c := range r.Capacity {
			out[c.Scenario] = true
		}
	}
	return out
}

// compareCapacities makes a row per capacity search of either file, in
// base's order and then new's.
func compareCapacities(base, new *result.Result, maxDrop float64) []CapacityRow {
	var rows []CapacityRow
	for i := range base.Capacity {
		b := &base.Capacity[i]
		rows = append(rows, compareCapacity(b, findCapacity(new, b.Scenario), maxDrop))
	}
	for i := range new.Capacity {
		if n := &new.Capacity[i]; findCapacity(base, n.Scenario) == nil {
			rows = append(rows, compareCapacity(nil, n, maxDrop))
		}
	}
	return rows
}

func findCapacity(r *result.Result, scenario string) *result.Capacity {
	for i := range r.Capacity {
		if r.Capacity[i].Scenario == scenario {
			return &r.Capacity[i]
		}
	}
	return nil
}

func side(c *result.Capacity) *CapacitySide {
	if c == nil {
		return nil
	}
	return &CapacitySide{Capacity: c.Capacity, Lo: c.Lo, Hi: c.Hi, AtLeast: c.AtLeast, Stopped: c.Stopped}
}

// bounds is the interval a side's capacity lies in: above its max when
// the search held there, [0, Hi) when no probe held.
func (s *CapacitySide) bounds() (lo, hi float64) {
	hi = s.Hi
	if s.AtLeast || s.Hi <= 0 {
		hi = math.Inf(1)
	}
	return s.Lo, hi
}

func compareCapacity(b, n *result.Capacity, maxDrop float64) CapacityRow {
	row := CapacityRow{Base: side(b), New: side(n)}
	switch {
	case b == nil:
		row.Scenario, row.Unit, row.Note = n.Scenario, n.Unit, "only in new"
	case n == nil:
		row.Scenario, row.Unit, row.Note = b.Scenario, b.Unit, "only in base"
	case b.Load != n.Load:
		row.Scenario, row.Unit, row.Note = b.Scenario, b.Unit, fmt.Sprintf("base searched %s, new %s: not comparable", b.Unit, n.Unit)
	case b.Lo <= 0 && b.Hi <= 0 || n.Lo <= 0 && n.Hi <= 0:
		row.Scenario, row.Unit, row.Note = b.Scenario, b.Unit, "a search decided no probe"
	default:
		row.Scenario, row.Unit = b.Scenario, b.Unit
		decideCapacity(&row, maxDrop)
		return row
	}
	row.NoData, row.Decision = true, VerdictNoData
	return row
}

// decideCapacity sets a row's verdict from the two intervals.
func decideCapacity(row *CapacityRow, maxDrop float64) {
	b, n := row.Base, row.New
	if b.Capacity > 0 {
		row.ChangePct = 100 * (n.Capacity - b.Capacity) / b.Capacity
	}
	bLo, bHi := b.bounds()
	nLo, nHi := n.bounds()
	keep := 1 - maxDrop
	switch {
	case nHi < keep*bLo:
		row.Decision, row.Regression = VerdictRegression, true
	case nLo >= keep*bHi && nLo > bHi:
		row.Decision = VerdictBetter
	case nLo >= keep*bHi && nHi < bLo:
		row.Decision = VerdictWorse
	case nLo >= keep*bHi:
		row.Decision = VerdictSame
	case b.AtLeast && n.AtLeast:
		row.Decision, row.Inconclusive = VerdictInconclusive, true
		row.Note = fmt.Sprintf("both searches held at their max (%s and %s): raise max to compare", capacityValue(b, row.Unit), capacityValue(n, row.Unit))
	default:
		row.Decision, row.Inconclusive = VerdictInconclusive, true
		row.Note = fmt.Sprintf("the intervals %s and %s are too wide to tell a drop beyond %s", interval(b), interval(n), pct(maxDrop))
	}
	var notes []string
	if row.Note != "" {
		notes = append(notes, row.Note)
	}
	// A search that stopped early still bounds its capacity by the probes
	// it decided, so it is compared; the reader must know it stopped.
	if b.Stopped != "" {
		notes = append(notes, "base's search stopped early: "+b.Stopped)
	}
	if n.Stopped != "" {
		notes = append(notes, "new's search stopped early: "+n.Stopped)
	}
	row.Note = strings.Join(notes, "; ")
}

// interval renders a side's interval: "[39.8, 43.2]", "[64, ∞)".
func interval(s *CapacitySide) string {
	lo, hi := s.bounds()
	if math.IsInf(hi, 1) {
		return "[" + fmtCapacity(lo) + ", ∞)"
	}
	return "[" + fmtCapacity(lo) + ", " + fmtCapacity(hi) + "]"
}

func fmtCapacity(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.4g", v), ".0") }

// capacityValue renders a side for a table: "41.5 req/s [39.8, 43.2]",
// "≥ 64 VUs", "-" for none.
func capacityValue(s *CapacitySide, unit string) string {
	switch {
	case s == nil:
		return "-"
	case s.AtLeast:
		return "≥ " + fmtCapacity(s.Lo) + " " + unit
	case s.Lo <= 0:
		return "< " + fmtCapacity(s.Hi) + " " + unit
	}
	return fmtCapacity(s.Capacity) + " " + unit + " " + interval(s)
}

// capacityChange renders a row's relative change.
func capacityChange(r CapacityRow) string {
	if r.NoData || r.Base.Capacity == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", r.ChangePct)
}
