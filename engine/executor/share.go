package executor

import (
	"fmt"

	"github.com/llmload/llmload/engine/plan"
)

// A segmented plan (engine.Segment, --segment i/n) runs each executor's
// share of the whole plan, dealt round robin: the whole plan's k-th VU,
// arrival or iteration belongs to segment k mod n. Schedules stay global
// (a closed model follows the whole ramp, an open model draws the whole
// arrival sequence) and each segment acts on its own items only, so the n
// segments together are exactly the unsegmented run.

// rateShare is the segment's share of a whole-plan rate: it dispatches
// every n-th arrival.
func rateShare(seg plan.Segment, rate float64) float64 {
	if seg.Whole() {
		return rate
	}
	return rate / float64(seg.Count)
}

// sharedIterationsShare is the segment's share of shared-iterations'
// total. Only the min(n, vus) segments that hold a VU take part, so that
// no iteration goes to a segment that could never run it.
func sharedIterationsShare(seg plan.Segment, vus, iterations int) int {
	if seg.Whole() {
		return iterations
	}
	m := min(seg.Count, max(vus, 0))
	if seg.Index >= m {
		return 0
	}
	return plan.Segment{Index: seg.Index, Count: m}.Share(iterations)
}

// checkOpenSplit refuses an open-model scenario whose VUs cannot give
// every segment at least one: a segment without a VU would drop every
// arrival it owns.
func checkOpenSplit(sc plan.Scenario, seg plan.Segment) error {
	if seg.Whole() || sc.MaxVUs() >= seg.Count {
		return nil
	}
	key, n := "max_vus", sc.MaxVUsCap
	if sc.PreAllocatedVUs > sc.MaxVUsCap {
		key, n = "pre_allocated_vus", sc.PreAllocatedVUs
	}
	return fmt.Errorf("scenario %q: %s %d cannot be split into %d segments: each segment needs at least one VU (raise max_vus to %d or more)",
		sc.Name, key, n, seg.Count, seg.Count)
}

// checkSegment refuses a segment to which the plan gives no VU at all: it
// would run, measure nothing and fail, when the mistake is asking for more
// segments than the plan has VUs. Open models always have arrivals for
// every segment (checkOpenSplit sees that they can be served, and
// checkTraceSplit that a trace has enough for every segment).
func checkSegment(p plan.Plan) error {
	seg := p.Segment
	if seg.Whole() {
		return nil
	}
	most := 0
	for _, sc := range p.Scenarios {
		if plan.OpenModel(sc.Executor) || seg.Share(sc.MaxVUs()) > 0 {
			return nil
		}
		most = max(most, sc.MaxVUs())
	}
	return fmt.Errorf("segment %s gets no VU of this plan: its largest scenario has %d, fewer than the %d segments; split it into at most %d",
		seg, most, seg.Count, max(most, 1))
}

// CheckSplit reports whether plan p can run as n segments: each of them
// gets a VU, each open model can serve every segment's arrivals, each
// trace has records for every segment, and no scenario is a capacity
// search. The last segment has the smallest share of VUs, so it speaks
// for all.
func CheckSplit(p plan.Plan, n int) error {
	if n <= 1 {
		return nil
	}
	p.Segment = plan.Segment{Index: n - 1, Count: n}
	for _, sc := range p.Scenarios {
		if err := checkCapacitySplit(sc, n); err != nil {
			return err
		}
		if err := checkTraceSplit(sc, n); err != nil {
			return err
		}
		if plan.OpenModel(sc.Executor) {
			if err := checkOpenSplit(sc, p.Segment); err != nil {
				return err
			}
		}
	}
	return checkSegment(p)
}

// checkCapacitySplit refuses to split a capacity search: each probe is
// judged on all of its load, which no segment sees.
func checkCapacitySplit(sc plan.Scenario, n int) error {
	if n <= 1 || sc.Executor != plan.ExecutorCapacity && sc.Capacity == nil {
		return nil
	}
	return fmt.Errorf("scenario %q: a capacity search cannot be split into %d segments: each probe is judged on all of its load, so run it as one process",
		sc.Name, n)
}

// A trace is dealt to segments by units: each root of no session is a
// unit, and so is each session, whole, in order of its first record; a
// record timed by a parent goes with its parent, so a tree is whole in
// its root's unit. The k-th unit (0-based) belongs to segment k mod n. A
// session or a tree never splits, the units' records together are the
// whole trace, and every segment has a record when there are at least n
// units.

// traceShare is segment seg's share of t's arrivals, in order, each
// Parent renumbered to its parent's index in the share.
func traceShare(t *plan.Trace, seg plan.Segment) []plan.TraceArrival {
	if seg.Whole() {
		return t.Arrivals
	}
	var out []plan.TraceArrival
	local := map[int]int{} // 1 + index in t.Arrivals -> 1 + index in out
	forTraceUnits(t, func(i int, a plan.TraceArrival, unit int64) {
		if seg.Owns(unit) {
			a.Parent = local[a.Parent]
			out = append(out, a)
			local[i+1] = len(out)
		}
	})
	return out
}

// forTraceUnits calls f with each of t's arrivals, in order, its index
// and its unit.
func forTraceUnits(t *plan.Trace, f func(i int, a plan.TraceArrival, unit int64)) (units int64, sessions int) {
	unitOf := map[int]int64{}
	arrivalUnit := make([]int64, len(t.Arrivals))
	for i, a := range t.Arrivals {
		u, ok := unitOf[a.Session]
		switch {
		case a.Parent > 0 && a.Parent <= i:
			u = arrivalUnit[a.Parent-1] // with its parent, whatever its session
		case !ok || a.Session == 0:
			u = units
			units++
			if a.Session != 0 {
				unitOf[a.Session] = u
			}
		}
		arrivalUnit[i] = u
		f(i, a, u)
	}
	return units, len(unitOf)
}

// checkTraceSplit refuses to split a trace into more segments than it has
// units (sessions and records of no session): some segment would replay
// nothing.
func checkTraceSplit(sc plan.Scenario, n int) error {
	if n <= 1 || sc.Executor != plan.ExecutorTrace || sc.Trace == nil {
		return nil
	}
	units, sessions := forTraceUnits(sc.Trace, func(int, plan.TraceArrival, int64) {})
	if units >= int64(n) {
		return nil
	}
	what := fmt.Sprintf("has %d records", units)
	if sessions > 0 {
		what = fmt.Sprintf("replays %d sessions, which never split, and %d records of no session", sessions, units-int64(sessions))
	}
	return fmt.Errorf("scenario %q: its trace %s, fewer than the %d segments: each segment needs at least one; split it into at most %d",
		sc.Name, what, n, max(units, 1))
}
