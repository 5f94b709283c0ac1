package threshold

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/plan"
)

// Capacity metrics: what a capacity search found, the highest arrival rate
// (iterations/s) or VU count at which its probes met the SLO. Only the
// run's end knows them.
const (
	MetricCapacityRate = "capacity.rate"
	MetricCapacityVUs  = "capacity.vus"
)

// KindCapacity is the Kind of a capacity threshold; its conditions' Agg is
// the search's load (plan.CapacityRate or plan.CapacityVUs).
const KindCapacity = "capacity"

// CapacitySource is a Source that also holds what the run's capacity
// searches found, as the run's end does: capacity thresholds are judged
// only against one.
type CapacitySource interface {
	Source
	Capacities() []CapacityFinding
}

// CapacityFinding is what a capacity threshold is judged on: one search's
// estimate and its bracket, as engine/capacity found them.
type CapacityFinding struct {
	Scenario string
	Load     string // plan.CapacityRate or plan.CapacityVUs
	Capacity float64
	Lo, Hi   float64
	// AtLeast: the search held at its max, so Lo is only a lower bound.
	AtLeast bool
	// Stopped says why the search ended before it converged; "" if it did.
	Stopped string
	// Probes is how many probes the search ran: the threshold's samples.
	Probes int
}

// capacityLoad returns the load a capacity metric's expression names
// (plan.CapacityRate or CapacityVUs), or "" for any other expression.
func capacityLoad(expr string) string {
	expr = strings.TrimSpace(expr)
	for metric, load := range map[string]string{MetricCapacityRate: plan.CapacityRate, MetricCapacityVUs: plan.CapacityVUs} {
		if rest, ok := strings.CutPrefix(expr, metric); ok && (rest == "" || rest[0] == '{' || rest[0] == '.') {
			return load
		}
	}
	return ""
}

// parseCapacity parses a capacity.rate or capacity.vus threshold: an
// optional {scenario:NAME} filter and plain-number conditions. It refuses
// abort_on_fail, since nothing is known to abort on before the run ends.
func parseCapacity(spec plan.ThresholdSpec, load string, known Known) (*Threshold, error) {
	metric := MetricCapacityRate
	if load == plan.CapacityVUs {
		metric = MetricCapacityVUs
	}
	if spec.AbortOnFail || spec.DelayAbortEval > 0 {
		return nil, fmt.Errorf("%s is known only when the run ends: it cannot abort_on_fail (nor take delay_abort_eval)", metric)
	}
	rest := strings.TrimPrefix(strings.TrimSpace(spec.Expr), metric)
	t := &Threshold{Expr: spec.Expr, Metric: metric, Kind: KindCapacity}
	if rest != "" {
		if rest[0] != '{' || !strings.HasSuffix(rest, "}") {
			return nil, fmt.Errorf("%q: %s takes no aggregation; write e.g. %s = \"> 40\" or %s{scenario:NAME}", spec.Expr, metric, metric, metric)
		}
		f, err := parseFilter(rest[1 : len(rest)-1])
		if err != nil {
			return nil, err
		}
		for k := range f {
			if k != "scenario" {
				return nil, fmt.Errorf("%q: %s takes only a scenario filter, not %q", spec.Expr, metric, k)
			}
		}
		t.Filter = f
	}
	if err := checkCapacityScenario(metric, load, t.Filter["scenario"], known.Capacity); err != nil {
		return nil, err
	}
	if len(spec.Conditions) == 0 {
		return nil, fmt.Errorf("no condition (write e.g. %q)", "> 40")
	}
	for _, text := range spec.Conditions {
		c, err := parseCapacityCondition(text, load)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", text, err)
		}
		t.Conditions = append(t.Conditions, c)
	}
	return t, nil
}

