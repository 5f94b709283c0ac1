package executor

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// openPlan is one arrival-rate scenario with constant spacing.
func openPlan(prealloc, maxVUs int, stages ...plan.Stage) plan.Plan {
	sc := openScenario(plan.ArrivalConstant, stages...)
	sc.PreAllocatedVUs, sc.MaxVUsCap = prealloc, maxVUs
	sc.GracefulStop = 2 * time.Second
	return plan.Plan{Seed: 1, Scenarios: []plan.Scenario{sc}}
}

func noop(context.Context, engine.Iteration) error { return nil }

func TestConstantArrivalRateStartsEachIterationOnSchedule(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: noop}
		p := openPlan(5, 5, plan.Stage{Name: "r200", Rate: 200, Duration: time.Second})
		p.Scenarios[0].Executor = plan.ExecutorConstantArrivalRate
		sink := runPlan(t, p, r)

		// Constant spacing puts exactly 200 arrivals in the second, and a
		// no-op VU is always free again for the next.
		if got, want := len(r.its), 200; got != want || len(sink.drops) != 0 {
			t.Errorf("iterations %d, dropped %d; want %d, none dropped", got, len(sink.drops), want)
		}
		if got, want := len(sink.marks), len(r.its); got != want {
			t.Errorf("iteration marks = %d, want %d", got, want)
		}
		first := sink.started[0].At
		for _, m := range sink.marks {
			if m.Scheduled.IsZero() || m.Stage != "r200" {
				t.Fatalf("mark %+v: no schedule or wrong stage", m)
			}
			if !m.Started.Equal(m.Scheduled) {
				t.Errorf("iteration started %v after its schedule; on a fake clock, want on time", m.Started.Sub(m.Scheduled))
			}
			if off := m.Scheduled.Sub(first); off < 0 || off >= time.Second || off%(5*time.Millisecond) != 0 {
				t.Errorf("iteration scheduled at %v, want a multiple of 5ms within the stage", off)
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
	})
}

func TestArrivalRateDropsAndGrowsVUsUpToTheCap(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(300 * time.Millisecond)}
		p := openPlan(2, 5, plan.Stage{Name: "r100", Rate: 100, Duration: time.Second})
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
	})
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
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: noop}
		p := openPlan(10, 20,
			plan.Stage{Name: "a", Rate: 10, Duration: time.Second},                   // 100/s
			plan.Stage{Name: "b", Rate: 30, Duration: time.Second},                   // 300/s
			plan.Stage{Name: "c", Rate: 0, Duration: time.Second, Ramp: time.Second}, // 300 → 0: 150
		)
		p.Scenarios[0].TimeUnit = 100 * time.Millisecond
		t0 := time.Now()
		sink := runPlan(t, p, r)

		counts := map[string]int{}
		for _, m := range sink.marks {
			counts[m.Stage]++
		}
		for _, d := range sink.drops {
			counts[d.Stage]++
		}
		// Constant arrivals sit at Λ = 0, 1, 2, ...: exact counts.
		for stage, want := range map[string]int{"a": 100, "b": 300, "c": 150} {
			if got := counts[stage]; got != want {
				t.Errorf("arrivals in stage %s = %d, want %d", stage, got, want)
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
			// Windows are the planned ones: the scenario's start plus whole seconds.
			if got, want := m.At.Sub(t0), time.Duration(i)*time.Second; got != want {
				t.Errorf("stage %d starts at %v, want %v", i, got, want)
			}
			if e := sink.ended[i]; e.Rate != m.Rate || e.At.Sub(m.At) != time.Second || e.Cut {
				t.Errorf("stage %d ended %+v, started %+v; want a 1s window", i, e, m)
			}
		}
		// An iteration belongs to the stage it was scheduled in.
		for _, m := range sink.marks {
			i := map[string]int{"a": 0, "b": 1, "c": 2}[m.Stage]
			if m.Scheduled.Before(sink.started[i].At) || !m.Scheduled.Before(sink.ended[i].At) {
				t.Fatalf("iteration scheduled at %v is outside stage %s", m.Scheduled, m.Stage)
			}
		}
	})
}

func TestArrivalRateCancelsNeverEndingIterationsAtScenarioEnd(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var canceled atomic.Int32
		r := &fakeRunner{fn: func(ctx context.Context, _ engine.Iteration) error {
			<-ctx.Done()
			canceled.Add(1)
			return fmt.Errorf("chat: %w", ctx.Err())
		}}
		p := openPlan(10, 10, plan.Stage{Name: "r10", Rate: 10, Duration: 300 * time.Millisecond})
		p.Scenarios[0].GracefulStop = 100 * time.Millisecond
		start := time.Now()
		sink := runPlan(t, p, r)
		if got, want := time.Since(start), 400*time.Millisecond; got != want {
			t.Errorf("Run took %v, want the 300ms stage and the 100ms graceful stop", got)
		}
		if got, want := int(canceled.Load()), len(r.its); got != want || got == 0 {
			t.Errorf("canceled iterations = %d, want all %d", got, want)
		}
		assertGracefulStopReported(t, sink, len(r.its))
	})
}

