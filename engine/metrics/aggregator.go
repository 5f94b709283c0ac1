package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/llmload/llmload/engine/runclock"
)

// MaxScriptErrors caps the distinct script error messages kept, and the
// distinct metric error messages; further distinct messages are counted
// together under one entry.
const MaxScriptErrors = 50

type stageKey struct{ scenario, stage string }

// aggregator owns every stage, view and histogram; only its goroutine
// touches it.
type aggregator struct {
	stages     map[stageKey]*stageAgg
	order      []*stageAgg
	last       *stageAgg // consecutive samples usually share a stage
	starts     int
	scriptErrs tally
	metricErrs tally
	series     series
	kinds      map[string]kind // custom metrics: declared, or first seen

	views       map[string]*view   // by viewKey
	sampleViews []*view            // views of built-ins fed by samples
	taskViews   []*view            // views of the task built-ins, fed by tasks
	metricViews map[string][]*view // views of checks and custom metrics, by name
}

func newAggregator() *aggregator {
	return &aggregator{
		stages: map[stageKey]*stageAgg{}, scriptErrs: newTally(), metricErrs: newTally(),
		kinds: map[string]kind{}, views: map[string]*view{}, metricViews: map[string][]*view{},
	}
}

// result is what the aggregator hands to Close: the summary, and what
// State derives its answer from.
type result struct {
	summary *Summary
	final   *Snapshot
	series  *series
	views   map[string]*view
}

// aggregate consumes events until the channel closes, then summarises.
func aggregate(events <-chan event) result {
	a := newAggregator()
	for e := range events {
		a.add(&e)
	}
	closedAt := runclock.Now()
	a.sortStages()
	final := a.snapshot(closedAt, true)
	return result{summary: a.summary(final), final: final, series: &a.series, views: a.views}
}

func (a *aggregator) add(e *event) {
	switch e.kind {
	case evRequest:
		a.answer(e.req)
		return
	case evMetric:
		a.metric(e)
		return
	}
	s := a.stage(e.scenario, e.stage)
	switch e.kind {
	case evSample:
		e.tail = s.tailOf(e)
		s.sample(e)
		a.series.sample(e)
		for _, v := range a.sampleViews {
			if v.match(e) {
				feed(v.id, &v.c, e)
			}
		}
	case evParts:
		e.tail = s.tailOf(e)
		for _, id := range partMetrics {
			feed(id, &s.cells[id], e)
		}
	case evTask:
		e.tail = s.tailOf(e)
		s.task(e)
		for _, v := range a.taskViews {
			if v.match(e) {
				feed(v.id, &v.c, e)
			}
		}
	case evDirty:
		s.dirtySample(e)
	case evIterStart:
		s.iteration(e)
		a.series.iteration(e)
	case evDrop:
		s.drop(e)
		a.series.drop(e)
	case evIterErr:
		s.cells[mIterErrors].add(1)
		a.scriptErrs.add(e.name)
	case evStageStart:
		a.series.mark(e.at)
		if !s.started {
			a.starts++
			s.start, s.started, s.startSeq = e.at, true, a.starts
		}
		s.index, s.vus, s.rate, s.planned = e.index, e.target, e.value, e.planned
		s.late = max(s.late, e.late)
	case evStageEnd:
		a.series.mark(e.at)
		s.end, s.ended, s.cut = e.at, true, e.cut
		s.index, s.vus, s.rate, s.planned = e.index, e.target, e.value, e.planned
		s.late = max(s.late, e.late)
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

// metric adds a check or custom metric sample, or counts why it cannot.
func (a *aggregator) metric(e *event) {
	k, ok := a.metricKind(e)
	if !ok {
		return
	}
	s := a.stage(e.scenario, e.stage)
	if e.name == checksName {
		s.check(e.tags["check"], e.value)
	} else {
		s.metric(e.name, k, e.value)
	}
	for _, v := range a.metricViews[e.name] {
		if v.match(e) {
			v.c.add(e.value)
		}
	}
}

// metricKind settles a metric sample's kind: the first kind a custom
// name is declared or used with wins, and samples that disagree are
// counted as metric errors rather than mixed in.
func (a *aggregator) metricKind(e *event) (kind, bool) {
	got := parseKind(e.class)
	fail := func(format string, args ...any) (kind, bool) {
		a.metricErrs.add(fmt.Sprintf("metric %q: ", e.name) + fmt.Sprintf(format, args...))
		return kindNone, false
	}
	if math.IsNaN(e.value) || math.IsInf(e.value, 0) {
		return fail("value %v is not a finite number", e.value)
	}
	if e.name == checksName {
		if e.class != "" && got != kindRate {
			return fail("kind %q, but checks is a rate", e.class)
		}
		return kindRate, true
	}
	if _, builtin := builtinIDs[e.name]; builtin {
		return fail("the name of a built-in metric")
	}
	if e.name == "" {
		return fail("empty name")
	}
	k, known := a.kinds[e.name]
	switch {
	case !known && got == kindNone:
		return fail("unknown kind %q", e.class)
	case known && got != k:
		return fail("used as %s, but it is a %s", cmp.Or(e.class, `""`), k)
	case got == kindCounter && math.Abs(e.value) > maxCounterValue:
		return fail("value %v is beyond ±%g", e.value, maxCounterValue)
	}
	if !known {
		a.kinds[e.name] = got
	}
	return got, true
}

// maxCounterValue bounds one counter increment, so that sums and rates stay
// finite numbers that JSON can carry. (Trends clamp instead, rates only
// look at zero or not.)
const maxCounterValue = 1e15

func (a *aggregator) sortStages() {
	// Stages in StageStarted order; stages only ever named by samples go
	// last, in order of first appearance (SortStable keeps it).
	slices.SortStableFunc(a.order, func(x, y *stageAgg) int {
		return cmp.Compare(x.orderKey(), y.orderKey())
	})
}

// summary renders the final snapshot; a.order and final.stages agree.
func (a *aggregator) summary(final *Snapshot) *Summary {
	sum := &Summary{
		Stages:       make([]StageSummary, 0, len(a.order)),
		Checks:       final.checks(),
		Metrics:      final.metricSummaries(),
		ScriptErrors: a.scriptErrs.list(),
		MetricErrors: []MetricError{},
		TimeSeries:   a.series.points(),
	}
	for i, s := range a.order {
		sum.Stages = append(sum.Stages, s.summary(&final.stages[i]))
	}
	sum.Robustness = MergeRobustness(sum.Stages)
	prefixHitShares(sum.Stages)
	for _, e := range a.metricErrs.list() {
		sum.MetricErrors = append(sum.MetricErrors, MetricError{Message: e.Message, Count: e.Count})
	}
	return sum
}
