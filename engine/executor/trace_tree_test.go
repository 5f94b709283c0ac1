package executor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// child is record i, timed gap after the answer of the arrival at index
// parent (0-based) in the plan's arrivals; at is its earliest time.
func child(i, parent int, at, gap time.Duration) plan.TraceArrival {
	return plan.TraceArrival{At: at, Record: i, Parent: parent + 1, Delay: gap}
}

// takes is a runner whose iteration of record r lasts d[r] (10ms when not
// given): the server's answer time, slowed where a test says.
func takes(d map[int]time.Duration) func(context.Context, engine.Iteration) error {
	return func(ctx context.Context, it engine.Iteration) error {
		dur, ok := d[it.Trace.Record]
		if !ok {
			dur = 10 * time.Millisecond
		}
		return sleepFn(dur)(ctx, it)
	}
}

// A child starts exactly at its parent's end plus its gap, however slow
// the parent's answer; the stage lasts until the last record has run.
func TestTraceChildrenStartAtTheirParentsAnswerPlusGap(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		arrivals []plan.TraceArrival
		took     map[int]time.Duration
		want     map[int]time.Duration // record -> start
		window   time.Duration         // the stage's end
	}{
		{
			name:     "a slow parent stretches its child",
			arrivals: []plan.TraceArrival{at(0, 0), child(1, 0, 50*ms, 50*ms)},
			took:     map[int]time.Duration{0: 300 * ms},
			want:     map[int]time.Duration{0: 0, 1: 350 * ms},
			window:   360 * ms,
		},
		{
			name:     "a chain of three",
			arrivals: []plan.TraceArrival{at(0, 0), child(1, 0, 20*ms, 20*ms), child(2, 1, 50*ms, 30*ms)},
			took:     map[int]time.Duration{0: 100 * ms, 1: 200 * ms, 2: 40 * ms},
			want:     map[int]time.Duration{0: 0, 1: 120 * ms, 2: 350 * ms},
			window:   390 * ms,
		},
		{
			name: "siblings each keep their own gap",
			arrivals: []plan.TraceArrival{at(0, 0), child(1, 0, 0, 0), child(2, 0, 25*ms, 25*ms),
				at(4, 100*ms), child(3, 0, 500*ms, 500*ms)},
			took:   map[int]time.Duration{0: 200 * ms},
			want:   map[int]time.Duration{0: 0, 1: 200 * ms, 2: 225 * ms, 3: 700 * ms, 4: 100 * ms},
			window: 710 * ms,
		},
		{
			name:     "the window ends when the last record has run",
			arrivals: []plan.TraceArrival{at(0, 0), child(1, 0, 5*ms, 5*ms), at(2, time.Second)},
			want:     map[int]time.Duration{0: 0, 1: 15 * ms, 2: time.Second},
			window:   time.Second + 10*ms,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := tracePlan(4, tc.arrivals...)
				p.Scenarios[0].Trace.Children = 1
				r := &fakeRunner{fn: takes(tc.took)}
				t0 := time.Now()
				sink := runPlan(t, p, r)
				if len(sink.drops) != 0 {
					t.Fatalf("%d dropped", len(sink.drops))
				}
				got := byRecord(t, r)
				started := map[time.Time]time.Time{}
				for _, m := range sink.marks {
					started[m.Scheduled] = m.Started
				}
				for rec, want := range tc.want {
					it, ok := got[rec]
					if !ok {
						t.Fatalf("record %d never ran", rec)
					}
					if off := it.Scheduled.Sub(t0); off != want {
						t.Errorf("record %d scheduled at %v, want %v", rec, off, want)
					}
					if off := started[it.Scheduled].Sub(t0); off != want {
						t.Errorf("record %d started at %v, want %v", rec, off, want)
					}
				}
				if len(sink.ended) != 1 || sink.ended[0].At.Sub(t0) != tc.window || sink.ended[0].Cut {
					t.Errorf("stage ended %+v, want at %v, not cut", sink.ended, tc.window)
				}
			})
		})
	}
}

// A parent dropped for want of a VU never answers: its whole subtree is
// dropped and counted, and the run still ends when the rest has run.
func TestTraceDroppedParentDropsItsSubtree(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ms := time.Millisecond
		p := tracePlan(1, at(0, 0), at(1, 10*ms), child(2, 1, 20*ms, 10*ms), child(3, 2, 30*ms, 10*ms),
			child(4, 0, 100*ms, 0))
		p.Scenarios[0].Trace.Children = 3
		r := &fakeRunner{fn: takes(map[int]time.Duration{0: 100 * ms})}
		sink := &fakeSink{}
		e := New(p, r, sink)
		t0 := time.Now()
		if err := e.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		reasons := map[string]int{}
		for _, d := range sink.drops {
			reasons[d.Reason]++
		}
		if reasons[engine.DropMaxVUs] != 1 || reasons[engine.DropParent] != 2 || len(sink.drops) != 3 {
			t.Errorf("drops %v, want record 1 at max_vus and its two descendants parent_dropped", reasons)
		}
		if got := byRecord(t, r); len(got) != 2 || got[4].Scheduled.Sub(t0) != 100*ms {
			t.Errorf("ran %v, want records 0 and 4 (at 100ms)", got)
		}
		st := e.Status().Scenarios[0]
		if st.Dropped != 3 || st.IterationsDone != 5 {
			t.Errorf("status: %d dropped, %d done; want 3 and 5", st.Dropped, st.IterationsDone)
		}
		if pools := e.Pools(); len(pools) != 1 || pools[0].DroppedParent != 2 || pools[0].DroppedMaxVUs != 1 {
			t.Errorf("pools %+v, want 2 dropped for their parent, 1 at max_vus", pools)
		}
		if got := time.Since(t0); got != 110*ms {
			t.Errorf("run took %v, want 110ms (record 4 ends at 110ms)", got)
		}
	})
}

