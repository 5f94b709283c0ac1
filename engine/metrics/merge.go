package metrics

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// ErrMerge is wrapped by every error Merge and MergeDists return.
var ErrMerge = errors.New("metrics: merge")

// Part is one collector's result, as a segment's result file holds it:
// its Summary (Collector.Close) and its State (Collector.State).
type Part struct {
	Summary *Summary
	State   *State
}

// Merge joins the results of collectors that each received a disjoint
// share of one run's events (the segments of a plan, --segment i/n) into
// what one collector would have made of them all. Counts add up,
// histograms merge, and every percentile, confidence interval, rate and
// verdict is computed again by the collector's own code, over each
// stage's merged window: the earliest start to the latest end. Stages
// match by scenario, stage and index; a part may lack some. The Snapshot
// answers Query as the single collector's final snapshot would, tracked
// views included, for thresholds evaluated again.
//
// Exact, as the single collector: counts, minima, maxima, percentiles
// and means of the stages, views and custom metrics. To a microsecond: the
// means of ByTag, whose parts keep only their Dists. A stage's VUs and
// TargetRate are the parts' sums (each part runs its share of the load),
// PlannedS and LateS their largest, and it is Complete only if every part
// that ran it completed it. The time series lays each part's seconds onto
// the earliest origin, to the nearest second. Script errors keep the
// first part's first message as First: the parts do not say which came
// first in time. StageSummary.Client is left nil for the caller. The
// parts are not modified.
//
// The Snapshot comes from the States alone, the tables that only
// summaries hold (errors, token sources, tags, robustness, the series'
// counts) from the Summaries. Errors wrap ErrMerge: no parts, a part
// without its Summary or State, a State that does not match its Summary,
// corrupt histograms, a metric of different kinds in two parts, parts
// that tracked different views, or that disagree on having an SLO.
func Merge(parts []Part) (*Summary, *Snapshot, error) {
	m, err := newMerger(parts)
	if err != nil {
		return nil, nil, err
	}
	snap, aggs := m.stages()
	if snap.views, err = m.views(); err != nil {
		return nil, nil, err
	}
	a := newAggregator()
	a.order = aggs
	if a.series, err = mergeSeries(parts); err != nil {
		return nil, nil, err
	}
	a.scriptErrs, a.metricErrs = m.tallies()
	sum := a.summary(snap)
	if err := m.tags(sum.Stages); err != nil {
		return nil, nil, err
	}
	for _, p := range parts {
		w := &p.Summary.Warmup
		sum.Warmup.Requests += w.Requests
		sum.Warmup.Failed += w.Failed
		sum.Warmup.IterationErrors += w.IterationErrors
	}
	sum.SLOSet = parts[0].Summary.SLOSet
	return sum, snap, nil
}

// merger holds the parts, checked and decoded, while Merge joins them.
type merger struct {
	parts  []Part
	kinds  map[string]kind
	snaps  [][]stageSnap // per part, one for one with its Summary.Stages
	groups []*group      // the merged stages, in order
}

// newMerger checks and decodes the parts, and matches their stages.
func newMerger(parts []Part) (*merger, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no parts", ErrMerge)
	}
	for i, p := range parts {
		switch {
		case p.Summary == nil:
			return nil, fmt.Errorf("%w: part %d has no summary", ErrMerge, i)
		case p.State == nil:
			return nil, fmt.Errorf("%w: part %d has no state (a result written without one cannot be merged exactly)", ErrMerge, i)
		case p.Summary.SLOSet != parts[0].Summary.SLOSet:
			return nil, fmt.Errorf("%w: part %d has SLOSet %v but part 0 %v: they did not judge goodput alike", ErrMerge, i, p.Summary.SLOSet, !p.Summary.SLOSet)
		}
	}
	m := &merger{parts: parts}
	var err error
	if m.kinds, err = mergeKinds(parts); err != nil {
		return nil, err
	}
	m.snaps = make([][]stageSnap, len(parts))
	for i, p := range parts {
		if m.snaps[i], err = decodeStages(p, m.kinds); err != nil {
			return nil, fmt.Errorf("%w: part %d: %w", ErrMerge, i, err)
		}
	}
	m.groups = m.match()
	return m, nil
}

