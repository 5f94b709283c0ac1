package metrics

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// task is a task of stage "sweep"/stage named name, starting at startS
// and taking durMS, with calls requests of which failed failed, out
// output tokens and toolMS in tool delays; err ended it when not "".
func task(stage, name string, startS, durMS float64, calls, failed, out int, toolMS float64, err string) engine.TaskSample {
	return engine.TaskSample{
		Name: name, Scenario: "sweep", Stage: stage, Tags: map[string]string{"task": name, "team": "a"},
		Start: at(startS), Duration: msD(durMS), Calls: calls, Failed: failed,
		InputTokens: 10 * calls, OutputTokens: out, Tool: msD(toolMS), Err: err,
	}
}

// taskRun feeds stage c1 (0-10 s) five tasks and a warmup one, a text
// stage c2 none, and closes the collector with slo.
func taskRun(t *testing.T, slo plan.SLO) *Summary {
	t.Helper()
	c := NewCollector(WithSLO(slo))
	c.StageStarted(mark("sweep", "c1", 0, 2, 0))
	c.StageStarted(mark("sweep", "c2", 1, 2, 10))
	for _, x := range []engine.TaskSample{
		task("c1", "plan", 1, 1000, 2, 0, 100, 0, ""),
		task("c1", "plan", 2, 3000, 4, 0, 300, 500, ""),
		task("c1", "work", 3, 2000, 3, 0, 200, 1000, ""),
		task("c1", "work", 4, 500, 1, 1, 0, 0, ""),                      // a request failed
		task("c1", "work", 5, 800, 2, 0, 50, 0, "agent.lua:7: no plan"), // raised
	} {
		c.Task(x)
	}
	warm := task("c1", "plan", 1, 9000, 9, 9, 9, 9, "x")
	warm.Warmup = true
	c.Task(warm)
	c.StageEnded(mark("sweep", "c1", 0, 2, 10))
	c.Task(task("c1", "plan", 11, 4000, 6, 0, 600, 0, "")) // the graceful-stop tail
	c.Sample(okSample("c2", 12, time.Second))
	c.StageEnded(mark("sweep", "c2", 1, 2, 20))
	return c.Close()
}

// TestTaskFigures: a stage's task figures, by exact arithmetic over its
// 10 s window; a stage without tasks has none.
func TestTaskFigures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slo        plan.SLO
		good       int64
		goodput    float64
		planGood   int64
		requestSLO bool
	}{
		// Without a Task objective every ok task is good: 4 (the tail's
		// one left out of the rate).
		{"no objective", plan.SLO{}, 4, 0.3, 3, false},
		// Within 2 s: the 1 s and 2 s tasks; the 3 s and 4 s are not.
		{"within 2s", plan.SLO{Task: 2 * time.Second}, 2, 0.2, 1, false},
		{"with a request objective", plan.SLO{TTFT: time.Second, Task: 2 * time.Second}, 2, 0.2, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := taskRun(t, tc.slo)
			if sum.SLOSet != tc.requestSLO {
				t.Errorf("SLOSet = %v, want %v: only a request objective judges requests", sum.SLOSet, tc.requestSLO)
			}
			if ts := findStage(t, sum, "c2").Tasks; ts != nil {
				t.Errorf("c2 had no task, but Tasks = %+v", ts)
			}
			ts := findStage(t, sum, "c1").Tasks
			if ts == nil {
				t.Fatal("c1: no task figures")
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"tasks", float64(ts.Tasks), 6},
				{"tasks/s", ts.TasksPerSec, 0.5},
				{"ok", float64(ts.OK), 4},
				{"failed", float64(ts.Failed), 2},
				{"tail", float64(ts.TailTasks), 1},
				{"good", float64(ts.Good), float64(tc.good)},
				{"goodput", ts.Goodput, tc.goodput},
				{"duration count", float64(ts.Duration.Count), 4},
				{"duration min", ts.Duration.Min, 1000},
				{"duration max", ts.Duration.Max, 4000},
				{"duration mean", ts.Duration.Mean, 2500},
				{"calls mean", ts.Calls.Mean, 15.0 / 4},
				{"calls max", ts.Calls.Max, 6},
				{"tokens min", ts.OutputTokens.Min, 100},
				{"tokens max", ts.OutputTokens.Max, 600},
				{"tool count", float64(ts.Tool.Count), 4}, // zero tool time is a value
				{"tool min", ts.Tool.Min, 0},
				{"tool max", ts.Tool.Max, 1000},
				{"plan tasks", float64(ts.ByName["plan"].Tasks), 3},
				{"plan good", float64(ts.ByName["plan"].Good), float64(tc.planGood)},
				{"plan duration max", ts.ByName["plan"].Duration.Max, 4000},
				{"work failed", float64(ts.ByName["work"].Failed), 2},
				{"work duration count", float64(ts.ByName["work"].Duration.Count), 1},
			} {
				if !within(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if got, want := fmt.Sprint(ts.Errors), "[{agent.lua:7: no plan 1}]"; got != want {
				t.Errorf("errors = %s, want %s", got, want)
			}
			if ts.Duration.HDR == "" || ts.ByName["plan"].Duration.HDR == "" {
				t.Error("the task durations carry no HDR histogram: they could not merge")
			}
		})
	}
}

