// Package threshold parses and evaluates pass/fail gates over a run's
// metrics, written as in k6: options.thresholds = { ["ttft{stage:c8}.p99"]
// = "< 800ms", checks = "rate > 0.99" }. A failed threshold fails the run
// (exit code 99); one marked abort_on_fail stops it early.
package threshold

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// Known is what a threshold may refer to.
type Known struct {
	Metrics map[string]string   // metric name → engine.Metric* kind
	Stages  map[string][]string // scenario → its stage names
	// Capacity maps each capacity scenario to the load it searches
	// (engine.CapacityRate or CapacityVUs); nil: capacity thresholds are
	// not checked against the plan.
	Capacity map[string]string
	// Targets are the names of options.targets; nil with one target,
	// where a target filter matches a user tag of that name.
	Targets []string
}

// Threshold is one parsed entry of options.thresholds. Immutable.
type Threshold struct {
	Expr           string // as written
	Metric         string
	Kind           string
	Filter         metrics.Filter
	Conditions     []Condition
	AbortOnFail    bool
	DelayAbortEval time.Duration
}

// Condition is one comparison: aggregation, operator, bound.
type Condition struct {
	Text  string // as written
	Agg   string // a metrics.Agg* constant
	P     float64
	Op    string
	Value float64 // in the metric's unit: ms for trends, a fraction for rates
}

// Parse validates spec against known and returns the threshold. Errors
// name the part at fault and list what would be valid.
func Parse(spec plan.ThresholdSpec, known Known) (*Threshold, error) {
	if load := capacityLoad(spec.Expr); load != "" {
		return parseCapacity(spec, load, known)
	}
	name, filter, keyAgg, err := splitExpr(spec.Expr, known.Metrics)
	if err != nil {
		return nil, err
	}
	t := &Threshold{
		Expr: spec.Expr, Metric: name, Kind: known.Metrics[name], Filter: filter,
		AbortOnFail: spec.AbortOnFail, DelayAbortEval: spec.DelayAbortEval,
	}
	if err := checkFilter(filter, known.Stages); err != nil {
		return nil, err
	}
	if name, ok := filter[metrics.TargetTag]; ok && known.Targets != nil {
		if err := plan.CheckTargetName(known.Targets, name); err != nil {
			return nil, fmt.Errorf("tag filter: %w", err)
		}
	}
	if len(spec.Conditions) == 0 {
		return nil, fmt.Errorf("no condition (write e.g. %q)", "< 1s")
	}
	for _, text := range spec.Conditions {
		c, err := parseCondition(text, keyAgg, t.Kind)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", text, err)
		}
		t.Conditions = append(t.Conditions, c)
	}
	return t, nil
}

// Query is what one condition asks of the metrics.
func (t *Threshold) Query(c Condition) metrics.Query {
	return metrics.Query{Metric: t.Metric, Filter: t.Filter, Agg: c.Agg, P: c.P}
}

// NeedsTrack reports whether the filter names tags other than scenario and
// stage, which the collector must track from the first sample.
func (t *Threshold) NeedsTrack() bool {
	for k := range t.Filter {
		if k != "scenario" && k != "stage" {
			return true
		}
	}
	return false
}

// String renders the threshold as it would be written.
func (t *Threshold) String() string {
	conds := make([]string, len(t.Conditions))
	for i, c := range t.Conditions {
		conds[i] = c.Text
	}
	s := t.Expr + " " + strings.Join(conds, ", ")
	if t.AbortOnFail {
		s += " (abort on fail"
		if t.DelayAbortEval > 0 {
			s += " after " + t.DelayAbortEval.String()
		}
		s += ")"
	}
	return s
}
