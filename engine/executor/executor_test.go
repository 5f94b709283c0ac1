package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// fakeSink records what the executor reports.
type fakeSink struct {
	mu      sync.Mutex
	errs    []engine.IterationError
	started []engine.StageMark
	ended   []engine.StageMark
	marks   []engine.IterationMark
	drops   []engine.DropMark
}

func (f *fakeSink) Sample(engine.Sample)       {}
func (f *fakeSink) Metric(engine.MetricSample) {}
func (f *fakeSink) Task(engine.TaskSample)     {}
func (f *fakeSink) IterationError(e engine.IterationError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, e)
}
func (f *fakeSink) StageStarted(m engine.StageMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, m)
}
func (f *fakeSink) StageEnded(m engine.StageMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, m)
}
func (f *fakeSink) IterationStarted(m engine.IterationMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.marks = append(f.marks, m)
}
func (f *fakeSink) Dropped(m engine.DropMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drops = append(f.drops, m)
}

// stageMarks returns the started and ended marks of one scenario.
func (f *fakeSink) stageMarks(scenario string) (started, ended []engine.StageMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.started {
		if m.Scenario == scenario {
			started = append(started, m)
		}
	}
	for _, m := range f.ended {
		if m.Scenario == scenario {
			ended = append(ended, m)
		}
	}
	return started, ended
}

// fakeRunner makes VUs whose iterations call fn; it records every iteration.
type fakeRunner struct {
	fn      func(ctx context.Context, it engine.Iteration) error
	initErr error
	// initDelay is how long making a VU takes; initErrAfter, when above
	// 0, fails every VU made after that many.
	initDelay    time.Duration
	initErrAfter int

	mu       sync.Mutex
	its      []engine.Iteration
	ids      []int // of every VU made
	inFlight atomic.Int32
	peak     atomic.Int32
	closed   atomic.Int32
}

func (f *fakeRunner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	if f.initErr != nil {
		return nil, f.initErr
	}
	if f.initDelay > 0 {
		select {
		case <-time.After(f.initDelay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	if f.initErrAfter > 0 && len(f.ids) >= f.initErrAfter {
		f.mu.Unlock()
		return nil, errors.New("script.lua:3: out of luck")
	}
	f.ids = append(f.ids, id)
	f.mu.Unlock()
	return &fakeVU{f: f}, nil
}

// made is the number of VUs made so far.
func (f *fakeRunner) made() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ids)
}

type fakeVU struct{ f *fakeRunner }

func (v *fakeVU) RunIteration(ctx context.Context, it engine.Iteration) error {
	n := v.f.inFlight.Add(1)
	defer v.f.inFlight.Add(-1)
	for p := v.f.peak.Load(); n > p && !v.f.peak.CompareAndSwap(p, n); p = v.f.peak.Load() {
	}
	v.f.mu.Lock()
	v.f.its = append(v.f.its, it)
	v.f.mu.Unlock()
	return v.f.fn(ctx, it)
}

func (v *fakeVU) Close() error { v.f.closed.Add(1); return nil }

func sleepFn(d time.Duration) func(context.Context, engine.Iteration) error {
	return func(ctx context.Context, _ engine.Iteration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func closedPlan(stages ...plan.Stage) plan.Plan {
	return plan.Plan{Scenarios: []plan.Scenario{{
		Name: "s", Executor: plan.ExecutorRampingVUs, Exec: "chat", Stages: stages,
		GracefulStop: time.Second, GracefulRampDown: time.Second,
	}}}
}

func runPlan(t *testing.T, p plan.Plan, r *fakeRunner) *fakeSink {
	t.Helper()
	sink := &fakeSink{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := New(p, r, sink).Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sink
}

func TestStagesStepVUsAndLabelIterations(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(10 * time.Millisecond)}
		sink := runPlan(t, closedPlan(
			plan.Stage{Name: "c1", Target: 1, Duration: 300 * time.Millisecond},
			plan.Stage{Name: "c3", Target: 3, Duration: 300 * time.Millisecond},
		), r)

		vusByStage := map[string]map[int]bool{}
		for _, it := range r.its {
			if vusByStage[it.Stage] == nil {
				vusByStage[it.Stage] = map[int]bool{}
			}
			vusByStage[it.Stage][it.VUID] = true
		}
		if got, want := len(vusByStage["c1"]), 1; got != want {
			t.Errorf("VUs in c1 = %d, want %d", got, want)
		}
		if got, want := len(vusByStage["c3"]), 3; got != want {
			t.Errorf("VUs in c3 = %d, want %d", got, want)
		}
		if got, want := int(r.peak.Load()), 3; got != want {
			t.Errorf("peak concurrency = %d, want %d", got, want)
		}
		if got, want := len(sink.started), 2; got != want {
			t.Fatalf("stages started = %d, want %d", got, want)
		}
		if got, want := len(sink.ended), 2; got != want {
			t.Fatalf("stages ended = %d, want %d", got, want)
		}
		for i, m := range sink.started {
			if sink.ended[i].Cut {
				t.Errorf("stage %d ran to its end but is marked cut", i)
			}
			if got, want := m.Planned, 300*time.Millisecond; got != want || sink.ended[i].Planned != want {
				t.Errorf("stage %d: planned %v/%v, want %v", i, got, sink.ended[i].Planned, want)
			}
			if m.Index != i || sink.ended[i].At.Sub(m.At) != 300*time.Millisecond {
				t.Errorf("stage %d: window %+v .. %+v, want 300ms", i, m, sink.ended[i])
			}
		}
		if got, want := sink.started[1].Target, 3; got != want {
			t.Errorf("c3 target = %d, want %d", got, want)
		}
		if got, want := int(r.closed.Load()), 3; got != want {
			t.Errorf("VUs closed = %d, want %d", got, want)
		}
	})
}

func TestRequestIDsUniqueAndIterationsCountPerVU(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		runPlan(t, closedPlan(plan.Stage{Name: "c4", Target: 4, Duration: 200 * time.Millisecond}), r)
		seen := map[int64]bool{}
		next := map[int]int64{}
		for _, it := range r.its {
			if seen[it.RequestID] {
				t.Fatalf("request_id %d repeated", it.RequestID)
			}
			seen[it.RequestID] = true
			if it.Iteration != next[it.VUID] {
				t.Fatalf("VU %d iteration %d, want %d", it.VUID, it.Iteration, next[it.VUID])
			}
			next[it.VUID]++
		}
		if len(seen) < 8 {
			t.Errorf("only %d iterations in 200ms at 4 VUs", len(seen))
		}
	})
}

