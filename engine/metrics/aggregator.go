package metrics

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// MaxScriptErrors caps the distinct script error messages kept; further
// distinct messages are counted together under one entry.
const MaxScriptErrors = 50

type stageKey struct{ scenario, stage string }

// aggregator owns every stage and histogram; only its goroutine touches it.
type aggregator struct {
	stages     map[stageKey]*stageAgg
	order      []*stageAgg
	last       *stageAgg // consecutive samples usually share a stage
	starts     int
	scriptErrs map[string]int64
	otherErrs  int64
}

// aggregate consumes events until the channel closes, then summarises.
func aggregate(events <-chan event) *Summary {
	a := &aggregator{stages: map[stageKey]*stageAgg{}, scriptErrs: map[string]int64{}}
	for e := range events {
		a.add(&e)
	}
	return a.summary(time.Now())
}

func (a *aggregator) add(e *event) {
	s := a.stage(e.scenario, e.stage)
	switch e.kind {
	case evSample:
		s.sample(e)
	case evIterErr:
		s.iterErrs++
		a.scriptError(e.errMsg)
	case evStageStart:
		if !s.started {
			a.starts++
			s.start, s.started, s.startSeq = e.at, true, a.starts
		}
		s.index, s.vus = e.index, e.target
	case evStageEnd:
		s.end, s.ended = e.at, true
		s.index, s.vus = e.index, e.target
	}
}

// stage finds or creates the stage named in a label. Samples may name a
// stage before its StageStarted arrives (from another goroutine), so any
// event creates it.
func (a *aggregator) stage(scenario, stage string) *stageAgg {
	if l := a.last; l != nil && l.key.scenario == scenario && l.key.stage == stage {
		return l
	}
	k := stageKey{scenario, stage}
	s, ok := a.stages[k]
	if !ok {
		s = newStageAgg(k)
		a.stages[k] = s
		a.order = append(a.order, s)
	}
	a.last = s
	return s
}

func (a *aggregator) scriptError(msg string) {
	if _, ok := a.scriptErrs[msg]; ok || len(a.scriptErrs) < MaxScriptErrors {
		a.scriptErrs[msg]++
		return
	}
	a.otherErrs++
}

func (a *aggregator) summary(closedAt time.Time) *Summary {
	// Stages in StageStarted order; stages only ever named by samples go
	// last, in order of first appearance (SortStable keeps it).
	slices.SortStableFunc(a.order, func(x, y *stageAgg) int {
		return cmp.Compare(x.orderKey(), y.orderKey())
	})
	sum := &Summary{Stages: make([]StageSummary, 0, len(a.order))}
	for _, s := range a.order {
		sum.Stages = append(sum.Stages, s.summary(closedAt))
	}
	sum.ScriptErrors = a.scriptErrorList()
	return sum
}

func (a *aggregator) scriptErrorList() []ScriptError {
	list := make([]ScriptError, 0, len(a.scriptErrs)+1)
	for m, n := range a.scriptErrs {
		list = append(list, ScriptError{Message: m, Count: n})
	}
	slices.SortFunc(list, func(x, y ScriptError) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Message, y.Message))
	})
	if a.otherErrs > 0 {
		list = append(list, ScriptError{
			Message: fmt.Sprintf("(other messages beyond the first %d distinct)", MaxScriptErrors),
			Count:   a.otherErrs,
		})
	}
	return list
}