// TestTaskSLOKeepsRequestGoodput: an SLO that sets only Task leaves the
// requests unjudged, as no SLO does.
func TestTaskSLOKeepsRequestGoodput(t *testing.T) {
	run := func(slo plan.SLO) StageSummary {
		c := NewCollector(WithSLO(slo))
		c.StageStarted(mark("sweep", "c1", 0, 1, 0))
		c.Sample(okSample("c1", 1, time.Second))
		c.Sample(okSample("c1", 2, 5*time.Second))
		c.StageEnded(mark("sweep", "c1", 0, 1, 10))
		return findStage(t, c.Close(), "c1")
	}
	none, task := run(plan.SLO{}), run(plan.SLO{Task: time.Millisecond})
	if none.GoodRequests != task.GoodRequests || none.Goodput != task.Goodput || none.GoodShare != task.GoodShare || task.GoodShare != 0 {
		t.Errorf("Task only: good %d, goodput %v, share %v; want as without an SLO (%d, %v, %v)",
			task.GoodRequests, task.Goodput, task.GoodShare, none.GoodRequests, none.Goodput, none.GoodShare)
	}
	if !(plan.SLO{Task: time.Second}).RequestZero() || (plan.SLO{Task: time.Second}).IsZero() || (plan.SLO{E2E: 1}).RequestZero() {
		t.Error("RequestZero must look at the request objectives only, IsZero at all")
	}
}

// TestTaskQueries: the task metrics answer thresholds, over stages and
// through views of a task's name and of user tags.
func TestTaskQueries(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{Task: 2 * time.Second}))
	for _, v := range []struct {
		metric string
		f      Filter
	}{
		{"task", Filter{TaskTag: "plan"}},
		{"task_good", Filter{TaskTag: "plan"}},
		{"task_failed", Filter{TaskTag: "work", "team": "a"}},
		{"tasks", Filter{"team": "b"}},
	} {
		if err := c.Track(v.metric, v.f); err != nil {
			t.Fatalf("Track(%s, %v): %v", v.metric, v.f, err)
		}
	}
	c.StageStarted(mark("sweep", "c1", 0, 2, 0))
	c.Task(task("c1", "plan", 1, 1000, 2, 0, 100, 0, ""))
	c.Task(task("c1", "plan", 2, 3000, 4, 0, 300, 500, ""))
	c.Task(task("c1", "work", 3, 2000, 3, 0, 200, 1000, ""))
	c.Task(task("c1", "work", 4, 500, 1, 1, 0, 0, ""))
	c.StageEnded(mark("sweep", "c1", 0, 2, 10))
	snap := c.Snapshot()
	c.Close()
	for _, tc := range []struct {
		q    Query
		want float64
		n    int64
	}{
		{Query{Metric: "task", Agg: AggMax}, 3000, 3},
		{Query{Metric: "task", Agg: AggMed}, 2000, 3},
		{Query{Metric: "task", Agg: AggMax, Filter: Filter{TaskTag: "plan"}}, 3000, 2},
		{Query{Metric: "task", Agg: AggMin, Filter: Filter{"stage": "c1"}}, 1000, 3},
		{Query{Metric: "tasks", Agg: AggCount}, 4, 4},
		{Query{Metric: "tasks", Agg: AggRate}, 0.4, 4},
		{Query{Metric: "tasks", Agg: AggCount, Filter: Filter{"team": "b"}}, 0, 0},
		{Query{Metric: "task_good", Agg: AggRate}, 0.2, 4},
		{Query{Metric: "task_good", Agg: AggCount, Filter: Filter{TaskTag: "plan"}}, 1, 2},
		{Query{Metric: "task_failed", Agg: AggRate}, 0.25, 4},
		{Query{Metric: "task_failed", Agg: AggRate, Filter: Filter{TaskTag: "work", "team": "a"}}, 0.5, 2},
		{Query{Metric: "task_calls", Agg: AggMax}, 4, 3},
		{Query{Metric: "task_tokens", Agg: AggAvg}, 200, 3},
		{Query{Metric: "task_tool", Agg: AggMax}, 1000, 3},
		{Query{Metric: "requests", Agg: AggCount}, 0, 0}, // tasks are no requests
	} {
		v, n, err := snap.Value(tc.q)
		if err != nil || !within(v, tc.want) || n != tc.n {
			t.Errorf("%s %v %v = %v (n %d, err %v), want %v (n %d)", tc.q.Metric, tc.q.Agg, tc.q.Filter, v, n, err, tc.want, tc.n)
		}
	}
}

