package executor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// tracePlan is one trace scenario replaying arrivals on vus VUs.
func tracePlan(vus int, arrivals ...plan.TraceArrival) plan.Plan {
	return plan.Plan{Seed: 1, Scenarios: []plan.Scenario{{
		Name: "replay", Executor: plan.ExecutorTrace, Exec: "chat",
		PreAllocatedVUs: vus, MaxVUsCap: vus, GracefulStop: time.Second,
		Trace: &plan.Trace{Source: "trace.jsonl", Arrivals: arrivals, Speedup: 1},
	}}}
}

// at is a sessionless arrival of record i at off.
func at(i int, off time.Duration) plan.TraceArrival {
	return plan.TraceArrival{At: off, Record: i}
}

// turn is record i of session s at off.
func turn(i, s int, off time.Duration) plan.TraceArrival {
	return plan.TraceArrival{At: off, Record: i, Session: s}
}

// byRecord is the iterations run, by trace record.
func byRecord(t *testing.T, r *fakeRunner) map[int]engine.Iteration {
	t.Helper()
	out := map[int]engine.Iteration{}
	for _, it := range r.its {
		if it.Trace == nil {
			t.Fatalf("iteration %+v carries no trace record", it)
		}
		if _, dup := out[it.Trace.Record]; dup {
			t.Fatalf("record %d ran twice", it.Trace.Record)
		}
		out[it.Trace.Record] = it
	}
	return out
}

func TestTraceDispatchesEachRecordAtItsTime(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ms := time.Millisecond
		// Records 0..5 at 0s, 1s, 1s, 1.75s, 5s and 10s of the file,
		// replayed twice as fast: At is already divided by the speedup.
		p := tracePlan(3, at(0, 0), at(1, 500*ms), at(2, 500*ms), at(3, 875*ms), at(4, 2500*ms), at(5, 5*time.Second))
		p.Scenarios[0].Trace.Speedup = 2
		r := &fakeRunner{fn: sleepFn(10 * ms)}
		t0 := time.Now()
		sink := runPlan(t, p, r)

		arrivals := p.Scenarios[0].Trace.Arrivals
		got := byRecord(t, r)
		if len(got) != len(arrivals) || len(sink.drops) != 0 {
			t.Fatalf("%d records ran, %d dropped; want all %d, none dropped", len(got), len(sink.drops), len(arrivals))
		}
		for _, a := range arrivals {
			it := got[a.Record]
			if want := t0.Add(a.At); !it.Scheduled.Equal(want) {
				t.Errorf("record %d scheduled at %v, want %v", a.Record, it.Scheduled.Sub(t0), a.At)
			}
			if *it.Trace != a || it.Stage != "replay" || it.Scenario != "replay" || it.Exec != "chat" {
				t.Errorf("record %d: iteration %+v, trace %+v", a.Record, it, *it.Trace)
			}
		}
		for _, m := range sink.marks {
			if !m.Started.Equal(m.Scheduled) {
				t.Errorf("iteration started %v after its time; on a fake clock, want on time", m.Started.Sub(m.Scheduled))
			}
		}
		assertUniqueIDs(t, r)
		seen := map[int64]bool{}
		for _, it := range r.its {
			if seen[it.RequestID] {
				t.Errorf("request id %d repeated", it.RequestID)
			}
			seen[it.RequestID] = true
		}
		if len(sink.started) != 1 || len(sink.ended) != 1 {
			t.Fatalf("stage marks: %d started, %d ended; want one stage", len(sink.started), len(sink.ended))
		}
		s, e := sink.started[0], sink.ended[0]
		if s.Stage != "replay" || s.Planned != 5*time.Second || !s.At.Equal(t0) || e.At.Sub(s.At) != 5*time.Second || e.Cut {
			t.Errorf("stage window %+v .. %+v, want replay over the trace's 5s", s, e)
		}
		if got, want := s.Rate, 6/5.0; math.Abs(got-want) > 1e-12 || s.Target != 0 {
			t.Errorf("stage rate %v, want %v arrivals/s", got, want)
		}
	})
}