func TestLinearRampAddsVUsOverTime(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(5 * time.Millisecond)}
		runPlan(t, closedPlan(plan.Stage{Name: "up", Target: 4, Duration: 600 * time.Millisecond, Ramp: 400 * time.Millisecond}), r)
		first := map[int]int{} // VU -> index of its first iteration
		for i, it := range r.its {
			if _, ok := first[it.VUID]; !ok {
				first[it.VUID] = i
			}
		}
		if got, want := len(first), 4; got != want {
			t.Fatalf("VUs used = %d, want %d", got, want)
		}
		if first[1] > first[4] {
			t.Errorf("VU 4 started before VU 1: %v", first)
		}
		if first[4] < len(r.its)/8 {
			t.Errorf("VU 4 started at iteration %d of %d: the ramp did not spread VU starts", first[4], len(r.its))
		}
	})
}

func TestGracefulStopLetsIterationsFinish(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var completed atomic.Int32
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if err := sleepFn(150*time.Millisecond)(ctx, it); err != nil {
				return err
			}
			completed.Add(1)
			return nil
		}}
		runPlan(t, closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: 50 * time.Millisecond}), r)
		if got, want := int(completed.Load()), len(r.its); got != want {
			t.Errorf("completed %d of %d iterations; graceful stop should let them finish", got, want)
		}
	})
}

func TestGracefulStopCancelsLongIterations(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var canceled atomic.Int32
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			<-ctx.Done()
			canceled.Add(1)
			return fmt.Errorf("chat: %w", ctx.Err())
		}}
		p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: 50 * time.Millisecond})
		p.Scenarios[0].GracefulStop = 100 * time.Millisecond
		start := time.Now()
		sink := runPlan(t, p, r)
		if got, want := time.Since(start), 150*time.Millisecond; got != want {
			t.Errorf("Run took %v, want the 50ms stage and the 100ms graceful stop", got)
		}
		if got, want := int(canceled.Load()), 2; got != want {
			t.Errorf("canceled iterations = %d, want %d", got, want)
		}
		assertGracefulStopReported(t, sink, 2)
	})
}

func TestScriptErrorsAreRecordedAndRunGoesOn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			time.Sleep(2 * time.Millisecond)
			if it.Iteration%2 == 0 {
				return errors.New("chat.lua:7: attempt to index a nil value")
			}
			return nil
		}}
		sink := runPlan(t, closedPlan(plan.Stage{Name: "c1", Target: 1, Duration: 100 * time.Millisecond}), r)
		if len(sink.errs) == 0 || len(sink.errs) >= len(r.its) {
			t.Fatalf("script errors = %d of %d iterations", len(sink.errs), len(r.its))
		}
		if e := sink.errs[0]; e.Stage != "c1" || e.Scenario != "s" || !strings.Contains(e.Message, "chat.lua:7") {
			t.Errorf("error = %+v", e)
		}
	})
}

func TestWarmupRunsExactRequestsFirst(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: 50 * time.Millisecond})
		p.Warmup.Requests = 5
		runPlan(t, p, r)
		warm := 0
		for i, it := range r.its {
			if it.Warmup {
				warm++
				if it.Stage != WarmupStage {
					t.Errorf("warmup iteration in stage %q", it.Stage)
				}
				if i >= 5 {
					t.Errorf("warmup iteration at position %d, after measured ones", i)
				}
			}
		}
		if got, want := warm, 5; got != want {
			t.Errorf("warmup iterations = %d, want %d", got, want)
		}
	})
}