// TestTaskCaps: names beyond MaxTaskNames share OtherTagValue, messages
// beyond MaxTaskErrors are counted together.
func TestTaskCaps(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for i := range MaxTaskNames + 5 {
		c.Task(task("c1", fmt.Sprintf("t%02d", i), 1, 100, 1, 0, 1, 0, ""))
	}
	for i := range MaxTaskErrors + 3 {
		c.Task(task("c1", "t00", 2, 100, 1, 0, 1, 0, fmt.Sprintf("a.lua:%d: boom", i)))
		c.Task(task("c1", "t00", 2, 100, 1, 0, 1, 0, "a.lua:0: boom"))
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	ts := findStage(t, c.Close(), "c1").Tasks
	if got, want := len(ts.ByName), MaxTaskNames+1; got != want {
		t.Errorf("%d names, want %d", got, want)
	}
	if got := ts.ByName[OtherTagValue].Tasks; got != 5 {
		t.Errorf("%s has %d tasks, want 5", OtherTagValue, got)
	}
	if len(ts.Errors) != MaxTaskErrors || ts.OtherErrors != 3 {
		t.Errorf("errors %v, other %d; want %d messages and 3 others", ts.Errors, ts.OtherErrors, MaxTaskErrors)
	}
	if e := ts.Errors[0]; e.Message != "a.lua:0: boom" || e.Count != MaxTaskErrors+4 || ts.FirstError() != e.Message {
		t.Errorf("first error %+v (FirstError %q), want a.lua:0: boom ×%d", e, ts.FirstError(), MaxTaskErrors+4)
	}
}

// TestTaskWithoutStart: a task the sink got without a Start started
// Duration before it arrived, so it falls in the window that is open.
func TestTaskWithoutStart(t *testing.T) {
	c := NewCollector()
	c.StageStarted(engine.StageMark{Scenario: "sweep", Stage: "c1", At: time.Now().Add(-time.Minute)})
	x := task("c1", "plan", 0, 2000, 1, 0, 1, 0, "")
	x.Start = time.Time{}
	c.Task(x)
	c.StageEnded(engine.StageMark{Scenario: "sweep", Stage: "c1", At: time.Now().Add(time.Minute)})
	ts := findStage(t, c.Close(), "c1").Tasks
	if ts == nil || ts.Tasks != 1 || ts.TailTasks != 0 || ts.TasksPerSec == 0 {
		t.Errorf("tasks %+v, want one in the window", ts)
	}
}

// TestTaskTextUnchanged: a run without tasks names none of their fields
// in its summary or state, so that its file reads as it did before.
func TestTaskTextUnchanged(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{Task: time.Second}))
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.Sample(okSample("c1", 1, time.Second))
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	sum := c.Close()
	b, err := json.Marshal(struct {
		S *Summary
		T *State
	}{sum, c.State()})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"tasks"`, `"task"`, `"task_good"`, `"task_failed"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("a run without tasks has %s in its summary or state", key)
		}
	}
}

// TestMergeTasks: the seeded run that proves merges exact (TestMergeExact
// compares its task figures) does run tasks, failed and good ones.
func TestMergeTasks(t *testing.T) {
	whole, _ := mergeRun(t, 42, 2)
	var tasks, failed, good, names int64
	for _, st := range whole.Close().Stages {
		if ts := st.Tasks; ts != nil {
			tasks, failed, good = tasks+ts.Tasks, failed+ts.Failed, good+ts.Good
			names = max(names, int64(len(ts.ByName)))
		}
	}
	if tasks == 0 || failed == 0 || good == 0 || good == tasks-failed || names < 2 {
		t.Errorf("the seeded run had %d tasks, %d failed, %d good, %d names; the merge test proves little of them", tasks, failed, good, names)
	}
}

// BenchmarkCollectorTask is the cost of recording one task.
func BenchmarkCollectorTask(b *testing.B) {
	c := NewCollector(WithSLO(plan.SLO{Task: time.Second}))
	x := task("c1", "plan", 0, 900, 4, 0, 300, 200, "")
	b.ReportAllocs()
	for b.Loop() {
		c.Task(x)
	}
	c.Close()
}