// An interrupted run: a parent canceled by the graceful stop gave no
// answer, so its children are dropped; a child still waiting out its gap
// is dropped as stopped, with its own children.
func TestTraceStopDropsWhatCannotRun(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ms := time.Millisecond
		p := tracePlan(2, at(0, 0), child(1, 0, 0, 0), at(2, 0), child(3, 2, time.Second, time.Second),
			child(4, 3, time.Second, 0))
		p.Scenarios[0].Trace.Children = 3
		p.Scenarios[0].GracefulStop = 100 * ms
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if it.Trace.Record == 0 {
				<-ctx.Done() // never answers
				return ctx.Err()
			}
			return sleepFn(10*ms)(ctx, it)
		}}
		sink := &fakeSink{}
		e := New(p, r, sink)
		ctx, cancel := context.WithTimeout(t.Context(), 500*ms)
		defer cancel()
		if err := e.Run(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		reasons := map[string]int{}
		for _, d := range sink.drops {
			reasons[d.Reason]++
		}
		// Record 1 (child of the canceled 0) and record 4 (child of 3,
		// which was waiting) for their parents; 3 was stopped.
		if want := map[string]int{engine.DropParent: 2, engine.DropStopped: 1}; fmt.Sprint(reasons) != fmt.Sprint(want) {
			t.Errorf("drops %v, want %v", reasons, want)
		}
		if st := e.Status().Scenarios[0]; st.IterationsDone != 5 {
			t.Errorf("%d records done, want all 5 accounted for", st.IterationsDone)
		}
	})
}

// warm_turns' records run as warmup iterations.
func TestTraceWarmRecordsAreWarmup(t *testing.T) {
	bubble(t, func(t *testing.T) {
		warm := at(0, 0)
		warm.Warm = true
		p := tracePlan(2, warm, child(1, 0, 0, 0))
		p.Scenarios[0].Trace.Children = 1
		r := &fakeRunner{fn: noop}
		sink := runPlan(t, p, r)
		got := byRecord(t, r)
		if !got[0].Warmup || got[1].Warmup {
			t.Errorf("warmup: record 0 %v, record 1 %v; want true, false", got[0].Warmup, got[1].Warmup)
		}
		if len(sink.marks) != 2 || !sink.marks[0].Warmup {
			t.Errorf("marks %+v, want the first one warmup", sink.marks)
		}
	})
}

// treeTrace is 12 trees of a root and 2 to 4 descendants, among 6 records
// of no tree.
func treeTrace() []plan.TraceArrival {
	ms := time.Millisecond
	var out []plan.TraceArrival
	rec := 0
	add := func(a plan.TraceArrival) int {
		a.Record = rec
		rec++
		out = append(out, a)
		return len(out) - 1
	}
	for i := range 12 {
		off := time.Duration(i) * 15 * ms
		root := add(at(0, off))
		if i%3 == 0 {
			add(at(0, off+ms))
		}
		kid := add(child(0, root, off+5*ms, 5*ms))
		add(child(0, root, off+8*ms, 8*ms))
		if i%2 == 0 {
			add(child(0, kid, off+9*ms, 4*ms))
		}
	}
	return out
}

// A trace of trees is dealt to segments whole: together they replay the
// whole trace, each record at the same time, each tree in one segment.
func TestSegmentedTreesStayWhole(t *testing.T) {
	for _, n := range segmentCounts {
		t.Run(fmt.Sprintf("in %d", n), func(t *testing.T) {
			p := tracePlan(28, treeTrace()...)
			p.Scenarios[0].Trace.Children = 30
			whole, segs := runSegments(t, p, n, sleepFn(20*time.Millisecond))
			if len(whole.sink.drops) != 0 || len(whole.runner.its) != len(treeTrace()) {
				t.Fatalf("the whole run dropped %d, ran %d", len(whole.sink.drops), len(whole.runner.its))
			}
			got := union(segs, (*segRun).records, compareRecords)
			assertSameSequence(t, "records", got, sorted(whole.records(), compareRecords))
			arrivals := p.Scenarios[0].Trace.Arrivals
			owner := map[int]plan.Segment{}
			for _, s := range segs {
				for _, it := range s.runner.its {
					owner[it.Trace.Record] = s.seg
				}
			}
			for _, a := range arrivals {
				if a.Parent != 0 && owner[a.Record] != owner[arrivals[a.Parent-1].Record] {
					t.Errorf("record %d in segment %v, its parent in %v", a.Record, owner[a.Record], owner[arrivals[a.Parent-1].Record])
				}
			}
		})
	}
}

func TestTraceShareKeepsTreesWhole(t *testing.T) {
	tr := &plan.Trace{Arrivals: []plan.TraceArrival{
		at(0, 0), at(1, 1), child(2, 0, 2, 2), at(3, 3), child(4, 2, 4, 2), child(5, 1, 5, 4),
	}}
	// Units in order: tree 0 (records 0, 2, 4), tree 1 (1, 5), record 3.
	for i, want := range [][]plan.TraceArrival{
		{at(0, 0), child(2, 0, 2, 2), at(3, 3), child(4, 1, 4, 2)},
		{at(1, 1), child(5, 0, 5, 4)},
	} {
		got := traceShare(tr, plan.Segment{Index: i, Count: 2})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("segment %d/2 replays %v, want %v", i, got, want)
		}
	}
}
