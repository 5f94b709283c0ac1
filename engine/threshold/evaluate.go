package threshold

import (
	"fmt"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// Source answers metric queries; *metrics.Snapshot is one.
type Source interface {
	Value(q metrics.Query) (v float64, n int64, err error)
}

// Outcome is one condition's verdict.
type Outcome struct {
	Condition string  `json:"condition"`
	Agg       string  `json:"agg"`
	Observed  float64 `json:"observed"`
	Samples   int64   `json:"samples"`
	NoData    bool    `json:"no_data,omitempty"`
	Passed    bool    `json:"passed"`
	Error     string  `json:"error,omitempty"`
}

// Result is one threshold's verdict: it passes when every condition does.
type Result struct {
	Expr        string    `json:"expr"`
	Kind        string    `json:"kind"`
	AbortOnFail bool      `json:"abort_on_fail,omitempty"`
	Aborted     bool      `json:"aborted,omitempty"` // this threshold stopped the run
	Passed      bool      `json:"passed"`
	Outcomes    []Outcome `json:"outcomes"`
}

// Evaluate checks every condition against src. A trend or rate with no
// samples fails: a gate that saw nothing must not pass silently. A counter
// with no events is 0. A capacity threshold is judged on src's
// Capacities, so it fails unless src is a CapacitySource.
func (t *Threshold) Evaluate(src Source) Result {
	if t.Kind == KindCapacity {
		return t.evaluateCapacity(src)
	}
	r := Result{Expr: t.Expr, Kind: t.Kind, AbortOnFail: t.AbortOnFail, Passed: true}
	for _, c := range t.Conditions {
		o := Outcome{Condition: c.Text, Agg: c.Agg}
		v, n, err := src.Value(t.Query(c))
		o.Observed, o.Samples = v, n
		switch {
		case err != nil:
			o.Error = err.Error()
		case n == 0 && t.Kind != engine.MetricCounter && c.Agg != metrics.AggCount:
			o.NoData = true
		default:
			o.Passed = compare(v, c.Op, c.Value)
		}
		r.Passed = r.Passed && o.Passed
		r.Outcomes = append(r.Outcomes, o)
	}
	return r
}

func compare(v float64, op string, bound float64) bool {
	switch op {
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	case ">=":
		return v >= bound
	case "==":
		return v == bound
	case "!=":
		return v != bound
	}
	return false
}

// Set is a run's thresholds.
type Set []*Threshold

// Evaluate returns every threshold's result and whether all passed.
func (s Set) Evaluate(src Source) ([]Result, bool) {
	results := make([]Result, len(s))
	ok := true
	for i, t := range s {
		results[i] = t.Evaluate(src)
		ok = ok && results[i].Passed
	}
	return results, ok
}

// ShouldAbort evaluates the abort_on_fail thresholds whose delay has passed
// after elapsed time under load, and returns the first that failed on real
// data. No data never aborts: a stage may simply not have started yet.
func (s Set) ShouldAbort(src Source, elapsed time.Duration) (*Threshold, bool) {
	for _, t := range s {
		if !t.AbortOnFail || elapsed < t.DelayAbortEval {
			continue
		}
		r := t.Evaluate(src)
		for _, o := range r.Outcomes {
			if !o.Passed && !o.NoData && o.Error == "" {
				return t, true
			}
		}
	}
	return nil, false
}

// Describe renders a failed outcome for a message, e.g. "ttft.p99 < 1s: observed 1.42s".
func Describe(r Result, o Outcome) string {
	switch {
	case o.Error != "":
		return fmt.Sprintf("%s %s: %s", r.Expr, o.Condition, o.Error)
	case o.NoData:
		return fmt.Sprintf("%s %s: no data", r.Expr, o.Condition)
	}
	return fmt.Sprintf("%s %s: observed %s", r.Expr, o.Condition, FormatValue(r.Kind, o.Agg, o.Observed))
}

// FormatValue renders an observed value in its metric's unit.
func FormatValue(kind, agg string, v float64) string {
	switch {
	case kind == KindCapacity && agg == plan.CapacityVUs:
		return fmt.Sprintf("%.4g VUs", v)
	case kind == KindCapacity:
		return fmt.Sprintf("%.4g req/s", v)
	case agg == metrics.AggCount:
		return fmt.Sprintf("%.0f", v)
	case kind == engine.MetricCounter && agg == metrics.AggRate:
		return fmt.Sprintf("%.4g/s", v)
	case kind == engine.MetricTrend:
		if v >= 1000 {
			return fmt.Sprintf("%.3gs", v/1000)
		}
		return fmt.Sprintf("%.4gms", v)
	case kind == engine.MetricRate:
		return fmt.Sprintf("%.4g%%", v*100)
	}
	return fmt.Sprintf("%.6g", v)
}
