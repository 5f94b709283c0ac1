package run

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
)

// logSink writes each event it gets, named by the sink, to a shared log.
type logSink struct {
	name string
	log  *[]string
}

func (s logSink) add(event string) { *s.log = append(*s.log, s.name+":"+event) }

func (s logSink) Sample(engine.Sample)                  { s.add("Sample") }
func (s logSink) IterationError(engine.IterationError)  { s.add("IterationError") }
func (s logSink) StageStarted(engine.StageMark)         { s.add("StageStarted") }
func (s logSink) StageEnded(engine.StageMark)           { s.add("StageEnded") }
func (s logSink) IterationStarted(engine.IterationMark) { s.add("IterationStarted") }
func (s logSink) Dropped(engine.DropMark)               { s.add("Dropped") }
func (s logSink) Metric(engine.MetricSample)            { s.add("Metric") }
func (s logSink) Task(engine.TaskSample)                { s.add("Task") }

// A tee gives every event to each of its sinks, the run's sink first.
func TestTeeOrder(t *testing.T) {
	var log []string
	var s engine.Sink = tee{logSink{"run", &log}, logSink{"export", &log}}
	s.Sample(engine.Sample{})
	s.IterationError(engine.IterationError{})
	s.StageStarted(engine.StageMark{})
	s.StageEnded(engine.StageMark{})
	s.IterationStarted(engine.IterationMark{})
	s.Dropped(engine.DropMark{})
	s.Metric(engine.MetricSample{})
	s.Task(engine.TaskSample{})
	var want []string
	for _, ev := range []string{"Sample", "IterationError", "StageStarted", "StageEnded", "IterationStarted", "Dropped", "Metric", "Task"} {
		want = append(want, "run:"+ev, "export:"+ev)
	}
	if got, want := strings.Join(log, " "), strings.Join(want, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

// Without an export, the run's sink is used as it is.
func TestNoExportNoTee(t *testing.T) {
	var ex *exporting
	s := logSink{"run", new([]string)}
	if got := ex.sink(s); fmt.Sprintf("%T", got) != "run.logSink" {
		t.Errorf("sink without export is %T, want the run's sink itself", got)
	}
}

// nopSink drops every event.
type nopSink struct{ logSink }

func (nopSink) Sample(engine.Sample) {}

// A sample, one per request, passes through the tee without allocating.
func TestTeeAllocs(t *testing.T) {
	s := tee{nopSink{}, nopSink{}}
	x := engine.Sample{Scenario: "s"}
	if n := testing.AllocsPerRun(100, func() { s.Sample(x) }); n != 0 {
		t.Errorf("a sample through the tee allocates %v times, want 0", n)
	}
}