// mergeKinds joins the parts' custom metric kinds; a metric must have one
// kind in every part that knows it.
func mergeKinds(parts []Part) (map[string]kind, error) {
	out := map[string]kind{}
	from := map[string]int{} // the first part that named each metric
	for i, p := range parts {
		for name, s := range p.State.Kinds {
			k := parseKind(s)
			if _, builtin := builtinIDs[name]; builtin || k == kindNone {
				return nil, fmt.Errorf("%w: part %d: custom metric %q of kind %q", ErrMerge, i, name, s)
			}
			if prev, ok := out[name]; ok && prev != k {
				return nil, fmt.Errorf("%w: metric %q is a %s in part %d but a %s in part %d", ErrMerge, name, prev, from[name], k, i)
			} else if !ok {
				out[name], from[name] = k, i
			}
		}
	}
	return out, nil
}

// decodeStages rebuilds a part's stages, one for each of its Summary's,
// matched by identity: a result file may list its stages in an order of
// its own.
func decodeStages(p Part, kinds map[string]kind) ([]stageSnap, error) {
	states := make(map[stageID]*StageState, len(p.State.Stages))
	for i := range p.State.Stages {
		s := &p.State.Stages[i]
		id := stageID{s.Scenario, s.Stage, s.Index}
		if _, dup := states[id]; dup {
			return nil, fmt.Errorf("the state has stage %s twice", id)
		}
		states[id] = s
	}
	if len(states) != len(p.Summary.Stages) {
		return nil, fmt.Errorf("the state has %d stages, the summary %d", len(states), len(p.Summary.Stages))
	}
	out := make([]stageSnap, len(p.Summary.Stages))
	for i := range p.Summary.Stages {
		ss := &p.Summary.Stages[i]
		id := stageID{ss.Scenario, ss.Stage, ss.Index}
		s, ok := states[id]
		if !ok {
			return nil, fmt.Errorf("the summary's stage %s is not in the state", id)
		}
		var err error
		if out[i], err = s.snap(kinds); err != nil {
			return nil, fmt.Errorf("stage %s/%s: %w", s.Scenario, s.Stage, err)
		}
	}
	return out, nil
}

// stageID is what identifies a stage across parts.
type stageID struct {
	scenario, stage string
	index           int
}

func (id stageID) String() string {
	return fmt.Sprintf("%s/%s (index %d)", id.scenario, id.stage, id.index)
}

// group is one merged stage: the parts' stages of its identity.
type group struct {
	id    stageID
	parts []int // the parts' indexes
	snaps []*stageSnap
	sums  []*StageSummary
}

// match groups the parts' stages by identity, in an order that keeps
// each part's (the order the collector saw them start): a stage that
// earlier parts lack goes right after the one it follows in its part.
func (m *merger) match() []*group {
	var order []*group
	byID := map[stageID]*group{}
	for p, part := range m.parts {
		next := 0 // where this part's next new stage goes
		for i := range part.Summary.Stages {
			st := &part.Summary.Stages[i]
			id := stageID{st.Scenario, st.Stage, st.Index}
			g, ok := byID[id]
			if !ok {
				g = &group{id: id}
				byID[id] = g
				order = slices.Insert(order, next, g)
			}
			next = slices.Index(order, g) + 1
			g.parts = append(g.parts, p)
			g.snaps = append(g.snaps, &m.snaps[p][i])
			g.sums = append(g.sums, st)
		}
	}
	return order
}

// stages merges every group into the snapshot's stages, and rebuilds
// from the summaries the stage aggregates that render them.
func (m *merger) stages() (*Snapshot, []*stageAgg) {
	snap := &Snapshot{stages: make([]stageSnap, 0, len(m.groups)), kinds: m.kinds}
	aggs := make([]*stageAgg, 0, len(m.groups))
	for _, g := range m.groups {
		ss := g.snap(m.kinds)
		if ss.end.After(snap.at) {
			snap.at = ss.end
		}
		snap.stages = append(snap.stages, ss)
		aggs = append(aggs, g.agg())
	}
	return snap, aggs
}