func TestTraceNamesItsStageFromThePlan(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := tracePlan(1, at(0, 0), at(1, time.Second))
		p.Scenarios[0].Stages = []plan.Stage{{Name: "mooncake", Duration: time.Second}}
		r := &fakeRunner{fn: noop}
		sink := runPlan(t, p, r)
		if len(sink.started) != 1 || sink.started[0].Stage != "mooncake" || len(r.its) != 2 || r.its[1].Stage != "mooncake" {
			t.Errorf("stages %+v, iterations %+v; want both records in mooncake", sink.started, r.its)
		}
	})
}

func TestTraceDropsRecordsWhenNoVUIsFree(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var arrivals []plan.TraceArrival
		for i := range 10 {
			arrivals = append(arrivals, at(i, time.Duration(i)*10*time.Millisecond))
		}
		p := tracePlan(1, arrivals...)
		p.Scenarios[0].MaxVUsCap = 2
		r := &fakeRunner{fn: sleepFn(100 * time.Millisecond)}
		sink := &fakeSink{}
		e := New(p, r, sink)
		t0 := time.Now()
		if err := e.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if len(sink.drops) == 0 || len(r.its)+len(sink.drops) != 10 {
			t.Fatalf("%d ran + %d dropped; want some dropped and 10 in all", len(r.its), len(sink.drops))
		}
		ran := byRecord(t, r)
		for _, d := range sink.drops {
			off := d.Scheduled.Sub(t0)
			if d.Stage != "replay" || off%(10*time.Millisecond) != 0 {
				t.Errorf("drop %+v at %v, want one of the records' times", d, off)
			}
			if _, dup := ran[int(off/(10*time.Millisecond))]; dup {
				t.Errorf("record at %v both ran and was dropped", off)
			}
		}
		if got := r.made(); got != 2 {
			t.Errorf("VUs made = %d, want the cap 2", got)
		}
		st := e.Status().Scenarios[0]
		if st.Dropped != int64(len(sink.drops)) || st.IterationsDone != 10 || st.IterationsTotal != 10 {
			t.Errorf("status %+v: want %d dropped, 10 of 10 records done", st, len(sink.drops))
		}
	})
}

// A session's records run one after another: one whose time comes while
// the previous runs waits for it, on the same VU, and its Scheduled stays
// its own time; other sessions and sessionless records are not held up,
// and a later record goes back to the session's VU.
func TestTraceSessionsRunInOrderOnTheirVU(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ms := time.Millisecond
		p := tracePlan(4,
			turn(0, 1, 0),       // slow: 300ms
			turn(1, 1, 100*ms),  // due while 0 runs: starts at 300ms
			turn(2, 2, 150*ms),  // another session: on time
			at(3, 200*ms),       // no session: on time
			turn(4, 1, 500*ms),  // session 1 idle again: on time, on its VU
			turn(5, 2, 1000*ms), // on time
		)
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if it.Trace.Record == 0 {
				return sleepFn(300*ms)(ctx, it)
			}
			return sleepFn(50*ms)(ctx, it)
		}}
		t0 := time.Now()
		sink := runPlan(t, p, r)
		if len(sink.drops) != 0 {
			t.Fatalf("%d dropped", len(sink.drops))
		}
		started := map[time.Time]time.Time{} // scheduled -> started
		for _, m := range sink.marks {
			started[m.Scheduled] = m.Started
		}
		got := byRecord(t, r)
		for rec, want := range map[int]time.Duration{0: 0, 1: 300 * ms, 2: 150 * ms, 3: 200 * ms, 4: 500 * ms, 5: time.Second} {
			it := got[rec]
			if off := it.Scheduled.Sub(t0); off != it.Trace.At {
				t.Errorf("record %d Scheduled at %v, want its own time %v", rec, off, it.Trace.At)
			}
			if off := started[it.Scheduled].Sub(t0); off != want {
				t.Errorf("record %d started at %v, want %v", rec, off, want)
			}
		}
		if v := got[0].VUID; got[1].VUID != v || got[4].VUID != v {
			t.Errorf("session 1 ran on VUs %d, %d, %d; want one VU", v, got[1].VUID, got[4].VUID)
		}
		if got[5].VUID != got[2].VUID {
			t.Errorf("session 2 ran on VUs %d, %d; want its VU again", got[2].VUID, got[5].VUID)
		}
	})
}

