package merge

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// agentTask is a task named name, started at offset from t0, that took
// secs seconds with calls requests; failed of them failed.
func agentTask(name string, offset time.Duration, secs float64, calls, failed int, err string) engine.TaskSample {
	return engine.TaskSample{Name: name, Tags: map[string]string{"task": name}, Start: t0.Add(offset),
		Duration: time.Duration(secs * float64(time.Second)), Calls: calls, Failed: failed, OutputTokens: 100 * calls,
		Tool: 200 * time.Millisecond, Err: err}
}

// TestMergeTasks: two segments' tasks merge exactly — counts add, the
// durations' histograms merge, the errors join — and the thresholds on
// the task metrics are judged on the merged tasks, a task name's among
// them.
func TestMergeTasks(t *testing.T) {
	spec := []plan.ThresholdSpec{
		{Expr: "task.p99", Conditions: []string{"< 30s"}},
		{Expr: "task.max", Conditions: []string{"< 3s"}},
		{Expr: "tasks", Conditions: []string{"count == 6"}},
		{Expr: "task_failed.rate", Conditions: []string{"< 50%"}},
		{Expr: "task{task:plan}.max", Conditions: []string{"<= 1.5s"}},
		{Expr: "task_calls.max", Conditions: []string{"== 4"}},
	}
	ms := time.Millisecond
	in := inputs(t,
		seg{index: 0, count: 2, ttft: 100 * ms, requests: 3, thresholds: spec, tasks: []engine.TaskSample{
			agentTask("plan", 100*ms, 1, 2, 0, ""),
			agentTask("work", 300*ms, 4, 4, 0, ""),
			agentTask("work", 500*ms, 0.5, 1, 1, ""),
		}},
		seg{index: 1, count: 2, ttft: 100 * ms, requests: 3, thresholds: spec, tasks: []engine.TaskSample{
			agentTask("plan", 200*ms, 1.5, 3, 0, ""),
			agentTask("work", 400*ms, 2, 2, 0, "seg.lua:9: no answer"),
			agentTask("work", 600*ms, 2.5, 3, 0, ""),
		}})
	res, _, err := Merge(in, "test")
	if err != nil {
		t.Fatal(err)
	}
	ts := res.Stages[0].Tasks
	if ts == nil {
		t.Fatal("the merged stage has no tasks")
	}
	// Ok: 1, 4, 1.5, 2.5 s; failed: the failed request and the error.
	if ts.Tasks != 6 || ts.OK != 4 || ts.Failed != 2 || ts.Good != 4 || ts.Duration.Count != 4 ||
		ts.Duration.Min != 1000 || ts.Duration.Max != 4000 || ts.Duration.Mean != 2250 {
		t.Errorf("merged tasks %d, ok %d, failed %d, good %d, duration %+v", ts.Tasks, ts.OK, ts.Failed, ts.Good, ts.Duration)
	}
	if p, w := ts.ByName["plan"], ts.ByName["work"]; p.Tasks != 2 || p.Duration.Max != 1500 || w.Tasks != 4 || w.Failed != 2 {
		t.Errorf("by name: plan %+v, work %+v", p, w)
	}
	if got, want := fmt.Sprint(ts.Errors), "[{seg.lua:9: no answer 1}]"; got != want {
		t.Errorf("errors %s, want %s", got, want)
	}
	want := map[string]bool{"task.p99": true, "task.max": false, "tasks": true, "task_failed.rate": true,
		"task{task:plan}.max": true, "task_calls.max": true}
	for _, r := range res.Thresholds {
		if r.Passed != want[r.Expr] || r.Outcomes[0].NoData {
			t.Errorf("%s: passed %v (no data %v, observed %v), want %v", r.Expr, r.Passed, r.Outcomes[0].NoData, r.Outcomes[0].Observed, want[r.Expr])
		}
	}
	if len(res.Thresholds) != len(spec) {
		t.Errorf("%d thresholds judged, want %d", len(res.Thresholds), len(spec))
	}
}
