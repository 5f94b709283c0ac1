package executor

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// openPlan is one arrival-rate scenario with constant spacing.
func openPlan(prealloc, maxVUs int, stages ...engine.Stage) engine.Plan {
	sc := openScenario(engine.ArrivalConstant, stages...)
	sc.PreAllocatedVUs, sc.MaxVUsCap = prealloc, maxVUs
	sc.GracefulStop = 2 * time.Second
	return engine.Plan{Seed: 1, Scenarios: []engine.Scenario{sc}}
}

func noop(context.Context, engine.Iteration) error { return nil }

func TestConstantArrivalRateStartsEachIterationOnSchedule(t *testing.T) {
	r := &fakeRunner{fn: noop}
	p := openPlan(5, 5, engine.Stage{Name: "r200", Rate: 200, Duration: time.Second})
	p.Scenarios[0].Executor = engine.ExecutorConstantArrivalRate
	sink := runPlan(t, p, r)

	// Constant spacing puts exactly 200 arrivals in the second; on a busy
	// machine a few may find every VU busy, but none is lost.
	if got, want := len(r.its)+len(sink.drops), 200; got != want {
		t.Errorf("iterations %d + dropped %d = %d, want %d", len(r.its), len(sink.drops), got, want)
	}
	if len(r.its) < 150 {
		t.Errorf("only %d of 200 iterations ran with a no-op VU", len(r.its))
	}
	if got, want := len(sink.marks), len(r.its); got != want {
		t.Errorf("iteration marks = %d, want %d", got, want)
	}
	first := sink.started[0].At
	for _, m := range sink.marks {
		if m.Scheduled.IsZero() || m.Stage != "r200" {
			t.Fatalf("mark %+v: no schedule or wrong stage", m)
		}
		if m.Started.Before(m.Scheduled) {
			t.Errorf("iteration started %v before its schedule", m.Scheduled.Sub(m.Started))
		}
		if off := m.Scheduled.Sub(first); off < -time.Millisecond || off >= time.Second {
			t.Errorf("iteration scheduled at %v, outside the stage", off)
		}
	}
	for _, it := range r.its {
		if it.Scheduled.IsZero() {
			t.Fatalf("iteration %+v has no Scheduled", it)
		}
	}
	if got, want := int(r.closed.Load()), 5; got != want {
		t.Errorf("VUs closed = %d, want %d", got, want)
	}
}

func TestArrivalRateDropsAndGrowsVUsUpToTheCap(t *testing.T) {
	r := &fakeRunner{fn: sleepFn(300 * time.Millisecond)}
	p := openPlan(2, 5, engine.Stage{Name: "r100", Rate: 100, Duration: time.Second})
	sink := &fakeSink{}
	e := New(p, r, sink)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// 5 VUs busy 300 ms each cannot start 100 iterations a second.
	if len(sink.drops) == 0 {
		t.Fatal("no iteration dropped")
	}
	if got, want := len(r.its)+len(sink.drops), 100; got != want {
		t.Errorf("iterations %d + dropped %d = %d, want %d", len(r.its), len(sink.drops), got, want)
	}
	if got, want := r.made(), 5; got != want {
		t.Errorf("VUs made = %d, want exactly the cap %d", got, want)
	}
	if got := int(r.peak.Load()); got > 5 {
		t.Errorf("peak concurrency = %d, above the cap", got)
	}
	for _, d := range sink.drops {
		if d.Scenario != "open" || d.Stage != "r100" || d.Scheduled.IsZero() {
			t.Fatalf("drop mark %+v", d)
		}
	}
	st := e.Status().Scenarios[0]
	if got, want := st.Dropped, int64(len(sink.drops)); got != want {
		t.Errorf("status dropped = %d, want %d", got, want)
	}
	if got, want := st.AllocatedVUs, 5; got != want {
		t.Errorf("status allocated VUs = %d, want %d", got, want)
	}
	if got, want := int(r.closed.Load()), 5; got != want {
		t.Errorf("VUs closed = %d, want %d", got, want)
	}
	assertUniqueIDs(t, r)
}

func assertUniqueIDs(t *testing.T, r *fakeRunner) {
	t.Helper()
	seen := map[int]bool{}
	for _, id := range r.ids {
		if seen[id] || id < 1 {
			t.Errorf("VU id %d repeated or not 1-based: %v", id, r.ids)
		}
		seen[id] = true
	}
}