// A held record whose session never frees up is dropped and counted when
// the graceful stop ends the run, never lost silently.
func TestTraceHeldRecordIsDroppedWhenItCannotRun(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ms := time.Millisecond
		p := tracePlan(2, turn(0, 1, 0), turn(1, 1, 10*ms), at(2, 20*ms))
		p.Scenarios[0].GracefulStop = 100 * ms
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if it.Trace.Record == 0 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}}
		sink := &fakeSink{}
		e := New(p, r, sink)
		t0 := time.Now()
		if err := e.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(t0); got != 120*ms {
			t.Errorf("run took %v, want the 20ms trace and the 100ms graceful stop", got)
		}
		if _, ran := byRecord(t, r)[1]; ran || len(r.its) != 2 {
			t.Errorf("ran %d iterations (record 1 ran: %v); want records 0 and 2", len(r.its), ran)
		}
		if len(sink.drops) != 1 || sink.drops[0].Scheduled.Sub(t0) != 10*ms {
			t.Fatalf("drops %+v, want record 1's at 10ms", sink.drops)
		}
		if st := e.Status().Scenarios[0]; st.Dropped != 1 || st.IterationsDone != 3 {
			t.Errorf("status: %d dropped, %d records done; want 1 and 3", st.Dropped, st.IterationsDone)
		}
	})
}

