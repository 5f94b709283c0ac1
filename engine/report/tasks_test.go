package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// taskSLO is the tasks run's objective: a task is good within 3 s.
var taskSLO = plan.SLO{Task: 3 * time.Second}

// tasksRun is a run measured by a real collector: an agent scenario whose
// stage "agents" runs 20 tasks over 20 s (a plan then a review, one in
// five failed, one in ten raising an error), after a stage "warm" of
// plain requests without tasks.
func tasksRun() *result.Result {
	c := metrics.NewCollector(metrics.WithSLO(taskSLO))
	c.StageStarted(engine.StageMark{Scenario: "swarm", Stage: "warm", Index: 0, Target: 2, At: t0})
	c.StageStarted(engine.StageMark{Scenario: "swarm", Stage: "agents", Index: 1, Target: 4, At: t0.Add(10 * time.Second)})
	ms := time.Millisecond
	for j := range 10 {
		c.Sample(engine.Sample{Scenario: "swarm", Stage: "warm", Result: engine.Result{Start: t0.Add(time.Duration(j) * time.Second),
			Status: 200, TTFB: 40 * ms, TTFT: 80 * ms, TTFC: 80 * ms, E2E: 900 * ms, TPOT: 8 * ms, OutputTokens: 100,
			TokensSource: engine.TokensFromUsage, InputTokens: 30, InputTokensSource: engine.TokensFromUsage, Streamed: true}})
	}
	for j := range 20 {
		c.Task(agentTask(j))
	}
	c.StageEnded(engine.StageMark{Scenario: "swarm", Stage: "warm", Index: 0, Target: 2, At: t0.Add(10 * time.Second)})
	c.StageEnded(engine.StageMark{Scenario: "swarm", Stage: "agents", Index: 1, Target: 4, At: t0.Add(30 * time.Second)})
	return result.New(result.Meta{Scenario: "swarm.lua", Model: "m", Simulator: true, Seed: 7, SLO: result.SLOFrom(taskSLO),
		Start: t0, End: t0.Add(30 * time.Second), Complete: true}, c.Close())
}

// agentTask is the j-th task of stage "agents": a plan on even j, a
// review on odd, taking 1.5 to 4.35 s with 3 to 6 calls and a second of
// tools on every other; j%5 == 4 had a failed request, j%10 == 9 raised.
func agentTask(j int) engine.TaskSample {
	name := []string{"plan", "review"}[j%2]
	x := engine.TaskSample{Name: name, Scenario: "swarm", Stage: "agents", Tags: map[string]string{"task": name},
		Start: t0.Add(10*time.Second + time.Duration(j)*time.Second), Duration: time.Duration(1500+150*j) * time.Millisecond,
		Calls: 3 + j%4, InputTokens: 400, OutputTokens: 200 + 10*j, Tool: time.Duration(j%2) * time.Second}
	if j%5 == 4 {
		x.Failed = 1
	}
	if j%10 == 9 {
		x.Err = "swarm.lua:42: tool returned nothing"
	}
	return x
}

// TestTasksGolden: the tasks run in every rendering.
func TestTasksGolden(t *testing.T) {
	r := tasksRun()
	golden(t, "tasks.txt.golden", render(t, Text(r)))
	golden(t, "tasks.json.golden", render(t, JSON(r)))
	golden(t, "tasks.csv.golden", render(t, StagesCSV(r)))
	golden(t, "tasks.html.golden", render(t, HTML(r)))
}

// TestTasksText: the tasks table's figures, by arithmetic over the
// fixture, and no table for a run without tasks.
func TestTasksText(t *testing.T) {
	text := string(render(t, Text(tasksRun())))
	i := strings.Index(text, "\ntasks (")
	if i < 0 {
		t.Fatalf("no tasks table:\n%s", text)
	}
	text = text[i:]
	// 20 tasks in 20 s, 16 ok; good: ok and ≤ 3 s, j ≤ 10 but not 4 or 9: 9.
	// Ok durations 1.5 + 0.15j s: their p50 of 16 is the 8th, j = 8, 2700
	// ms to HDR precision; the p99 the slowest, j = 18. Calls of the ok
	// tasks: 3+j%4, eight 3s and 4s: a p50 of 4; tools on odd j only: 0.
	if got, want := fieldsOf(text, "agents"), "[agents 20 1.00 80.0 2701 4200 4.00 0.00 0.45"; !strings.HasPrefix(got, want) {
		t.Errorf("tasks row = %s, want it to start %s]\n%s", got, want, text)
	}
	for _, want := range []string{" 0.45  swarm.lua:42: tool returned nothing", "took at most 3s", "calls p50"} {
		if !strings.Contains(strings.ReplaceAll(text, "\n  ", " "), want) {
			t.Errorf("tasks table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\nwarm ") {
		t.Errorf("the stage without tasks has a row:\n%s", text)
	}
	// Ok plans: j = 0, 2, 6, 8, 10, 12, 16, 18; their p50 the 4th, j = 8.
	if !strings.Contains(text, "agents · plan       10           80.0  2701  4200\n") {
		t.Errorf("no row for the plan tasks:\n%s", text)
	}
	if plain := string(render(t, Text(mediaRun(false)))); strings.Contains(plain, "tasks (") {
		t.Errorf("a run without tasks shows a tasks table:\n%s", plain)
	}
}

// TestTasksJSONRoundTrip: the task figures and the SLO's task objective
// survive the result file.
func TestTasksJSONRoundTrip(t *testing.T) {
	want := tasksRun()
	got, err := result.ReadJSON(bytes.NewReader(render(t, JSON(want))))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got.Stages[1].Tasks, want.Stages[1].Tasks)
	}
	ts := got.Stages[1].Tasks
	if ts == nil || ts.Tasks != 20 || ts.Good != 9 || got.Run.SLO.TaskMS != 3000 || got.Stages[0].Tasks != nil {
		t.Errorf("tasks %+v, SLO %+v; want 20 tasks, 9 good, task_ms 3000, none in the first stage", ts, got.Run.SLO)
	}
	if got.SLOSet {
		t.Error("a task objective alone set SLOSet: the requests' goodput would read as measured")
	}
}

// TestTasksCSV: the task columns of a stage with tasks, empty on one
// without.
func TestTasksCSV(t *testing.T) {
	recs, err := csv.NewReader(bytes.NewReader(render(t, StagesCSV(tasksRun())))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	for _, tc := range []struct {
		row       int
		col, want string
	}{
		{1, "tasks", ""}, {2, "tasks", "20"}, {2, "tasks_per_sec", "1"}, {2, "task_ok", "16"},
		{2, "task_failed", "4"}, {2, "task_good", "9"}, {2, "task_goodput", "0.45"},
		{2, "task_calls_p50", "4.001"}, // 4 to HDR precision, as a custom trend's values
		{2, "task_tool_p50", "0"},
	} {
		if got := recs[tc.row][col(tc.col)]; got != tc.want {
			t.Errorf("row %d %s = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
	if got := fmt.Sprint(recs[0][len(recs[0])-1]); got != "task_tool_p50" {
		t.Errorf("last column %s, want task_tool_p50", got)
	}
}
