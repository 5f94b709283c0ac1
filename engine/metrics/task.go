package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/runclock"
)

// TaskTag is the filter key that selects one task name's values of the
// task metrics ("task{task:plan}.p99"): a task's name is its tag "task".
const TaskTag = "task"

// Caps of a stage's task figures, so that a script naming tasks or
// raising errors without end cannot exhaust memory.
const (
	// MaxTaskNames is how many distinct task names a stage breaks down;
	// tasks of further names share OtherTagValue.
	MaxTaskNames = 20
	// MaxTaskErrors is how many distinct messages that ended tasks a
	// stage keeps; tasks ended by further messages are counted in
	// TaskSummary.OtherErrors.
	MaxTaskErrors = 5
)

// TaskSummary is what a stage's tasks (engine.TaskSample: an agent's unit
// of work, timed whole) took. A task is ok when its function returned and
// none of its requests failed; good when it is ok and took no longer than
// the SLO's Task objective (every ok task is good without one). The
// distributions are of the ok tasks, as a stage's latencies are of its
// successful requests, so that a task cut short by an error cannot make
// the agent look faster. Rates divide the tasks that started in the
// window by the window, as the stage's own rates do; the tasks that
// started in the graceful-stop tail (TailTasks) are in the counts and
// distributions, not in the rates. A stage without tasks has none.
type TaskSummary struct {
	Tasks       int64   `json:"tasks"` // OK + Failed
	TasksPerSec float64 `json:"tasks_per_sec"`
	OK          int64   `json:"ok"`
	Failed      int64   `json:"failed"`
	Good        int64   `json:"good"`
	Goodput     float64 `json:"goodput"` // good tasks per second
	TailTasks   int64   `json:"tail_tasks,omitempty"`
	TailGood    int64   `json:"tail_good,omitempty"`
	// Duration is the wall time from a task's first call to its last
	// answer and Tool its time in tool delays, both in ms; Calls the
	// requests it sent and OutputTokens the tokens they generated.
	Duration     Dist `json:"duration"`
	Calls        Dist `json:"calls"`
	OutputTokens Dist `json:"output_tokens"`
	Tool         Dist `json:"tool"`
	// Errors are the first MaxTaskErrors distinct errors that ended tasks
	// ("file:line: message"), in the order they first came, with how many
	// tasks each ended; OtherErrors counts the tasks later messages ended.
	// A task failed only by its requests has no message: their errors are
	// the stage's.
	Errors      []TaskError `json:"errors,omitempty"`
	OtherErrors int64       `json:"other_errors,omitempty"`
	// ByName breaks the tasks down by name: at most MaxTaskNames names,
	// the tasks of further ones under OtherTagValue.
	ByName map[string]TaskNameSummary `json:"by_name,omitempty"`
}

// TaskError is one message that ended tasks, and how many.
type TaskError struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// TaskNameSummary is the tasks of one name in a stage: counts, and the
// duration of the ok ones (ms, with its HDR histogram).
type TaskNameSummary struct {
	Tasks    int64 `json:"tasks"` // OK + Failed
	OK       int64 `json:"ok"`
	Failed   int64 `json:"failed"`
	Good     int64 `json:"good"`
	Duration Dist  `json:"duration"`
}

// FirstError is the first message that ended one of the stage's tasks;
// "" when none was ended by an error.
func (t *TaskSummary) FirstError() string {
	if t == nil || len(t.Errors) == 0 {
		return ""
	}
	return t.Errors[0].Message
}

// taskEvent is a task's figures, judged on the producer's goroutine.
type taskEvent struct {
	name, err      string
	duration, tool time.Duration
	calls, outTok  int
	ok, good       bool
}

// Task records one finished task. A task without a Start started
// Duration before now. The collector keeps t.Tags, so the caller must
// not modify them afterwards. Warmup tasks are left out.
func (c *Collector) Task(t engine.TaskSample) {
	if t.Warmup {
		c.open()
		return
	}
	c.accept(taskOf(&t, c.slo.Task))
}

