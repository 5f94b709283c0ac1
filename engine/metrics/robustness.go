package metrics

import (
	"maps"
	"slices"

	"github.com/llmload/llmload/engine"
)

// MaxDirtyKinds caps the distinct dirty-data kinds a stage keeps apart, so
// that a script inventing endless kind names cannot exhaust memory; the
// requests of further kinds share OtherDirtyKind.
const MaxDirtyKinds = 50

// OtherDirtyKind gathers the dirty requests whose kind came after the first
// MaxDirtyKinds of a stage.
const OtherDirtyKind = "(other)"

// DirtyKindTag is the filter key that selects one dirty-data kind in the
// dirty.* metrics (engine.Sample.Dirty), answered without Track.
const DirtyKindTag = "kind"

// RobustnessSummary is how the server answered the dirty requests of one
// kind: their statuses (0: no response), error classes, and the counts of
// each engine.Verdict. Verdict is the kind's overall verdict: a defect if
// any request got one, else accepted if any was served, else handled;
// canceled when every request was cut off by the end of the run.
type RobustnessSummary struct {
	Count    int64            `json:"count"`
	Statuses map[int]int64    `json:"statuses"`
	Errors   map[string]int64 `json:"errors"`
	Handled  int64            `json:"handled"`
	Defects  int64            `json:"defects"`
	Accepted int64            `json:"accepted"`
	Canceled int64            `json:"canceled"`
	Verdict  string           `json:"verdict"`
}

// verdict is engine.Verdict's answer as an index, so that the aggregator
// counts it without comparing strings.
type verdict uint8

const (
	vHandled verdict = iota
	vDefect
	vAccepted
	vCanceled
	numVerdicts
)

func verdictOf(r *engine.Result) verdict {
	switch engine.Verdict(r) {
	case engine.VerdictHandled:
		return vHandled
	case engine.VerdictAccepted:
		return vAccepted
	case engine.VerdictCanceled:
		return vCanceled
	}
	return vDefect
}

// dirtyTally counts one stage's dirty requests of one kind. Owned by the
// aggregator; once a status and a class have been seen, counting them
// again allocates nothing.
type dirtyTally struct {
	statuses map[int]int64
	errors   map[string]int64
	verdicts [numVerdicts]int64
}

// robustness is a stage's dirty requests by kind.
type robustness map[string]*dirtyTally

func (r robustness) add(e *event) {
	t := r[e.name]
	if t == nil {
		name := e.name
		if len(r) >= MaxDirtyKinds {
			name = OtherDirtyKind
			t = r[name]
		}
		if t == nil {
			t = &dirtyTally{statuses: map[int]int64{}, errors: map[string]int64{}}
			r[name] = t
		}
	}
	t.statuses[e.status]++
	if e.class != "" {
		t.errors[e.class]++
	}
	t.verdicts[e.verdict]++
}

// counts copies the verdict counts of every kind, for a snapshot.
func (r robustness) counts() map[string][numVerdicts]int64 {
	out := make(map[string][numVerdicts]int64, len(r))
	for name, t := range r {
		out[name] = t.verdicts
	}
	return out
}

// summary renders the kinds; nil when the stage had no dirty request.
func (r robustness) summary() map[string]RobustnessSummary {
	if len(r) == 0 {
		return nil
	}
	out := make(map[string]RobustnessSummary, len(r))
	for name, t := range r {
		rs := RobustnessSummary{Statuses: maps.Clone(t.statuses), Errors: maps.Clone(t.errors)}
		rs.Handled, rs.Defects = t.verdicts[vHandled], t.verdicts[vDefect]
		rs.Accepted, rs.Canceled = t.verdicts[vAccepted], t.verdicts[vCanceled]
		rs.Count = rs.Handled + rs.Defects + rs.Accepted + rs.Canceled
		rs.Verdict = rs.overall()
		out[name] = rs
	}
	return out
}

// overall is the kind's verdict from its counts.
func (rs *RobustnessSummary) overall() string {
	switch {
	case rs.Defects > 0:
		return engine.VerdictDefect
	case rs.Accepted > 0:
		return engine.VerdictAccepted
	case rs.Handled > 0:
		return engine.VerdictHandled
	case rs.Canceled > 0:
		return engine.VerdictCanceled
	}
	return ""
}

// add merges o into rs, recomputing the verdict.
func (rs *RobustnessSummary) add(o *RobustnessSummary) {
	rs.Count += o.Count
	rs.Handled += o.Handled
	rs.Defects += o.Defects
	rs.Accepted += o.Accepted
	rs.Canceled += o.Canceled
	for code, n := range o.Statuses {
		rs.Statuses[code] += n
	}
	for class, n := range o.Errors {
		rs.Errors[class] += n
	}
	rs.Verdict = rs.overall()
}

// MergeRobustness totals the stages' robustness tables by kind, as
// Summary.Robustness holds them; nil when no stage had a dirty request.
// The inputs are not modified.
func MergeRobustness(stages []StageSummary) map[string]RobustnessSummary {
	var out map[string]RobustnessSummary
	for i := range stages {
		for name, rs := range stages[i].Robustness {
			if out == nil {
				out = map[string]RobustnessSummary{}
			}
			total, ok := out[name]
			if !ok {
				total = RobustnessSummary{Statuses: map[int]int64{}, Errors: map[string]int64{}}
			}
			total.add(&rs)
			out[name] = total
		}
	}
	return out
}

// DefectKinds returns, sorted, the kinds of a robustness table whose
// verdict is a defect.
func DefectKinds(r map[string]RobustnessSummary) []string {
	var kinds []string
	for name, rs := range r {
		if rs.Defects > 0 {
			kinds = append(kinds, name)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// isDirtyMetric reports whether id is one of the dirty.* counters, which a
// "kind" filter selects without Track.
func isDirtyMetric(id metricID) bool {
	return id == mDirtyRequests || id == mDirtyDefects || id == mDirtyHandled || id == mDirtyAccepted
}

// dirtyCell is a dirty.* counter over one kind's verdict counts: n is the
// kind's requests, sum those the metric counts.
func dirtyCell(id metricID, v [numVerdicts]int64) cellSnap {
	n := v[vHandled] + v[vDefect] + v[vAccepted] + v[vCanceled]
	c := cellSnap{kind: kindCounter, n: n, sum: float64(n)}
	switch id {
	case mDirtyDefects:
		c.sum = float64(v[vDefect])
	case mDirtyHandled:
		c.sum = float64(v[vHandled])
	case mDirtyAccepted:
		c.sum = float64(v[vAccepted])
	}
	return c
}

// feedDirty adds a dirty request to the stage's dirty.* counters.
func feedDirty(cells *[numBuiltin]cell, v verdict) {
	cells[mDirtyRequests].add(1)
	cells[mDirtyDefects].add(b2f(v == vDefect))
	cells[mDirtyHandled].add(b2f(v == vHandled))
	cells[mDirtyAccepted].add(b2f(v == vAccepted))
}