// views merges the tracked views, which every part must have alike, as
// each ran the same script and so made the same Track calls.
func (m *merger) views() (map[string]cellSnap, error) {
	byKey := make([]map[string]*ViewState, len(m.parts))
	for i, p := range m.parts {
		byKey[i] = make(map[string]*ViewState, len(p.State.Views))
		for j := range p.State.Views {
			v := &p.State.Views[j]
			byKey[i][viewKey(v.Metric, v.Filter)] = v
		}
	}
	for i := range byKey {
		if key, ok := missing(byKey[0], byKey[i]); ok {
			return nil, fmt.Errorf("%w: the parts tracked different views: %s is in part 0 but not part %d", ErrMerge, key, i)
		}
		if key, ok := missing(byKey[i], byKey[0]); ok {
			return nil, fmt.Errorf("%w: the parts tracked different views: %s is in part %d but not part 0", ErrMerge, key, i)
		}
	}
	out := make(map[string]cellSnap, len(byKey[0]))
	for key, v := range byKey[0] {
		c, err := m.view(key, v.Metric, byKey)
		if err != nil {
			return nil, err
		}
		out[key] = c
	}
	return out, nil
}

// missing returns a key of a that b lacks, the smallest for a stable message.
func missing(a, b map[string]*ViewState) (string, bool) {
	for _, key := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[key]; !ok {
			return key, true
		}
	}
	return "", false
}

// view merges one tracked view across the parts.
func (m *merger) view(key, metric string, byKey []map[string]*ViewState) (cellSnap, error) {
	k, builtin := m.kindOf(metric)
	if k == kindNone {
		return cellSnap{}, fmt.Errorf("%w: view %s: unknown metric %q", ErrMerge, key, metric)
	}
	g := valueGeo
	if builtin {
		g = builtinIDs[metric].geo()
	}
	cells := make([]cellSnap, len(byKey))
	for i := range byKey {
		c, err := byKey[i][key].Cell.cell(k, g)
		if err != nil {
			return cellSnap{}, fmt.Errorf("%w: part %d: view %s: %w", ErrMerge, i, key, err)
		}
		cells[i] = c
	}
	return mergeCells(k, cells), nil
}

// kindOf returns a metric's kind, and whether it is built in.
func (m *merger) kindOf(metric string) (kind, bool) {
	if id, ok := builtinIDs[metric]; ok {
		return builtins[id].kind, true
	}
	return m.kinds[metric], false
}

// tallies merges the parts' script and metric error messages.
func (m *merger) tallies() (scripts, metrics tally) {
	lists := make([][]ScriptError, 0, len(m.parts))
	for _, p := range m.parts {
		lists = append(lists, p.Summary.ScriptErrors)
	}
	scripts = mergeTally(lists)
	lists = lists[:0]
	for _, p := range m.parts {
		var list []ScriptError
		for _, e := range p.Summary.MetricErrors {
			list = append(list, ScriptError{Message: e.Message, Count: e.Count})
		}
		lists = append(lists, list)
	}
	return scripts, mergeTally(lists)
}

// tags merges the groups' tag, endpoint and task name breakdowns into
// the rendered stages.
func (m *merger) tags(stages []StageSummary) error {
	for i, g := range m.groups {
		byTag, overflow, err := g.tags()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMerge, err)
		}
		stages[i].ByTag, stages[i].TagKeysOverflow = byTag, overflow
		if stages[i].ByAPI, err = g.apis(); err != nil {
			return fmt.Errorf("%w: %w", ErrMerge, err)
		}
		if stages[i].ByTarget, err = g.targets(); err != nil {
			return fmt.Errorf("%w: %w", ErrMerge, err)
		}
		if t := stages[i].Tasks; t != nil {
			if t.ByName, err = g.taskNames(); err != nil {
				return fmt.Errorf("%w: %w", ErrMerge, err)
			}
		}
	}
	return nil
}

// seconds converts a figure in seconds back to the duration it came from.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
