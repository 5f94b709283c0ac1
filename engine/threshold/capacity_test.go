package threshold

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

var capacityKnown = Known{Metrics: known.Metrics, Stages: known.Stages,
	Capacity: map[string]string{"search": plan.CapacityRate, "pool": plan.CapacityVUs}}

// capacities is a CapacitySource with fixed outcomes.
type capacities struct {
	fakeSource
	outcomes []CapacityFinding
}

func (c capacities) Capacities() []CapacityFinding { return c.outcomes }

func TestCapacityThreshold(t *testing.T) {
	found := CapacityFinding{Scenario: "search", Load: plan.CapacityRate, Capacity: 41.5, Lo: 39.8, Hi: 43.2, Probes: 7}
	atMax := CapacityFinding{Scenario: "search", Load: plan.CapacityRate, Capacity: 64, Lo: 64, AtLeast: true}
	stopped := found
	stopped.Stopped = "llmload was the bottleneck (CLIENT-BOUND): CPU at 195%"
	never := CapacityFinding{Scenario: "search", Load: plan.CapacityRate, Hi: 1}
	vus := CapacityFinding{Scenario: "pool", Load: plan.CapacityVUs, Capacity: 12, Lo: 11, Hi: 13}
	tests := []struct {
		expr, cond string
		outcomes   []CapacityFinding
		pass       bool
		err        string
	}{
		{"capacity.rate", "> 40", []CapacityFinding{found}, true, ""},
		{"capacity.rate", "> 42", []CapacityFinding{found}, false, ""},
		{"capacity.rate", "< 50", []CapacityFinding{found}, true, ""},
		{"capacity.rate{scenario:search}", ">= 41.5", []CapacityFinding{found, vus}, true, ""},
		{"capacity.rate", "> 60", []CapacityFinding{atMax}, true, ""},
		{"capacity.rate", ">= 64", []CapacityFinding{atMax}, true, ""},
		{"capacity.rate", "> 64", []CapacityFinding{atMax}, false, ""},
		{"capacity.rate", "< 100", []CapacityFinding{atMax}, false, "at least 64 req/s, which cannot show < 100"},
		{"capacity.rate", "> 10", []CapacityFinding{stopped}, false, "the search stopped before it converged: llmload was the bottleneck"},
		{"capacity.rate", "> 0.5", []CapacityFinding{never}, false, "no probe held the SLO: the capacity is below the lowest load probed (1 req/s)"},
		{"capacity.rate", "> 1", nil, false, "no capacity search of this load ran"},
		{"capacity.vus", "> 10", []CapacityFinding{found, vus}, true, ""},
	}
	for _, tt := range tests {
		th, err := Parse(plan.ThresholdSpec{Expr: tt.expr, Conditions: []string{tt.cond}}, capacityKnown)
		if err != nil {
			t.Errorf("Parse(%s %s): %v", tt.expr, tt.cond, err)
			continue
		}
		r := th.Evaluate(capacities{outcomes: tt.outcomes})
		o := r.Outcomes[0]
		if r.Passed != tt.pass || !strings.Contains(o.Error, tt.err) || (tt.err == "") != (o.Error == "") {
			t.Errorf("%s %s: passed %v, error %q; want %v, %q", tt.expr, tt.cond, r.Passed, o.Error, tt.pass, tt.err)
		}
	}
}

func TestCapacityThresholdNeedsTheEnd(t *testing.T) {
	th, err := Parse(plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"> 40"}}, capacityKnown)
	if err != nil {
		t.Fatal(err)
	}
	r := th.Evaluate(fakeSource{})
	if r.Passed || !strings.Contains(r.Outcomes[0].Error, "known only when the run ends") {
		t.Errorf("against a live snapshot: %+v", r)
	}
	if got, want := Describe(r, r.Outcomes[0]), "capacity.rate > 40: known only when the run ends"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if _, abort := (Set{th}).ShouldAbort(fakeSource{}, time.Hour); abort {
		t.Error("a capacity threshold aborted a run")
	}
}

func TestCapacityThresholdParseErrors(t *testing.T) {
	tests := []struct {
		spec plan.ThresholdSpec
		want string
	}{
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"> 40"}, AbortOnFail: true}, "cannot abort_on_fail"},
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"> 40"}, DelayAbortEval: time.Second}, "cannot abort_on_fail"},
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"== 40"}}, "not =="},
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"> 40/s"}}, "want a plain number of iterations/s"},
		{plan.ThresholdSpec{Expr: "capacity.vus", Conditions: []string{"> many"}}, "want a plain number of VUs"},
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"avg > 40"}}, "want an operator and a number"},
		{plan.ThresholdSpec{Expr: "capacity.rate.p99", Conditions: []string{"> 40"}}, "takes no aggregation"},
		{plan.ThresholdSpec{Expr: "capacity.rate{stage:probe-01}", Conditions: []string{"> 40"}}, "takes only a scenario filter"},
		{plan.ThresholdSpec{Expr: "capacity.rate{scenario:pool}", Conditions: []string{"> 40"}}, `scenario "pool" is no capacity search of rates (those are: search)`},
		{plan.ThresholdSpec{Expr: "capacity.rate", Conditions: nil}, "no condition"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.spec, capacityKnown)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%+v) err = %v, want %q", tt.spec, err, tt.want)
		}
	}
	none := Known{Metrics: known.Metrics, Capacity: map[string]string{}}
	if _, err := Parse(plan.ThresholdSpec{Expr: "capacity.rate", Conditions: []string{"> 1"}}, none); err == nil ||
		!strings.Contains(err.Error(), `no capacity scenario searches rates (executor = "capacity", load = "rate")`) {
		t.Errorf("without a search: %v", err)
	}
	two := Known{Metrics: known.Metrics, Capacity: map[string]string{"a": plan.CapacityVUs, "b": plan.CapacityVUs}}
	if _, err := Parse(plan.ThresholdSpec{Expr: "capacity.vus", Conditions: []string{"> 1"}}, two); err == nil ||
		!strings.Contains(err.Error(), "2 capacity scenarios search VUs (a, b): name one, e.g. capacity.vus{scenario:a}") {
		t.Errorf("two searches: %v", err)
	}
	if _, err := Parse(plan.ThresholdSpec{Expr: "capacity.vus", Conditions: []string{"> 1"}}, Known{Metrics: known.Metrics}); err != nil {
		t.Errorf("unchecked (no Capacity known): %v", err)
	}
}

func TestParseProbeConditionRefuses(t *testing.T) {
	for text, want := range map[string]string{
		"ttft.p99 == 1s":         "not ==",
		"requests.rate > 10":     "a counter's rate is not judged per probe",
		"capacity.rate > 10":     "not on the capacity the search finds",
		"ttft{stage:a}.p99 < 1s": "takes no filter",
		"ttft < 1s":              "needs an aggregation",
	} {
		if _, err := ParseProbeCondition(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProbeCondition(%q) err = %v, want %q", text, err, want)
		}
	}
}

func TestFormatCapacity(t *testing.T) {
	if got := FormatValue(KindCapacity, plan.CapacityRate, 41.5); got != "41.5 req/s" {
		t.Errorf("rate = %q", got)
	}
	if got := FormatValue(KindCapacity, plan.CapacityVUs, 12); got != "12 VUs" {
		t.Errorf("VUs = %q", got)
	}
}