// checkCapacityScenario rejects a capacity threshold that no search of its
// load answers, or that several would; searches nil is not checked.
func checkCapacityScenario(metric, load, scenario string, searches map[string]string) error {
	if searches == nil {
		return nil
	}
	var names []string
	for name, l := range searches {
		if l == load {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	what := map[string]string{plan.CapacityRate: "rates", plan.CapacityVUs: "VUs"}[load]
	switch {
	case len(names) == 0:
		return fmt.Errorf("%s: no capacity scenario searches %s (executor = %q, load = %q)", metric, what, plan.ExecutorCapacity, load)
	case scenario != "" && !slices.Contains(names, scenario):
		return fmt.Errorf("%s: scenario %q is no capacity search of %s (those are: %s)", metric, scenario, what, strings.Join(names, ", "))
	case scenario == "" && len(names) > 1:
		return fmt.Errorf("%s: %d capacity scenarios search %s (%s): name one, e.g. %s{scenario:%s}", metric, len(names), what, strings.Join(names, ", "), metric, names[0])
	}
	return nil
}

// parseCapacityCondition reads "> 40": an ordering operator and a plain
// number of iterations/s or VUs.
func parseCapacityCondition(text, load string) (Condition, error) {
	m := condRE.FindStringSubmatch(text)
	if m == nil || m[1] != "" {
		return Condition{}, fmt.Errorf("want an operator and a number, e.g. %q", "> 40")
	}
	if m[2] == "==" || m[2] == "!=" {
		return Condition{}, fmt.Errorf("a capacity is an estimate within an interval: compare it with <, <=, > or >=, not %s", m[2])
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		unit := map[string]string{plan.CapacityRate: "iterations/s", plan.CapacityVUs: "VUs"}[load]
		return Condition{}, fmt.Errorf("%q: want a plain number of %s", m[3], unit)
	}
	return Condition{Text: strings.TrimSpace(text), Agg: load, Op: m[2], Value: v}, nil
}

// evaluateCapacity judges a capacity threshold on what the searches found.
func (t *Threshold) evaluateCapacity(src Source) Result {
	r := Result{Expr: t.Expr, Kind: t.Kind, Passed: true}
	o, why := t.capacityOutcome(src)
	for _, c := range t.Conditions {
		out := Outcome{Condition: c.Text, Agg: c.Agg}
		switch {
		case why != "":
			out.Error, out.NoData = why, o == nil
		default:
			out.Observed, out.Samples = o.Capacity, int64(o.Probes)
			out.Passed, out.Error = judgeCapacity(o, c)
		}
		r.Passed = r.Passed && out.Passed
		r.Outcomes = append(r.Outcomes, out)
	}
	return r
}

// capacityOutcome picks the search the threshold is about; why says why
// it cannot be judged (none ran, it stopped early, no probe held).
func (t *Threshold) capacityOutcome(src Source) (*CapacityFinding, string) {
	cs, ok := src.(CapacitySource)
	if !ok {
		return nil, "known only when the run ends"
	}
	var found []CapacityFinding
	for _, o := range cs.Capacities() {
		if o.Load == t.Conditions[0].Agg && (t.Filter["scenario"] == "" || o.Scenario == t.Filter["scenario"]) {
			found = append(found, o)
		}
	}
	switch {
	case len(found) == 0:
		return nil, "no capacity search of this load ran"
	case len(found) > 1:
		return nil, fmt.Sprintf("%d capacity searches of this load ran: name one with {scenario:NAME}", len(found))
	}
	o := &found[0]
	switch {
	case o.Stopped != "":
		return o, "the search stopped before it converged: " + o.Stopped
	case o.Lo <= 0 && !o.AtLeast:
		return o, fmt.Sprintf("no probe held the SLO: the capacity is below the lowest load probed (%s)", FormatValue(KindCapacity, o.Load, o.Hi))
	}
	return o, ""
}

// judgeCapacity compares the estimate with the bound. A search that held
// at its max only shows a capacity of at least Lo: that passes a lower
// bound it exceeds, but can never show an upper one.
func judgeCapacity(o *CapacityFinding, c Condition) (bool, string) {
	if !o.AtLeast {
		return compare(o.Capacity, c.Op, c.Value), ""
	}
	switch c.Op {
	case ">", ">=":
		return compare(o.Lo, c.Op, c.Value), ""
	}
	if o.Lo < c.Value {
		return false, fmt.Sprintf("the search held up to its max: the capacity is at least %s, which cannot show %s", FormatValue(KindCapacity, o.Load, o.Lo), c.Text)
	}
	return false, ""
}