// taskOf is the event of a task; objective is the SLO's Task (0: none).
func taskOf(t *engine.TaskSample, objective time.Duration) event {
	start := t.Start
	if start.IsZero() {
		start = runclock.Now().Add(-t.Duration)
	}
	ok := t.OK()
	te := &taskEvent{
		name: t.Name, err: t.Err, duration: t.Duration, tool: t.Tool, calls: t.Calls, outTok: t.OutputTokens,
		ok: ok, good: ok && (objective <= 0 || t.Duration <= objective),
	}
	return event{kind: evTask, scenario: t.Scenario, stage: t.Stage, at: start, tags: t.Tags, task: te}
}

// taskMetrics are the built-ins a task feeds.
var taskMetrics = [...]metricID{mTask, mTasks, mTaskGood, mTaskFailed, mTaskCalls, mTaskTokens, mTaskTool}

// isTaskMetric reports whether id is one of taskMetrics.
func isTaskMetric(id metricID) bool { return id >= mTask && id <= mTaskTool }

// feedTask adds a task to the cell of built-in id: every task to the
// counts and the share, an ok one also to the distributions, in which
// zero is a value (a task that called no tool).
func feedTask(id metricID, c *cell, e *event) {
	t := e.task
	switch id {
	case mTasks:
		c.add(1)
	case mTaskGood:
		c.add(b2f(t.good))
	case mTaskFailed:
		c.add(b2f(!t.ok))
	}
	if !t.ok {
		return
	}
	switch id {
	case mTask:
		c.addDuration(t.duration)
	case mTaskTool:
		c.addDuration(t.tool)
	case mTaskCalls:
		c.add(float64(t.calls))
	case mTaskTokens:
		c.add(float64(t.outTok))
	}
}

// task adds one task to its stage: its cells, names and errors. Its span
// widens the window of a stage without marks, as a request's does.
func (s *stageAgg) task(e *event) {
	s.seen(e.at, e.at.Add(e.task.duration))
	for _, id := range taskMetrics {
		feed(id, &s.cells[id], e)
	}
	s.tasks.add(e.task)
}

// taskBreakdown is what a stage's task figures need beyond its cells:
// the tasks by name, and the messages that ended them. Owned by the
// aggregator.
type taskBreakdown struct {
	names       map[string]*taskNameCell
	errors      []TaskError
	otherErrors int64
}

// taskNameCell is one task name's share of a stage; its histogram is
// sparse, as a tag value's.
type taskNameCell struct {
	tasks, failed, good int64
	duration            recorder
}

func (b *taskBreakdown) add(t *taskEvent) {
	if t.err != "" {
		b.addError(t.err, 1)
	}
	c := b.cell(t.name)
	c.tasks++
	if t.good {
		c.good++
	}
	if !t.ok {
		c.failed++
		return
	}
	c.duration.record(t.duration)
}

// addError counts n tasks ended by msg, within MaxTaskErrors messages.
func (b *taskBreakdown) addError(msg string, n int64) {
	if i := slices.IndexFunc(b.errors, func(e TaskError) bool { return e.Message == msg }); i >= 0 {
		b.errors[i].Count += n
		return
	}
	if len(b.errors) >= MaxTaskErrors {
		b.otherErrors += n
		return
	}
	b.errors = append(b.errors, TaskError{Message: msg, Count: n})
}

// cell finds or makes a name's cell, within MaxTaskNames.
func (b *taskBreakdown) cell(name string) *taskNameCell {
	if c, ok := b.names[name]; ok {
		return c
	}
	if len(b.names) >= MaxTaskNames {
		name = OtherTagValue
		if c, ok := b.names[name]; ok {
			return c
		}
	}
	if b.names == nil {
		b.names = map[string]*taskNameCell{}
	}
	c := &taskNameCell{duration: newRecorder(sparseDurationGeo)}
	b.names[name] = c
	return c
}