func TestArrivalRateStatusShowsRateAndVUs(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(50 * time.Millisecond)}
		p := openPlan(3, 8, plan.Stage{Name: "r40", Rate: 40, Duration: 600 * time.Millisecond})
		e := New(p, r, &fakeSink{})
		done := make(chan error)
		go func() { done <- e.Run(context.Background()) }()
		// Look between two arrivals (every 25ms): at an arrival's instant an
		// iteration starting and one ending race, and the grower's poke is
		// still on its way; 10ms later nothing is in flight.
		time.Sleep(310 * time.Millisecond)
		synctest.Wait()
		st := e.Status().Scenarios[0]
		if got, want := st.Rate, 40.0; got != want || st.Stage != "r40" {
			t.Errorf("status rate = %v in stage %q, want %v in r40", got, st.Stage, want)
		}
		// 40/s of 50ms iterations keep 2 VUs busy (those started at 275ms
		// and 300ms); the pool keeps 2 idle beside them (its margin),
		// within max_vus 8.
		if st.BusyVUs != 2 || st.AllocatedVUs < st.BusyVUs+poolMinSpare || st.AllocatedVUs > 8 {
			t.Errorf("status VUs: busy %d, allocated %d; want 2 busy and 2 idle beside them, within 8", st.BusyVUs, st.AllocatedVUs)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if st := e.Status().Scenarios[0]; !st.Done || st.Rate != 0 || st.BusyVUs != 0 {
			t.Errorf("status after Run = %+v", st)
		}
	})
}

// On a fake clock the scheduler's own logic adds no lag at all: every
// iteration starts at its intended time.
func TestScheduleHasNoLagOfItsOwn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: noop}
		p := openPlan(20, 20, plan.Stage{Name: "r500", Rate: 500, Duration: time.Second})
		p.Scenarios[0].Arrival = plan.ArrivalPoisson
		sink := runPlan(t, p, r)
		if len(sink.marks) < 400 {
			t.Fatalf("only %d iterations at 500/s for 1s", len(sink.marks))
		}
		for _, m := range sink.marks {
			if lag := m.Started.Sub(m.Scheduled); lag != 0 {
				t.Fatalf("schedule lag %v, want 0", lag)
			}
		}
	})
}

// The real sleeper (nanosleep) on the real clock. The bound is generous,
// to hold at a load average of 15 on two cores: it catches a scheduler
// that waits on the wrong deadline or queues behind busy VUs, not a noisy
// machine. BenchmarkArrivalScheduler measures the precision.
func TestScheduleLagStaysSmall(t *testing.T) {
	r := &fakeRunner{fn: noop}
	p := openPlan(20, 20, plan.Stage{Name: "r500", Rate: 500, Duration: time.Second})
	p.Scenarios[0].Arrival = plan.ArrivalPoisson
	sink := runPlan(t, p, r)
	lags := make([]time.Duration, 0, len(sink.marks))
	for _, m := range sink.marks {
		lags = append(lags, m.Started.Sub(m.Scheduled))
	}
	if len(lags) < 200 {
		t.Fatalf("only %d iterations at 500/s for 1s", len(lags))
	}
	if p50 := percentile(lags, 0.5); p50 > 100*time.Millisecond {
		t.Errorf("schedule lag p50 = %v", p50)
	}
}

// The schedule's integral and the stage marks' rates come from one
// definition (engine.StageLoads): each stage's expected arrivals are its
// mark's mean rate × its duration, cut ramps included.
func TestProfileAgreesWithStageLoads(t *testing.T) {
	sc := plan.Scenario{Executor: plan.ExecutorRampingArrivalRate, StartRate: 2, Stages: []plan.Stage{
		{Rate: 4, Duration: 10 * time.Second, Ramp: 10 * time.Second},
		{Rate: 4, Duration: 10 * time.Second},
		{Rate: 0, Duration: 10 * time.Second, Ramp: 5 * time.Second},
		{Rate: 10, Duration: 10 * time.Second, Ramp: 20 * time.Second}, // cut at 5/s
		{Rate: 0, Duration: 0},
		{Rate: 1, Duration: 10 * time.Second, Ramp: 10 * time.Second}, // from 0
	}}
	p, err := newRateProfile(sc)
	if err != nil {
		t.Fatal(err)
	}
	loads := sc.StageLoads()
	for i, want := range []float64{30, 40, 10, 25, 0, 5} {
		got := p.expected(p.stageEnds[i]) - p.expected(p.stageStart(i))
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("stage %d: profile expects %v arrivals, want %v", i, got, want)
		}
		if mark := loads[i].Mean() * sc.Stages[i].Duration.Seconds(); math.Abs(mark-want) > 1e-9 {
			t.Errorf("stage %d: mark rate × duration = %v, want %v", i, mark, want)
		}
	}
	if got, want := p.rateAt(35*time.Second), 5.0*0.5; got != want {
		t.Errorf("rate half-way through the cut ramp = %v, want %v", got, want)
	}
}
