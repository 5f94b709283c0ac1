package executor

import (
	"context"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// runPools runs p on r in a bubble's time and returns the sink and the
// pool figures of its one scenario.
func runPools(t *testing.T, p plan.Plan, r *fakeRunner) (*fakeSink, PoolStats) {
	t.Helper()
	sink := &fakeSink{}
	e := New(p, r, sink)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	pools := e.Pools()
	if len(pools) != 1 {
		t.Fatalf("Pools() = %d scenarios, want 1", len(pools))
	}
	return sink, pools[0]
}

// dropReasons counts the sink's drop marks by reason.
func dropReasons(s *fakeSink) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, d := range s.drops {
		out[d.Reason]++
	}
	return out
}

// maxLag is the largest schedule lag of the sink's iteration marks.
func maxLag(s *fakeSink) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m time.Duration
	for _, it := range s.marks {
		m = max(m, it.Started.Sub(it.Scheduled))
	}
	return m
}

// A load that needs many more VUs than were pre-allocated gets them
// without a drop: the pool makes them ahead of the busy count, several at
// a time, and an arrival that finds none idle waits for one being made.
func TestPoolGrowsAheadOfTheLoad(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(400 * time.Millisecond), initDelay: 20 * time.Millisecond}
		// 50/s of 400ms iterations keep 20 VUs busy.
		p := openPlan(1, 200, plan.Stage{Name: "r50", Rate: 50, Duration: 2 * time.Second})
		sink, st := runPools(t, p, r)
		if n := len(sink.drops); n != 0 {
			t.Fatalf("%d iterations dropped (%v), want none below max_vus", n, dropReasons(sink))
		}
		if got, want := len(sink.marks), 100; got != want {
			t.Errorf("%d iterations ran, want %d", got, want)
		}
		// 20 busy, and the margin: max(2, 10% of 20) idle beside them.
		if st.Made < 22 || st.Made > 30 {
			t.Errorf("made %d VUs, want 22 to 30 for 20 busy and a margin of 2", st.Made)
		}
		if st.Grown != st.Made-1 || st.PreAllocatedVUs != 1 || st.MaxVUs != 200 {
			t.Errorf("pool figures %+v, want 1 pre-allocated, the rest grown, max 200", st)
		}
		if st.InitMax != 20*time.Millisecond || st.InitMean() != 20*time.Millisecond {
			t.Errorf("VU init max %v mean %v, want 20ms each", st.InitMax, st.InitMean())
		}
		if lag := maxLag(sink); lag > PoolWait {
			t.Errorf("schedule lag up to %v, want within the pool's wait %v", lag, PoolWait)
		}
	})
}

// Once the load settles, the pool stops growing at the busy count plus
// its margin: it does not make VUs up to max_vus for nothing.
func TestPoolMarginIsBounded(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(100 * time.Millisecond)}
		// 100/s of 100ms iterations keep 10 VUs busy; the margin is 2.
		p := openPlan(1, 500, plan.Stage{Name: "r100", Rate: 100, Duration: 3 * time.Second})
		sink, st := runPools(t, p, r)
		if len(sink.drops) != 0 {
			t.Fatalf("dropped %v, want none", dropReasons(sink))
		}
		if st.Made < 12 || st.Made > 16 {
			t.Errorf("made %d VUs for 10 busy, want 12 to 16 (busy + margin 2)", st.Made)
		}
	})
}

// An arrival that finds every VU busy waits for the VU being made when it
// comes within PoolWait: its schedule lag shows the wait, nothing drops.
func TestPoolArrivalWaitsForAVUBeingMade(t *testing.T) {
	bubble(t, func(t *testing.T) {
		const init = 60 * time.Millisecond
		r := &fakeRunner{fn: sleepFn(time.Second), initDelay: init}
		// A burst: 4 arrivals 10ms apart, each needing a VU of its own.
		p := openPlan(1, 10, plan.Stage{Name: "burst", Rate: 100, Duration: 40 * time.Millisecond})
		sink, st := runPools(t, p, r)
		if len(sink.drops) != 0 {
			t.Fatalf("dropped %v, want every arrival to wait for its VU", dropReasons(sink))
		}
		if len(sink.marks) != 4 || st.Waited == 0 {
			t.Fatalf("%d iterations ran, %d waited; want 4 run, some after a wait", len(sink.marks), st.Waited)
		}
		if st.WaitMax <= 0 || st.WaitMax > init || maxLag(sink) != st.WaitMax {
			t.Errorf("longest wait %v (lag %v), want above 0, within one VU's init %v, and equal to the lag", st.WaitMax, maxLag(sink), init)
		}
	})
}

// Past PoolWait an arrival is dropped, as "growing": the VU it waited for
// took longer to make. The VU still joins the pool for later arrivals.
func TestPoolDropsAfterItsWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(2 * time.Second), initDelay: 300 * time.Millisecond}
		p := openPlan(1, 10, plan.Stage{Name: "r10", Rate: 10, Duration: time.Second})
		sink, st := runPools(t, p, r)
		reasons := dropReasons(sink)
		if reasons[engine.DropGrowing] == 0 || len(reasons) != 1 {
			t.Fatalf("drops by reason %v, want only %q", reasons, engine.DropGrowing)
		}
		if st.DroppedGrowing != int64(len(sink.drops)) || st.DroppedMaxVUs != 0 {
			t.Errorf("pool figures %+v, want every drop counted as growing", st)
		}
		if lag := maxLag(sink); lag > PoolWait {
			t.Errorf("an iteration started %v late, beyond the wait bound %v", lag, PoolWait)
		}
		if got := len(sink.marks) + len(sink.drops); got != 10 {
			t.Errorf("%d run + dropped, want all 10 arrivals accounted for", got)
		}
	})
}

// At max_vus an arrival that finds every VU busy is dropped at once, as
// "max_vus": no VU is coming for it.
func TestPoolAtMaxDropsAtOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(2 * time.Second)}
		p := openPlan(2, 2, plan.Stage{Name: "r10", Rate: 10, Duration: time.Second})
		sink, st := runPools(t, p, r)
		if got, want := dropReasons(sink), 8; got[engine.DropMaxVUs] != want || len(got) != 1 {
			t.Fatalf("drops by reason %v, want %d at %q", got, want, engine.DropMaxVUs)
		}
		if st.Waited != 0 || st.DroppedMaxVUs != 8 || st.Made != 2 {
			t.Errorf("pool figures %+v, want 2 VUs, no wait, 8 drops at max_vus", st)
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		for _, d := range sink.drops {
			if d.Stage != "r10" || d.Scenario != "open" {
				t.Errorf("drop mark %+v, want scenario open, stage r10", d)
			}
		}
	})
}

// A VU that cannot be made stops the growth: the failure is a script
// error, and later arrivals that find no VU drop as "vu_failed".
func TestPoolStopsGrowingWhenAVUFails(t *testing.T) {
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: sleepFn(2 * time.Second), initErrAfter: 1}
		p := openPlan(1, 10, plan.Stage{Name: "r10", Rate: 10, Duration: time.Second})
		sink, st := runPools(t, p, r)
		if got := dropReasons(sink); got[engine.DropVUFailed] == 0 || got[engine.DropMaxVUs] != 0 {
			t.Fatalf("drops by reason %v, want them at %q", got, engine.DropVUFailed)
		}
		if len(sink.errs) != 1 || st.Made != 1 {
			t.Errorf("%d script errors, %d VUs; want the one failed init reported once and the one VU kept", len(sink.errs), st.Made)
		}
	})
}