// byName renders the names; nil without a task.
func (b *taskBreakdown) byName() map[string]TaskNameSummary {
	if len(b.names) == 0 {
		return nil
	}
	out := make(map[string]TaskNameSummary, len(b.names))
	for name, c := range b.names {
		out[name] = TaskNameSummary{Tasks: c.tasks, OK: c.tasks - c.failed, Failed: c.failed, Good: c.good,
			Duration: c.duration.t.dist()}
	}
	return out
}

// taskFigures fills st.Tasks from the stage's task cells; it stays nil
// when the stage had no task.
func taskFigures(st *StageSummary, ss *stageSnap, b *taskBreakdown) {
	c, secs := &ss.cells, ss.seconds()
	tasks, good := &c[mTasks], &c[mTaskGood]
	if tasks.n == 0 {
		return
	}
	failed := c[mTaskFailed].hits
	st.Tasks = &TaskSummary{
		Tasks: int64(tasks.sum), TasksPerSec: perSecond(tasks.sum-tasks.tail, secs),
		OK: int64(tasks.sum) - failed, Failed: failed,
		Good: int64(good.sum), Goodput: perSecond(good.sum-good.tail, secs),
		TailTasks: int64(tasks.tail), TailGood: int64(good.tail),
		Duration: c[mTask].t.dist(), Calls: c[mTaskCalls].t.dist(),
		OutputTokens: c[mTaskTokens].t.dist(), Tool: c[mTaskTool].t.dist(),
		Errors: slices.Clone(b.errors), OtherErrors: b.otherErrors,
		ByName: b.byName(),
	}
}

// absorb adds a part's stage's task errors, in its order: the parts do
// not say which of their messages came first in time. (Its tasks by name
// merge from their histograms, in taskNames.)
func (b *taskBreakdown) absorb(t *TaskSummary) {
	if t == nil {
		return
	}
	for _, e := range t.Errors {
		b.addError(e.Message, e.Count)
	}
	b.otherErrors += t.OtherErrors
}

// taskNames merges the parts' tasks by name, each name's duration
// rebuilt from its histogram; the names beyond MaxTaskNames with the
// fewest tasks join OtherTagValue, where a collector keeps the first
// seen, which the parts cannot tell.
func (g *group) taskNames() (map[string]TaskNameSummary, error) {
	var b taskBreakdown
	for i, p := range g.sums {
		if p.Tasks == nil {
			continue
		}
		for name, ns := range p.Tasks.ByName {
			t, err := ns.Duration.trend()
			if err != nil {
				return nil, fmt.Errorf("part %d: stage %s/%s: task %s: %w", g.parts[i], g.id.scenario, g.id.stage, name, err)
			}
			o := &taskNameCell{tasks: ns.Tasks, failed: ns.Failed, good: ns.Good, duration: recorder{t: *t}}
			if b.names == nil {
				b.names = map[string]*taskNameCell{}
			}
			if prev, ok := b.names[name]; ok {
				prev.absorb(o)
			} else {
				b.names[name] = o
			}
		}
	}
	b.foldNames()
	return b.byName(), nil
}

// absorb adds o's tasks to c; o is not modified.
func (c *taskNameCell) absorb(o *taskNameCell) {
	c.tasks += o.tasks
	c.failed += o.failed
	c.good += o.good
	c.duration.t = *mergeTrends([]*trend{&c.duration.t, &o.duration.t})
}

// foldNames keeps the MaxTaskNames names with the most tasks, ties by
// name, and gathers the others under OtherTagValue.
func (b *taskBreakdown) foldNames() {
	names := slices.DeleteFunc(slices.Collect(maps.Keys(b.names)), func(n string) bool { return n == OtherTagValue })
	if len(names) <= MaxTaskNames {
		return
	}
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(b.names[y].tasks, b.names[x].tasks), cmp.Compare(x, y))
	})
	other := b.names[OtherTagValue]
	for _, n := range names[MaxTaskNames:] {
		if other == nil {
			other = b.names[n]
		} else {
			other.absorb(b.names[n])
		}
		delete(b.names, n)
	}
	b.names[OtherTagValue] = other
}
