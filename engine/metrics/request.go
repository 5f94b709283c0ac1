package metrics

import (
	"errors"
	"fmt"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// answer serves a call that needs the aggregates; the reply channels are
// buffered, so the aggregator never waits for the caller.
func (a *aggregator) answer(r *request) {
	switch r.op {
	case reqSnapshot:
		r.snapshot <- a.snapshot(runclock.Now(), false)
	case reqDeclare:
		r.err <- a.declare(r.defs)
	case reqTrack:
		r.err <- a.track(r.metric, r.filter)
	}
}

// lookup returns a metric's kind, and its ID when it is built in.
func (a *aggregator) lookup(metric string) (k kind, id metricID, builtin, ok bool) {
	if id, ok := builtinIDs[metric]; ok {
		return builtins[id].kind, id, true, true
	}
	k, ok = a.kinds[metric]
	return k, 0, false, ok
}

// track registers a view of metric over the samples matching f. Filters an
// intrinsic key answers need none; tracking the same pair twice is a no-op.
func (a *aggregator) track(metric string, f Filter) error {
	k, id, builtin, ok := a.lookup(metric)
	if !ok {
		return fmt.Errorf("metrics: unknown metric %q", metric)
	}
	if _, empty := f[""]; empty {
		return fmt.Errorf("metrics: %s: empty tag name in filter", metric)
	}
	if !needsView(metric, f) {
		return nil
	}
	if builtin && !builtins[id].tagged {
		only := "scenario and stage"
		if isDirtyMetric(id) {
			only = "scenario, stage and " + DirtyKindTag
		}
		return fmt.Errorf("metrics: %s carries no tags, only %s", metric, only)
	}
	key := viewKey(metric, f)
	if _, dup := a.views[key]; dup {
		return nil
	}
	g := valueGeo
	if builtin {
		g = id.geo()
	}
	v := newView(key, metric, id, k, g, f)
	a.views[key] = v
	switch {
	case builtin && isTaskMetric(id):
		a.taskViews = append(a.taskViews, v)
	case builtin && metric != checksName:
		a.sampleViews = append(a.sampleViews, v)
	default:
		a.metricViews[metric] = append(a.metricViews[metric], v)
	}
	return nil
}

// declare registers custom metrics ahead of their first sample, so that
// they can be tracked and queried (with no data) from the start.
func (a *aggregator) declare(defs []plan.MetricDef) error {
	var errs []error
	for _, d := range defs {
		k := parseKind(d.Kind)
		prev, known := a.kinds[d.Name]
		_, builtin := builtinIDs[d.Name]
		switch {
		case d.Name == "":
			errs = append(errs, errors.New("metrics: declare: empty metric name"))
		case builtin:
			errs = append(errs, fmt.Errorf("metrics: declare %q: the name of a built-in metric", d.Name))
		case k == kindNone:
			errs = append(errs, fmt.Errorf("metrics: declare %q: unknown kind %q", d.Name, d.Kind))
		case known && prev != k:
			errs = append(errs, fmt.Errorf("metrics: declare %q as %s: it is a %s", d.Name, k, prev))
		default:
			a.kinds[d.Name] = k
		}
	}
	return errors.Join(errs...)
}