func TestRampingArrivalRateCountsFollowStageRates(t *testing.T) {
	r := &fakeRunner{fn: noop}
	p := openPlan(10, 20,
		engine.Stage{Name: "a", Rate: 10, Duration: time.Second},                   // 100/s
		engine.Stage{Name: "b", Rate: 30, Duration: time.Second},                   // 300/s
		engine.Stage{Name: "c", Rate: 0, Duration: time.Second, Ramp: time.Second}, // 300 → 0: 150
	)
	p.Scenarios[0].TimeUnit = 100 * time.Millisecond
	sink := runPlan(t, p, r)

	counts := map[string]int{}
	for _, m := range sink.marks {
		counts[m.Stage]++
	}
	for _, d := range sink.drops {
		counts[d.Stage]++
	}
	for stage, want := range map[string]int{"a": 100, "b": 300, "c": 150} {
		if got := counts[stage]; got < want-1 || got > want+1 {
			t.Errorf("arrivals in stage %s = %d, want %d ± 1", stage, got, want)
		}
	}
	if got, want := len(sink.started), 3; got != want {
		t.Fatalf("stages started = %d, want %d", got, want)
	}
	for i, want := range []float64{100, 300, 150} { // c: the mean of its ramp
		m := sink.started[i]
		if math.Abs(m.Rate-want) > 1e-9 || m.Target != 0 || m.Index != i {
			t.Errorf("stage mark %d = %+v, want rate %v/s", i, m, want)
		}
		if e := sink.ended[i]; e.Rate != m.Rate || e.At.Before(m.At) {
			t.Errorf("stage %d ended %+v after started %+v", i, e, m)
		}
	}
	// An iteration belongs to the stage it was scheduled in.
	for _, m := range sink.marks {
		i := map[string]int{"a": 0, "b": 1, "c": 2}[m.Stage]
		if m.Scheduled.Before(sink.started[i].At.Add(-time.Millisecond)) || m.Scheduled.After(sink.ended[i].At) {
			t.Fatalf("iteration scheduled at %v is outside stage %s", m.Scheduled, m.Stage)
		}
	}
}

func TestArrivalRateCancelsNeverEndingIterationsAtScenarioEnd(t *testing.T) {
	var canceled atomic.Int32
	r := &fakeRunner{fn: func(ctx context.Context, _ engine.Iteration) error {
		<-ctx.Done()
		canceled.Add(1)
		return fmt.Errorf("chat: %w", ctx.Err())
	}}
	p := openPlan(10, 10, engine.Stage{Name: "r10", Rate: 10, Duration: 300 * time.Millisecond})
	p.Scenarios[0].GracefulStop = 100 * time.Millisecond
	start := time.Now()
	sink := runPlan(t, p, r)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v; graceful stop is 100ms", d)
	}
	if got, want := int(canceled.Load()), len(r.its); got != want || got == 0 {
		t.Errorf("canceled iterations = %d, want all %d", got, want)
	}
	assertGracefulStopReported(t, sink, len(r.its))
}

func TestArrivalRateStatusShowsRateAndVUs(t *testing.T) {
	r := &fakeRunner{fn: sleepFn(50 * time.Millisecond)}
	p := openPlan(3, 8, engine.Stage{Name: "r40", Rate: 40, Duration: 600 * time.Millisecond})
	e := New(p, r, &fakeSink{})
	done := make(chan error)
	go func() { done <- e.Run(context.Background()) }()
	var st ScenarioStatus
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st = e.Status().Scenarios[0]; st.Stage != "" {
			break
		}
	}
	if !st.Done {
		if got, want := st.Rate, 40.0; got != want {
			t.Errorf("status rate = %v, want %v", got, want)
		}
		if st.AllocatedVUs < 3 || st.AllocatedVUs > 8 || st.BusyVUs > st.AllocatedVUs {
			t.Errorf("status VUs: busy %d, allocated %d", st.BusyVUs, st.AllocatedVUs)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := e.Status().Scenarios[0]; !st.Done || st.Rate != 0 || st.BusyVUs != 0 {
		t.Errorf("status after Run = %+v", st)
	}
}

func TestScheduleLagStaysSmall(t *testing.T) {
	r := &fakeRunner{fn: noop}
	p := openPlan(20, 20, engine.Stage{Name: "r500", Rate: 500, Duration: time.Second})
	p.Scenarios[0].Arrival = engine.ArrivalPoisson
	sink := runPlan(t, p, r)
	lags := make([]time.Duration, 0, len(sink.marks))
	for _, m := range sink.marks {
		lags = append(lags, m.Started.Sub(m.Scheduled))
	}
	if len(lags) < 200 {
		t.Fatalf("only %d iterations at 500/s for 1s", len(lags))
	}
	// A generous bound: it catches a scheduler that waits on coarse
	// timers or queues behind busy VUs, not a noisy machine.
	if p50 := percentile(lags, 0.5); p50 > 25*time.Millisecond {
		t.Errorf("schedule lag p50 = %v", p50)
	}
}

func TestMeanRateAveragesTheRamp(t *testing.T) {
	sc := engine.Scenario{StartRate: 2, Stages: []engine.Stage{
		{Rate: 4, Duration: 10 * time.Second, Ramp: 10 * time.Second},
		{Rate: 4, Duration: 10 * time.Second},
		{Rate: 0, Duration: 10 * time.Second, Ramp: 5 * time.Second},
	}}
	for i, want := range []float64{3, 4, 1} {
		if got := meanRate(sc, i); got != want {
			t.Errorf("meanRate(stage %d) = %v, want %v", i, got, want)
		}
	}
}