func TestVUInitErrorStopsBeforeLoad(t *testing.T) {
	r := &fakeRunner{initErr: errors.New("chat.lua:3: boom"), fn: sleepFn(0)}
	err := New(closedPlan(plan.Stage{Name: "c1", Target: 1, Duration: time.Second}), r, &fakeSink{}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "chat.lua:3: boom") {
		t.Fatalf("err = %v", err)
	}
	if len(r.its) != 0 {
		t.Errorf("%d iterations ran after a failed init", len(r.its))
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Hour)}
		sink := &fakeSink{}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := New(closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Hour}), r, sink).Run(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got, want := time.Since(start), 100*time.Millisecond; got != want {
			t.Errorf("Run took %v, want %v: it should stop at the cancel", got, want)
		}
		if got, want := len(sink.ended), 1; got != want {
			t.Fatalf("stages ended = %d, want %d (the interrupted stage still closes)", got, want)
		}
		if !sink.ended[0].Cut {
			t.Error("the interrupted stage is not marked cut")
		}
	})
}

func TestStatusReportsStageAndVUs(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Millisecond)}
		e := New(closedPlan(plan.Stage{Name: "only", Target: 2, Duration: 300 * time.Millisecond}), r, &fakeSink{})
		done := make(chan error)
		go func() { done <- e.Run(context.Background()) }()
		time.Sleep(150 * time.Millisecond)
		st := e.Status()
		if st.Phase != PhaseRunning || len(st.Scenarios) != 1 {
			t.Fatalf("status = %+v", st)
		}
		if s := st.Scenarios[0]; s.Stage != "only" || s.ActiveVUs != 2 || s.Elapsed <= 0 {
			t.Errorf("scenario status = %+v", s)
		}
		<-done
		if got := e.Status().Phase; got != PhaseDone {
			t.Errorf("phase after Run = %q", got)
		}
	})
}

// assertGracefulStopReported checks that n iterations cut off by
// graceful_stop were reported, naming the option, and nothing else.
func assertGracefulStopReported(t *testing.T, sink *fakeSink, n int) {
	t.Helper()
	if len(sink.errs) != n {
		t.Fatalf("reported %d cut-off iterations, want %d: %v", len(sink.errs), n, sink.errs)
	}
	for _, e := range sink.errs {
		if !strings.Contains(e.Message, "graceful_stop") {
			t.Errorf("report %q does not name graceful_stop", e.Message)
		}
	}
}

func TestCanceledByTheRunIsNotReported(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(time.Hour)}
		sink := &fakeSink{}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		New(closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Hour}), r, sink).Run(ctx)
		if len(sink.errs) != 0 {
			t.Errorf("iterations canceled by Ctrl-C were reported: %v", sink.errs)
		}
	})
}

// A warmup of a duration before an arrival-rate scenario arrives at the
// first stage's rate, not on every VU back to back: 32 VUs answering in
// a second would keep 32 requests at the server where the load keeps 10.
func TestWarmupOfADurationKeepsAnOpenModelsRate(t *testing.T) {
	tests := []struct {
		name      string
		stage     plan.Stage
		startRate float64
		executor  string
		want      int // warmup iterations in 2 s
	}{
		{"constant rate", plan.Stage{Name: "r10", Rate: 10, Duration: time.Second}, 0, plan.ExecutorConstantArrivalRate, 20},
		{"a ramp starts at its start rate", plan.Stage{Name: "up", Rate: 40, Duration: time.Second, Ramp: time.Second}, 5,
			plan.ExecutorRampingArrivalRate, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var warm, peak, now atomic.Int32
				r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
					if it.Warmup {
						warm.Add(1)
						n := now.Add(1)
						defer now.Add(-1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
					}
					return sleepFn(time.Second)(ctx, it)
				}}
				p := openPlan(32, 32, tt.stage)
				p.Scenarios[0].Executor, p.Scenarios[0].StartRate = tt.executor, tt.startRate
				p.Warmup.Duration = 2 * time.Second
				runPlan(t, p, r)
				if got := int(warm.Load()); got < tt.want-1 || got > tt.want {
					t.Errorf("%d warmup iterations, want %d: one per arrival at the first stage's rate", got, tt.want)
				}
				if got, limit := peak.Load(), int32(tt.want/2)+1; got > limit {
					t.Errorf("%d warmup iterations at once, want at most %d", got, limit)
				}
			})
		})
	}
}

// A closed model's warmup of a duration still runs its VUs back to back.
func TestWarmupOfADurationClosedRunsEveryVU(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var warm atomic.Int32
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if it.Warmup {
				warm.Add(1)
			}
			return sleepFn(time.Second)(ctx, it)
		}}
		p := closedPlan(plan.Stage{Name: "c4", Target: 4, Duration: time.Second})
		p.Warmup.Duration = 2500 * time.Millisecond
		runPlan(t, p, r)
		if got, want := warm.Load(), int32(3*4); got != want {
			t.Errorf("%d warmup iterations, want %d (4 VUs, 3 rounds, the last cut)", got, want)
		}
	})
}
