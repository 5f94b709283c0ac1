package metrics

import (
	"fmt"
	"maps"
	"sync"
	"time"
)

// Snapshot is a consistent copy of everything a Query can ask, as of one
// moment: it holds every event sent before Collector.Snapshot was called
// and none after. It is immutable and safe for concurrent use.
type Snapshot struct {
	at     time.Time
	stages []stageSnap
	kinds  map[string]kind     // custom metrics
	views  map[string]cellSnap // tracked views, by viewKey

	// merged caches stage merges by viewKey, because merging histograms
	// costs far more than a lookup and thresholds often ask several
	// aggregations of one metric.
	mu     sync.Mutex
	merged map[string]cellSnap
}

// stageSnap is one stage's part of a Snapshot.
type stageSnap struct {
	scenario, stage string
	index           int
	start, end      time.Time
	timed           bool // the stage has a window (see stageAgg.window)
	cells           [numBuiltin]cellSnap
	checks, custom  map[string]cellSnap
	dirty           map[string][numVerdicts]int64 // verdict counts by dirty kind
}

// snapshot copies the aggregates. Its cost grows with the number of
// stages, views and histograms changed since the previous snapshot, not
// with samples. final shares histograms instead of copying them: after
// the last event nothing changes them again.
func (a *aggregator) snapshot(now time.Time, final bool) *Snapshot {
	sn := &Snapshot{
		at:     now,
		stages: make([]stageSnap, 0, len(a.order)),
		kinds:  maps.Clone(a.kinds),
		views:  make(map[string]cellSnap, len(a.views)),
	}
	for _, s := range a.order {
		sn.stages = append(sn.stages, s.snap(now, final))
	}
	for key, v := range a.views {
		sn.views[key] = v.c.snap(final)
	}
	return sn
}

// Kind returns a metric's kind (engine.MetricTrend, MetricCounter or
// MetricRate), for built-in metrics and for custom ones declared or seen.
func (s *Snapshot) Kind(metric string) (string, bool) {
	k, ok := s.kind(metric)
	return k.String(), ok
}

func (s *Snapshot) kind(metric string) (kind, bool) {
	if id, ok := builtinIDs[metric]; ok {
		return builtins[id].kind, true
	}
	k, ok := s.kinds[metric]
	return k, ok
}

// Value answers q. n is the number of samples (or events) behind the
// value: trend values, counter events, rate evaluations; n == 0 means no
// data, and the value is 0. err when the metric is unknown, the
// aggregation does not apply to its kind, or the filter names tags that
// were not tracked.
func (s *Snapshot) Value(q Query) (v float64, n int64, err error) {
	k, ok := s.kind(q.Metric)
	if !ok {
		return 0, 0, fmt.Errorf("metrics: unknown metric %q", q.Metric)
	}
	if err := checkAgg(&q, k); err != nil {
		return 0, 0, err
	}
	c, err := s.cell(q.Metric, k, q.Filter)
	if err != nil {
		return 0, 0, err
	}
	return c.value(q.Agg, q.P, s.span(q.Filter)), c.n, nil
}

// cell gathers the metric over the filter: from a tracked view when the
// filter names tags, else by merging the matching stages.
func (s *Snapshot) cell(metric string, k kind, f Filter) (cellSnap, error) {
	if needsView(metric, f) {
		key := viewKey(metric, f)
		c, ok := s.views[key]
		if !ok {
			return cellSnap{}, fmt.Errorf("metrics: %s was not tracked: call Collector.Track before the run", key)
		}
		return c, nil
	}
	var parts []cellSnap
	for i := range s.stages {
		st := &s.stages[i]
		if !st.matches(f) {
			continue
		}
		if c, ok := st.cell(metric, f); ok {
			parts = append(parts, c)
		}
	}
	if len(parts) <= 1 {
		return mergeCells(k, parts), nil
	}
	return s.merge(viewKey(metric, f), k, parts), nil
}

// merge returns the merge of parts, computing it once per key.
func (s *Snapshot) merge(key string, k kind, parts []cellSnap) cellSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.merged[key]; ok {
		return c
	}
	c := mergeCells(k, parts)
	if s.merged == nil {
		s.merged = map[string]cellSnap{}
	}
	s.merged[key] = c
	return c
}

// span is the window of the stages f's scenario and stage select: from
// the earliest start to the latest end, which is now for a stage still
// running.
func (s *Snapshot) span(f Filter) float64 {
	var from, to time.Time
	for i := range s.stages {
		st := &s.stages[i]
		if !st.timed || !st.matches(f) {
			continue
		}
		if from.IsZero() || st.start.Before(from) {
			from = st.start
		}
		if st.end.After(to) {
			to = st.end
		}
	}
	return max(to.Sub(from).Seconds(), 0)
}

// matches applies a filter's scenario and stage; other keys are a view's.
func (st *stageSnap) matches(f Filter) bool {
	if v, ok := f["scenario"]; ok && v != st.scenario {
		return false
	}
	if v, ok := f["stage"]; ok && v != st.stage {
		return false
	}
	return true
}

func (st *stageSnap) cell(metric string, f Filter) (cellSnap, bool) {
	if id, ok := builtinIDs[metric]; ok {
		if name, one := f["check"]; one && id == mChecks {
			c, ok := st.checks[name]
			return c, ok
		}
		if name, one := f[DirtyKindTag]; one && isDirtyMetric(id) {
			v, ok := st.dirty[name]
			return dirtyCell(id, v), ok
		}
		return st.cells[id], true
	}
	c, ok := st.custom[metric]
	return c, ok
}

func (st *stageSnap) seconds() float64 { return max(st.end.Sub(st.start).Seconds(), 0) }

// checks merges every stage's checks by name, for the run-wide summary.
func (s *Snapshot) checks() []CheckSummary {
	byName := map[string][]cellSnap{}
	for i := range s.stages {
		for name, c := range s.stages[i].checks {
			byName[name] = append(byName[name], c)
		}
	}
	merged := make(map[string]cellSnap, len(byName))
	for name, cs := range byName {
		merged[name] = mergeCells(kindRate, cs)
	}
	return checkList(merged)
}

// metricSummaries merges every custom metric over all stages, including
// declared metrics that never got a value.
func (s *Snapshot) metricSummaries() map[string]MetricSummary {
	out := make(map[string]MetricSummary, len(s.kinds))
	secs := s.span(nil)
	for name, k := range s.kinds {
		var parts []cellSnap
		for i := range s.stages {
			if c, ok := s.stages[i].custom[name]; ok {
				parts = append(parts, c)
			}
		}
		out[name] = mergeCells(k, parts).summary(secs)
	}
	return out
}