func TestTraceStatusShowsRecordsDone(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var arrivals []plan.TraceArrival
		for i := range 20 {
			arrivals = append(arrivals, at(i, time.Duration(i)*100*time.Millisecond))
		}
		e := New(tracePlan(2, arrivals...), &fakeRunner{fn: sleepFn(10 * time.Millisecond)}, &fakeSink{})
		done := make(chan error)
		go func() { done <- e.Run(context.Background()) }()
		time.Sleep(1050 * time.Millisecond)
		st := e.Status().Scenarios[0]
		if st.IterationsDone != 11 || st.IterationsTotal != 20 || st.Stage != "replay" || st.AllocatedVUs != 2 {
			t.Errorf("status %+v: want 11 of 20 records done in replay on 2 VUs", st)
		}
		if want := 20 / 1.9; math.Abs(st.Rate-want) > 1e-9 {
			t.Errorf("status rate %v, want %v", st.Rate, want)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestTraceThatCannotRunIsAnError(t *testing.T) {
	tests := map[string]struct {
		arrivals []plan.TraceArrival
		want     string
	}{
		"empty":        {nil, `scenario "replay": the trace has no records to replay`},
		"out of order": {[]plan.TraceArrival{at(0, time.Second), at(1, 0)}, `trace arrival 1 (record 1, at 0s, session 0) is out of order`},
		"negative":     {[]plan.TraceArrival{at(0, -time.Second)}, `is out of order`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &fakeRunner{fn: noop}
			err := New(tracePlan(1, tc.arrivals...), r, &fakeSink{}).Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if r.made() != 0 {
				t.Errorf("%d VUs made", r.made())
			}
		})
	}
}

// mixedTrace has sessions of four turns, 7 to 14ms apart, so that with
// iterations of 20ms some turns are held, among records of no session.
func mixedTrace() []plan.TraceArrival {
	var out []plan.TraceArrival
	for i := range 60 {
		off := time.Duration(i) * 7 * time.Millisecond
		if i%3 == 0 {
			out = append(out, at(i, off))
		} else {
			out = append(out, turn(i, 1+i/6, off)) // 10 sessions
		}
	}
	return out
}

// traceRecord is one record as a run replayed it.
type traceRecord struct {
	record, session int
	scheduled       time.Duration
}

func (r *segRun) records() []traceRecord {
	var out []traceRecord
	for _, it := range r.runner.its {
		out = append(out, traceRecord{it.Trace.Record, it.Trace.Session, it.Scheduled.Sub(r.t0)})
	}
	return out
}

func compareRecords(a, b traceRecord) int { return cmp.Compare(a.record, b.record) }

// A trace's segments together replay exactly the whole trace, each record
// at its time, each session whole in one segment.
func TestSegmentedTraceIsTheWholeTrace(t *testing.T) {
	for _, n := range segmentCounts {
		t.Run(fmt.Sprintf("in %d", n), func(t *testing.T) {
			p := tracePlan(28, mixedTrace()...)
			whole, segs := runSegments(t, p, n, sleepFn(20*time.Millisecond))
			if len(whole.sink.drops) != 0 {
				t.Fatalf("the whole run dropped %d", len(whole.sink.drops))
			}
			held := 0
			for _, m := range whole.sink.marks {
				if m.Started.After(m.Scheduled) {
					held++
				}
			}
			if held == 0 {
				t.Fatal("no session turn was held: the test proves less than it says")
			}
			got := union(segs, (*segRun).records, compareRecords)
			assertSameSequence(t, "records", got, sorted(whole.records(), compareRecords))
			owner := map[int]plan.Segment{}
			rate := 0.0
			for _, s := range segs {
				if len(s.sink.drops) != 0 || len(s.runner.its) == 0 {
					t.Errorf("segment %v: %d dropped, %d ran", s.seg, len(s.sink.drops), len(s.runner.its))
				}
				for _, rec := range s.records() {
					if o, ok := owner[rec.session]; ok && o != s.seg && rec.session != 0 {
						t.Fatalf("session %d split between segments %v and %v", rec.session, o, s.seg)
					}
					owner[rec.session] = s.seg
				}
				rate += s.sink.started[0].Rate
				if !s.sink.started[0].At.Equal(whole.sink.started[0].At) || !s.sink.ended[0].At.Equal(whole.sink.ended[0].At) {
					t.Errorf("segment %v window differs from the whole run's", s.seg)
				}
			}
			if w := whole.sink.started[0].Rate; math.Abs(rate-w) > 1e-9 {
				t.Errorf("segments' rates sum to %v, the whole run's is %v", rate, w)
			}
			assertDisjointIDs(t, segs)
		})
	}
}

func TestTraceShareDealsUnits(t *testing.T) {
	tr := &plan.Trace{Arrivals: []plan.TraceArrival{
		at(0, 0), turn(1, 1, 1), at(2, 2), turn(3, 1, 3), turn(4, 2, 4), at(5, 5), turn(6, 2, 6),
	}}
	// Units in order: record 0, session 1, record 2, session 2, record 5.
	for i, want := range [][]int{{0, 4, 6}, {1, 3, 5}, {2}} {
		var got []int
		for _, a := range traceShare(tr, plan.Segment{Index: i, Count: 3}) {
			got = append(got, a.Record)
		}
		if !slices.Equal(got, want) {
			t.Errorf("segment %d/3 replays records %v, want %v", i, got, want)
		}
	}
}

func TestCheckSplitRefusesATraceTooSmall(t *testing.T) {
	trace := func(arrivals ...plan.TraceArrival) plan.Scenario {
		sc := tracePlan(100, arrivals...).Scenarios[0]
		return sc
	}
	tests := []struct {
		name string
		sc   plan.Scenario
		n    int
		want string
	}{
		{"enough", trace(at(0, 0), at(1, 1), at(2, 2)), 3, ""},
		{"too few records", trace(at(0, 0), at(1, 1), at(2, 2)), 4,
			`scenario "replay": its trace has 3 records, fewer than the 4 segments: each segment needs at least one; split it into at most 3`},
		{"one long session", trace(turn(0, 1, 0), turn(1, 1, 1), turn(2, 1, 2)), 2,
			`scenario "replay": its trace replays 1 sessions, which never split, and 0 records of no session, fewer than the 2 segments: each segment needs at least one; split it into at most 1`},
		{"sessions and records", trace(turn(0, 1, 0), at(1, 1), turn(2, 1, 2)), 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSplit(plan.Plan{Scenarios: []plan.Scenario{tc.sc}}, tc.n)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Errorf("err = %v\nwant  %q", err, tc.want)
			}
		})
	}
}

// The trace executor shares its dispatching with the arrival-rate
// executors: its iterations learn they are stopping when the schedule ends.
func TestTraceIterationsLearnTheyAreStopping(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var stopped, canceled atomic.Int32
		p := tracePlan(2, at(0, 0), at(1, time.Second))
		p.Scenarios[0].GracefulStop = time.Minute
		start := time.Now()
		if err := New(p, &fakeRunner{fn: stopOrCancel(&stopped, &canceled)}, &fakeSink{}).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != time.Second || stopped.Load() != 2 || canceled.Load() != 0 {
			t.Errorf("run took %v, %d told they were stopping, %d canceled; want 1s, 2, 0", got, stopped.Load(), canceled.Load())
		}
	})
}
