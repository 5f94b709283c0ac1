package executor

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestStartTimeDelaysAScenarioThatRunsAlongsideAnother(t *testing.T) {
	bubble(t, func(t *testing.T) {
		early := plan.Scenario{
			Name: "early", Executor: plan.ExecutorConstantVUs, Exec: "chat", GracefulStop: time.Second,
			Stages: []plan.Stage{{Name: "steady", Target: 1, Duration: 1500 * time.Millisecond}},
		}
		late := openScenario(plan.ArrivalConstant, plan.Stage{Name: "burst", Rate: 20, Duration: 500 * time.Millisecond})
		late.Name, late.StartTime, late.PreAllocatedVUs, late.MaxVUsCap = "late", 500*time.Millisecond, 2, 2
		r := &fakeRunner{fn: sleepFn(5 * time.Millisecond)}
		sink := &fakeSink{}
		e := New(plan.Plan{Scenarios: []plan.Scenario{early, late}}, r, sink)
		done := make(chan error)
		go func() { done <- e.Run(context.Background()) }()

		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			st := e.Status()
			if st.Scenarios[0].Stage == "" {
				continue
			}
			if l := st.Scenarios[1]; l.Stage == "" && (l.StartsIn <= 0 || l.StartsIn > 500*time.Millisecond) {
				t.Errorf("late scenario starts in %v, want (0, 500ms]", l.StartsIn)
			}
			break
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}

		es, ee := sink.stageMarks("early")
		ls, le := sink.stageMarks("late")
		if len(es) != 1 || len(ee) != 1 || len(ls) != 1 || len(le) != 1 {
			t.Fatalf("stage marks: early %d/%d, late %d/%d", len(es), len(ee), len(ls), len(le))
		}
		if es[0].Stage != "steady" || ls[0].Stage != "burst" {
			t.Errorf("stage names %q, %q", es[0].Stage, ls[0].Stage)
		}
		if got, want := ls[0].At.Sub(es[0].At), 500*time.Millisecond; got != want {
			t.Errorf("late scenario started %v after the early one, want %v", got, want)
		}
		if !ls[0].At.Before(ee[0].At) {
			t.Error("late scenario did not run while the early one did")
		}
		byScenario := map[string]int{}
		for _, it := range r.its {
			byScenario[it.Scenario+"/"+it.Stage]++
		}
		if byScenario["late/burst"] == 0 || byScenario["early/steady"] == 0 {
			t.Errorf("iterations by scenario = %v", byScenario)
		}
		assertUniqueIDs(t, r)
	})
}

func TestIterationMarksForClosedAndWarmup(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: 50 * time.Millisecond})
		p.Warmup.Requests = 3
		sink := runPlan(t, p, r)
		if got, want := len(sink.marks), len(r.its); got != want {
			t.Fatalf("marks = %d, iterations = %d", got, want)
		}
		warm := 0
		for _, m := range sink.marks {
			if m.Warmup {
				warm++
				if m.Stage != WarmupStage {
					t.Errorf("warmup mark in stage %q", m.Stage)
				}
			}
			if !m.Scheduled.IsZero() || m.Started.IsZero() {
				t.Errorf("closed-model mark %+v", m)
			}
		}
		if got, want := warm, 3; got != want {
			t.Errorf("warmup marks = %d, want %d", got, want)
		}
	})
}

func TestBadPlansAreErrorsNotPanics(t *testing.T) {
	tests := map[string]plan.Scenario{
		"unknown executor": {Name: "x", Executor: "externally-controlled", Stages: []plan.Stage{{Name: "a", Duration: time.Second}}},
		"no stages":        {Name: "x", Executor: plan.ExecutorRampingVUs},
		"open, no stages":  {Name: "x", Executor: plan.ExecutorConstantArrivalRate, PreAllocatedVUs: 1},
		"NaN rate": {Name: "x", Executor: plan.ExecutorConstantArrivalRate, PreAllocatedVUs: 1,
			Stages: []plan.Stage{{Name: "a", Rate: math.NaN(), Duration: time.Second}}},
		"negative iterations": {Name: "x", Executor: plan.ExecutorSharedIterations, VUs: 1, Iterations: -1},
	}
	for name, sc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &fakeRunner{fn: noop}
			err := New(plan.Plan{Scenarios: []plan.Scenario{sc}}, r, &fakeSink{}).Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), `"x"`) {
				t.Errorf("err = %v, want an error naming the scenario", err)
			}
			if r.made() != 0 {
				t.Errorf("%d VUs made for a bad plan", r.made())
			}
		})
	}
}

func TestEveryExecutorStopsPromptlyOnCancel(t *testing.T) {
	open := openPlan(2, 4, plan.Stage{Name: "r50", Rate: 50, Duration: time.Hour})
	tests := map[string]plan.Plan{
		"ramping-vus":            closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Hour}),
		"arrival-rate":           open,
		"shared-iterations":      iterPlan(plan.ExecutorSharedIterations, 2, 1_000_000, time.Hour),
		"per-vu-iterations":      iterPlan(plan.ExecutorPerVUIterations, 2, 1_000_000, time.Hour),
		"waiting for start_time": {Scenarios: []plan.Scenario{{Name: "later", Executor: plan.ExecutorConstantVUs, StartTime: time.Hour, Stages: []plan.Stage{{Name: "c1", Target: 1, Duration: time.Second}}}}},
	}
	for name, p := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				r := &fakeRunner{fn: sleepFn(time.Hour)}
				sink := &fakeSink{}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
				start := time.Now()
				err := New(p, r, sink).Run(ctx)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				if got, want := time.Since(start), 100*time.Millisecond; got != want {
					t.Errorf("Run took %v, want %v: it should stop at the cancel", got, want)
				}
				if got, want := len(sink.ended), len(sink.started); got != want {
					t.Errorf("stages ended = %d, started = %d", got, want)
				}
				if got, want := int(r.closed.Load()), r.made(); got != want {
					t.Errorf("VUs closed = %d of %d", got, want)
				}
			})
		})
	}
}
