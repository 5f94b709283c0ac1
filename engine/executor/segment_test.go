package executor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// segmentCounts are the segment counts every segmentation test splits into.
var segmentCounts = []int{1, 2, 3, 4, 7}

// iterStart is one iteration as a VU began it, timed from the runs' start.
type iterStart struct {
	vu    int
	iter  int64
	stage string
	at    time.Duration
}

// segRun is one engine's run of a plan, whole or one segment, and what it did.
type segRun struct {
	seg    plan.Segment
	runner *fakeRunner
	sink   *fakeSink
	eng    *Engine
	t0     time.Time

	mu     sync.Mutex
	starts []iterStart
}

func (r *segRun) record(it engine.Iteration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, iterStart{vu: it.VUID, iter: it.Iteration, stage: it.Stage, at: time.Since(r.t0)})
}

// scheduled is every arrival the run was due to start, dispatched or
// dropped, timed from the runs' start.
func (r *segRun) scheduled() []time.Duration {
	var out []time.Duration
	for _, m := range r.sink.marks {
		if !m.Warmup {
			out = append(out, m.Scheduled.Sub(r.t0))
		}
	}
	for _, d := range r.sink.drops {
		out = append(out, d.Scheduled.Sub(r.t0))
	}
	return out
}

func (r *segRun) requestIDs() []int64 {
	var out []int64
	for _, it := range r.runner.its {
		out = append(out, it.RequestID)
	}
	return out
}

func (r *segRun) measured() int {
	n := 0
	for _, it := range r.runner.its {
		if !it.Warmup {
			n++
		}
	}
	return n
}

// runSegments runs p whole and as each of its n segments, all at once in
// one bubble, so every run's times share one fake clock and one start.
func runSegments(t *testing.T, p plan.Plan, n int, fn func(context.Context, engine.Iteration) error) (whole *segRun, segs []*segRun) {
	t.Helper()
	bubble(t, func(t *testing.T) {
		t0 := time.Now()
		runs := []*segRun{{seg: plan.Segment{}}}
		for i := range n {
			runs = append(runs, &segRun{seg: plan.Segment{Index: i, Count: n}})
		}
		var wg sync.WaitGroup
		errs := make([]error, len(runs))
		for i, r := range runs {
			q := p
			q.Segment = r.seg
			r.t0, r.sink = t0, &fakeSink{}
			r.runner = &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
				r.record(it)
				return fn(ctx, it)
			}}
			r.eng = New(q, r.runner, r.sink)
			wg.Go(func() { errs[i] = r.eng.Run(context.Background()) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("run %v: %v", runs[i].seg, err)
			}
		}
		whole, segs = runs[0], runs[1:]
	})
	if whole == nil {
		t.FailNow()
	}
	return whole, segs
}

// union concatenates what each segment's run gives and sorts it.
func union[T any](segs []*segRun, of func(*segRun) []T, compare func(a, b T) int) []T {
	var out []T
	for _, s := range segs {
		out = append(out, of(s)...)
	}
	slices.SortFunc(out, compare)
	return out
}

func sorted[T any](xs []T, compare func(a, b T) int) []T {
	xs = slices.Clone(xs)
	slices.SortFunc(xs, compare)
	return xs
}

func compareStarts(a, b iterStart) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.vu, b.vu), cmp.Compare(a.iter, b.iter), strings.Compare(a.stage, b.stage))
}

// assertSameSequence fails when got and want differ, naming the first difference.
func assertSameSequence[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the whole run has none; the test proves nothing", what)
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: union of the segments differs from the whole run at %d: %v, want %v", what, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: union of the segments has %d, the whole run %d", what, len(got), len(want))
	}
}

// assertDisjointIDs checks that no VU id and no request id is in two segments.
func assertDisjointIDs(t *testing.T, segs []*segRun) {
	t.Helper()
	vus, reqs := map[int]int{}, map[int64]int{}
	for i, s := range segs {
		for _, id := range s.runner.ids {
			if j, dup := vus[id]; dup {
				t.Fatalf("VU id %d in segments %d and %d", id, j, i)
			}
			vus[id] = i
		}
		for _, id := range s.requestIDs() {
			if j, dup := reqs[id]; dup && j != i {
				t.Fatalf("request id %d in segments %d and %d", id, j, i)
			} else if dup {
				t.Fatalf("request id %d twice in segment %d", id, i)
			}
			reqs[id] = i
		}
	}
}

// assertStageMarksSum checks that the segments' stage marks add up to the
// whole run's: VUs exactly, rates as each segment's 1/n of the whole.
func assertStageMarksSum(t *testing.T, whole *segRun, segs []*segRun) {
	t.Helper()
	for i, w := range whole.sink.started {
		vus, rate := 0, 0.0
		for _, s := range segs {
			if len(s.sink.started) != len(whole.sink.started) || len(s.sink.ended) != len(whole.sink.ended) {
				t.Fatalf("segment %v marked %d/%d stages, the whole run %d/%d", s.seg,
					len(s.sink.started), len(s.sink.ended), len(whole.sink.started), len(whole.sink.ended))
			}
			m := s.sink.started[i]
			// Iteration-count stages end when their work is done, which differs.
			sameEnd := w.Planned == 0 || s.sink.ended[i].At.Equal(whole.sink.ended[i].At)
			if m.Stage != w.Stage || !m.At.Equal(w.At) || !sameEnd {
				t.Errorf("segment %v stage %d: %+v, want the whole run's window %+v", s.seg, i, m, w)
			}
			if got, want := m.Rate, w.Rate/float64(len(segs)); math.Abs(got-want) > 1e-12*max(want, 1) {
				t.Errorf("segment %v stage %s: rate %v, want %v", s.seg, w.Stage, got, want)
			}
			vus += m.Target
			rate += m.Rate
		}
		if vus != w.Target {
			t.Errorf("stage %s: segments hold %d VUs, the whole run %d", w.Stage, vus, w.Target)
		}
		if math.Abs(rate-w.Rate) > 1e-9*max(w.Rate, 1) {
			t.Errorf("stage %s: segments' rates sum to %v, the whole run's is %v", w.Stage, rate, w.Rate)
		}
	}
}

// closedScenario is a closed-model scenario over stages. Iterations of
// 37ms never end exactly at the 100ms-grid times VUs come and go, so
// which iterations run does not hinge on goroutine order.
func closedScenario(executor string, startVUs int, stages ...plan.Stage) plan.Plan {
	return plan.Plan{Seed: 1, Scenarios: []plan.Scenario{{
		Name: "closed", Executor: executor, Exec: "chat", StartVUs: startVUs, Stages: stages,
		GracefulStop: 50 * time.Millisecond, GracefulRampDown: 20 * time.Millisecond,
	}}}
}

const closedIteration = 37 * time.Millisecond

// The segments of a closed model together start and stop VUs at exactly
// the whole run's times: every iteration of the whole run, by VU id,
// iteration number, stage and start time, is an iteration of one segment.
func TestSegmentedClosedModelsAreTheWholeRun(t *testing.T) {
	ms := time.Millisecond
	plans := map[string]plan.Plan{
		"constant 10 VUs": closedScenario(plan.ExecutorConstantVUs, 0,
			plan.Stage{Name: "c10", Target: 10, Duration: 500 * ms}),
		"one VU": closedScenario(plan.ExecutorConstantVUs, 0,
			plan.Stage{Name: "c1", Target: 1, Duration: 300 * ms}),
		"steps": closedScenario(plan.ExecutorRampingVUs, 2,
			plan.Stage{Name: "c5", Target: 5, Duration: 300 * ms},
			plan.Stage{Name: "c0", Target: 0, Duration: 200 * ms},
			plan.Stage{Name: "c3", Target: 3, Duration: 300 * ms},
			plan.Stage{Name: "c10", Target: 10, Duration: 300 * ms}),
		"ramps": closedScenario(plan.ExecutorRampingVUs, 0,
			plan.Stage{Name: "up", Target: 10, Duration: 1200 * ms, Ramp: time.Second},
			plan.Stage{Name: "down", Target: 3, Duration: 900 * ms, Ramp: 700 * ms},
			plan.Stage{Name: "cut", Target: 9, Duration: 500 * ms, Ramp: 1200 * ms},
			plan.Stage{Name: "hold", Target: 2, Duration: 300 * ms}),
	}
	for name, p := range plans {
		for _, n := range segmentCounts {
			t.Run(fmt.Sprintf("%s in %d", name, n), func(t *testing.T) {
				whole, segs := runSegments(t, p, n, sleepFn(closedIteration))
				got := union(segs, func(s *segRun) []iterStart { return s.starts }, compareStarts)
				assertSameSequence(t, "iterations", got, sorted(whole.starts, compareStarts))
				assertStageMarksSum(t, whole, segs)
				assertDisjointIDs(t, segs)
				assertVUShares(t, p.Scenarios[0].MaxVUs(), segs)
			})
		}
	}
}

// assertVUShares checks that each segment made its share of total VUs,
// with the ids the whole run gives them.
func assertVUShares(t *testing.T, total int, segs []*segRun) {
	t.Helper()
	for _, s := range segs {
		var want []int
		for local := range int64(s.seg.Share(total)) {
			want = append(want, int(s.seg.Global(local+1)))
		}
		if got := sorted(s.runner.ids, cmp.Compare[int]); !slices.Equal(got, want) {
			t.Errorf("segment %v made VUs %v, want %v", s.seg, got, want)
		}
		if got, want := s.eng.Status().Scenarios[0].AllocatedVUs, s.seg.Share(total); got != want {
			t.Errorf("segment %v: status allocated VUs %d, want %d", s.seg, got, want)
		}
	}
}

// A ramp of one segment wakes only for its own VUs: its activations are
// every n-th of the whole ramp's steps, at their exact times.
func TestSegmentRampActivatesItsOwnStepsOnly(t *testing.T) {
	p := closedScenario(plan.ExecutorRampingVUs, 0,
		plan.Stage{Name: "up", Target: 10, Duration: 1500 * time.Millisecond, Ramp: time.Second})
	_, segs := runSegments(t, p, 4, sleepFn(time.Hour))
	for i, want := range [][]iterStart{
		{{1, 0, "up", 100 * time.Millisecond}, {5, 0, "up", 500 * time.Millisecond}, {9, 0, "up", 900 * time.Millisecond}},
		{{2, 0, "up", 200 * time.Millisecond}, {6, 0, "up", 600 * time.Millisecond}, {10, 0, "up", time.Second}},
		{{3, 0, "up", 300 * time.Millisecond}, {7, 0, "up", 700 * time.Millisecond}},
		{{4, 0, "up", 400 * time.Millisecond}, {8, 0, "up", 800 * time.Millisecond}},
	} {
		if got := sorted(segs[i].starts, compareStarts); !slices.Equal(got, want) {
			t.Errorf("segment %d/4 iterations %v, want %v", i, got, want)
		}
	}
}

// With equal shares (8 VUs of equal pace in 4 segments) the segments'
// request ids together are exactly the whole run's.
func TestSegmentRequestIDsAreTheWholeRunsWhenSharesAreEqual(t *testing.T) {
	p := closedScenario(plan.ExecutorConstantVUs, 0, plan.Stage{Name: "c8", Target: 8, Duration: 500 * time.Millisecond})
	whole, segs := runSegments(t, p, 4, sleepFn(closedIteration))
	got := union(segs, (*segRun).requestIDs, cmp.Compare[int64])
	assertSameSequence(t, "request ids", got, sorted(whole.requestIDs(), cmp.Compare[int64]))
	if got, want := len(segs[0].requestIDs()), len(whole.requestIDs())/4; got != want {
		t.Errorf("segment 0 sent %d requests, want a quarter of %d", got, len(whole.requestIDs()))
	}
}

// An open model's segments draw one seeded arrival sequence and each
// keeps its own arrivals, so together they are due at exactly the whole
// run's times, whatever the arrival process.
func TestSegmentedOpenModelsScheduleTheWholeRun(t *testing.T) {
	stages := []plan.Stage{
		{Name: "r100", Rate: 100, Duration: 400 * time.Millisecond},
		{Name: "up", Rate: 300, Duration: 500 * time.Millisecond, Ramp: 500 * time.Millisecond},
		{Name: "r0", Rate: 0, Duration: 200 * time.Millisecond},
		{Name: "r50", Rate: 50, Duration: 300 * time.Millisecond},
	}
	type vus struct{ pre, max int }
	for _, kind := range []string{plan.ArrivalPoisson, plan.ArrivalConstant, plan.ArrivalGamma} {
		for name, v := range map[string]vus{"free VUs": {20, 20}, "drops and growth": {7, 14}} {
			for _, n := range segmentCounts {
				t.Run(fmt.Sprintf("%s %s in %d", kind, name, n), func(t *testing.T) {
					sc := openScenario(kind, stages...)
					sc.PreAllocatedVUs, sc.MaxVUsCap, sc.Burstiness = v.pre, v.max, 0.5
					p := plan.Plan{Seed: 42, Scenarios: []plan.Scenario{sc}}
					iteration := noop
					if name == "drops and growth" {
						iteration = sleepFn(40 * time.Millisecond)
					}
					whole, segs := runSegments(t, p, n, iteration)
					got := union(segs, (*segRun).scheduled, cmp.Compare[time.Duration])
					assertSameSequence(t, "scheduled arrivals", got, sorted(whole.scheduled(), cmp.Compare[time.Duration]))
					assertStageMarksSum(t, whole, segs)
					assertDisjointIDs(t, segs)
					assertOpenVUs(t, sc, segs)
				})
			}
		}
	}
}

// assertOpenVUs checks that each segment made its share of the
// pre-allocated VUs and grew to no more than its share of the cap.
func assertOpenVUs(t *testing.T, sc plan.Scenario, segs []*segRun) {
	t.Helper()
	for _, s := range segs {
		made, pre, cap := s.runner.made(), s.seg.Share(sc.PreAllocatedVUs), s.seg.Share(sc.MaxVUs())
		if made < pre || made > cap {
			t.Errorf("segment %v made %d VUs, want %d pre-allocated up to %d", s.seg, made, pre, cap)
		}
		for _, id := range s.runner.ids {
			if !s.seg.Owns(int64(id - 1)) {
				t.Errorf("segment %v made VU %d, an id of another segment", s.seg, id)
			}
		}
	}
}

func TestOpenModelVUsThatCannotBeSplitAreAnError(t *testing.T) {
	tests := map[string]struct {
		pre, max int
		seg      plan.Segment
		wantErr  string
	}{
		"max_vus below n": {pre: 1, max: 2, seg: plan.Segment{Index: 0, Count: 4},
			wantErr: `scenario "open": max_vus 2 cannot be split into 4 segments: each segment needs at least one VU (raise max_vus to 4 or more)`},
		"pre-allocated only": {pre: 3, max: 0, seg: plan.Segment{Index: 3, Count: 7},
			wantErr: `scenario "open": pre_allocated_vus 3 cannot be split into 7 segments: each segment needs at least one VU (raise max_vus to 7 or more)`},
		"one VU each":   {pre: 0, max: 4, seg: plan.Segment{Index: 3, Count: 4}},
		"one segment":   {pre: 1, max: 1, seg: plan.Segment{Index: 0, Count: 1}},
		"whole, no VUs": {pre: 0, max: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := openPlan(tc.pre, tc.max, plan.Stage{Name: "r10", Rate: 10, Duration: time.Second})
				p.Segment = tc.seg
				r := &fakeRunner{fn: noop}
				err := New(p, r, &fakeSink{}).Run(context.Background())
				if tc.wantErr == "" {
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
					return
				}
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v\nwant  %s", err, tc.wantErr)
				}
				if r.made() != 0 {
					t.Errorf("%d VUs made for a plan that cannot be split", r.made())
				}
			})
		})
	}
}

// The iteration-count executors split VUs and iterations so the segments
// together run exactly the whole run's iterations, none of them on a
// segment without a VU.
func TestSegmentedIterationCountsAreTheWholeRun(t *testing.T) {
	tests := []struct{ vus, iterations int }{{0, 5}, {1, 1}, {1, 10}, {3, 5}, {10, 50}, {10, 0}, {4, 3}}
	for _, executor := range []string{plan.ExecutorSharedIterations, plan.ExecutorPerVUIterations} {
		for _, tc := range tests {
			for _, n := range segmentCounts {
				t.Run(fmt.Sprintf("%s %d VUs %d iterations in %d", executor, tc.vus, tc.iterations, n), func(t *testing.T) {
					p := iterPlan(executor, tc.vus, tc.iterations, 10*time.Second)
					whole, segs := runSegments(t, p, n, sleepFn(time.Millisecond))
					total := 0
					for _, s := range segs {
						want := wantIterations(executor, s.seg, tc.vus, tc.iterations)
						if got := s.measured(); got != want {
							t.Errorf("segment %v ran %d iterations, want %d", s.seg, got, want)
						}
						wantTotal := want
						if s.seg.Whole() && tc.vus == 0 && executor == plan.ExecutorSharedIterations {
							wantTotal = tc.iterations // as ever: the plan's count, which no VU runs
						}
						if got := s.eng.Status().Scenarios[0].IterationsTotal; got != int64(wantTotal) {
							t.Errorf("segment %v: status total %d, want %d", s.seg, got, wantTotal)
						}
						total += s.measured()
					}
					if got, want := total, whole.measured(); got != want {
						t.Errorf("segments ran %d iterations, the whole run %d", got, want)
					}
					assertStageMarksSum(t, whole, segs)
					assertDisjointIDs(t, segs)
					assertVUShares(t, tc.vus, segs)
				})
			}
		}
	}
}

// wantIterations is what segment seg of an iteration-count scenario runs,
// counted by hand.
func wantIterations(executor string, seg plan.Segment, vus, iterations int) int {
	mine := 0 // VUs of seg: the whole run's VUs k with k mod n = index
	for k := seg.Index; k < vus; k += seg.Count {
		mine++
	}
	if executor == plan.ExecutorPerVUIterations {
		return mine * iterations
	}
	m := min(seg.Count, vus) // the segments holding a VU share the iterations
	if seg.Index >= m {
		return 0
	}
	got := 0
	for k := seg.Index; k < iterations; k += m {
		got++
	}
	return got
}

// Concrete splits, so the formula is not only checked against itself.
func TestSharedIterationsShare(t *testing.T) {
	tests := map[string]struct {
		count, vus, iterations int
		want                   []int
	}{
		"10 in 4, 10 VUs":     {count: 4, vus: 10, iterations: 10, want: []int{3, 3, 2, 2}},
		"10 in 4, 2 VUs":      {count: 4, vus: 2, iterations: 10, want: []int{5, 5, 0, 0}},
		"7 in 3, 1 VU":        {count: 3, vus: 1, iterations: 7, want: []int{7, 0, 0}},
		"no VUs":              {count: 2, vus: 0, iterations: 7, want: []int{0, 0}},
		"fewer iterations":    {count: 4, vus: 4, iterations: 2, want: []int{1, 1, 0, 0}},
		"3 VUs of 7 segments": {count: 7, vus: 3, iterations: 8, want: []int{3, 3, 2, 0, 0, 0, 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := sharedIterationsShare(plan.Segment{Index: i, Count: tc.count}, tc.vus, tc.iterations); got != want {
					t.Errorf("segment %d/%d: %d iterations, want %d", i, tc.count, got, want)
				}
			}
		})
	}
	if got := sharedIterationsShare(plan.Segment{}, 0, 7); got != 7 {
		t.Errorf("whole plan: %d iterations, want all 7", got)
	}
}

// Warmup requests are split like everything else; a timed warmup runs
// its whole duration in every segment.
func TestSegmentedWarmup(t *testing.T) {
	tests := map[string]struct {
		warmup plan.Warmup
		n      int
		want   []int // warmup iterations per segment
	}{
		"5 requests in 4":  {warmup: plan.Warmup{Requests: 5}, n: 4, want: []int{2, 1, 1, 1}},
		"1 request in 3":   {warmup: plan.Warmup{Requests: 1}, n: 3, want: []int{1, 0, 0}},
		"and a time bound": {warmup: plan.Warmup{Requests: 1, Duration: time.Second}, n: 2, want: []int{1, 0}},
		// 2 VUs each (4 VUs in 2) start 30ms iterations for 100ms.
		"100ms": {warmup: plan.Warmup{Duration: 100 * time.Millisecond}, n: 2, want: []int{8, 8}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := closedScenario(plan.ExecutorConstantVUs, 0, plan.Stage{Name: "c4", Target: 4, Duration: 100 * time.Millisecond})
			p.Warmup = tc.warmup
			_, segs := runSegments(t, p, tc.n, sleepFn(30*time.Millisecond))
			for i, s := range segs {
				warm := len(s.runner.its) - s.measured()
				if warm != tc.want[i] {
					t.Errorf("segment %v: %d warmup iterations, want %d", s.seg, warm, tc.want[i])
				}
				if got, want := s.eng.Status().WarmupTotal, s.seg.Share(tc.warmup.Requests); got != want {
					t.Errorf("segment %v: status warmup total %d, want %d", s.seg, got, want)
				}
			}
		})
	}
}

// A segment's status shows its own share: VUs, target rate, iterations.
func TestSegmentStatusShowsItsShare(t *testing.T) {
	open := openPlan(6, 10, plan.Stage{Name: "r40", Rate: 40, Duration: time.Second})
	tests := map[string]struct {
		plan  plan.Plan
		check func(t *testing.T, st ScenarioStatus)
	}{
		"closed": {
			plan: closedScenario(plan.ExecutorConstantVUs, 0, plan.Stage{Name: "c10", Target: 10, Duration: time.Second}),
			check: func(t *testing.T, st ScenarioStatus) {
				if st.ActiveVUs != 2 || st.AllocatedVUs != 2 {
					t.Errorf("segment 3/4 of 10 VUs: active %d, allocated %d; want 2 and 2", st.ActiveVUs, st.AllocatedVUs)
				}
			},
		},
		"open": {
			plan: open,
			check: func(t *testing.T, st ScenarioStatus) {
				// Its share of pre_allocated_vus (1) grows by the pool's
				// margin up to its share of max_vus (3 of 10).
				if st.Rate != 10 || st.AllocatedVUs < 1 || st.AllocatedVUs > 3 {
					t.Errorf("segment 3/4 of 40/s on 6 VUs (max 10): rate %v, allocated %d; want 10 and 1 to 3", st.Rate, st.AllocatedVUs)
				}
			},
		},
		"shared iterations": {
			plan: iterPlan(plan.ExecutorSharedIterations, 10, 1000, time.Second),
			check: func(t *testing.T, st ScenarioStatus) {
				if st.IterationsTotal != 250 || st.AllocatedVUs != 2 {
					t.Errorf("segment 3/4 of 1000 iterations on 10 VUs: total %d, allocated %d; want 250 and 2", st.IterationsTotal, st.AllocatedVUs)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := tc.plan
				p.Segment = plan.Segment{Index: 3, Count: 4}
				e := New(p, &fakeRunner{fn: sleepFn(50 * time.Millisecond)}, &fakeSink{})
				done := make(chan error)
				go func() { done <- e.Run(context.Background()) }()
				time.Sleep(500 * time.Millisecond)
				tc.check(t, e.Status().Scenarios[0])
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestCheckSegmentRefusesASegmentWithoutVUs(t *testing.T) {
	closed := func(vus int) plan.Scenario {
		return plan.Scenario{Name: "c", Executor: plan.ExecutorConstantVUs, Stages: []plan.Stage{{Name: "s", Target: vus, Duration: time.Second}}}
	}
	iters := plan.Scenario{Name: "i", Executor: plan.ExecutorPerVUIterations, VUs: 2, Iterations: 3}
	open := plan.Scenario{Name: "o", Executor: plan.ExecutorConstantArrivalRate, MaxVUsCap: 8}
	tests := []struct {
		name      string
		scenarios []plan.Scenario
		seg       plan.Segment
		want      string
	}{
		{"whole", []plan.Scenario{closed(1)}, plan.Segment{}, ""},
		{"a VU each", []plan.Scenario{closed(4)}, plan.Segment{Index: 3, Count: 4}, ""},
		{"none for the last", []plan.Scenario{closed(3)}, plan.Segment{Index: 3, Count: 4},
			"segment 3/4 gets no VU of this plan: its largest scenario has 3, fewer than the 4 segments; split it into at most 3"},
		{"iterations", []plan.Scenario{iters}, plan.Segment{Index: 2, Count: 3}, "its largest scenario has 2"},
		{"another scenario has one", []plan.Scenario{closed(1), closed(5)}, plan.Segment{Index: 4, Count: 5}, ""},
		{"open model", []plan.Scenario{closed(1), open}, plan.Segment{Index: 6, Count: 8}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSegment(plan.Plan{Scenarios: tc.scenarios, Segment: tc.seg})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckSplit(t *testing.T) {
	closed := plan.Scenario{Name: "c", Executor: plan.ExecutorConstantVUs, Stages: []plan.Stage{{Name: "s", Target: 3, Duration: time.Second}}}
	open := plan.Scenario{Name: "o", Executor: plan.ExecutorConstantArrivalRate, PreAllocatedVUs: 1, MaxVUsCap: 2}
	tests := []struct {
		name      string
		scenarios []plan.Scenario
		n         int
		want      string
	}{
		{"whole", []plan.Scenario{closed}, 1, ""},
		{"as many as VUs", []plan.Scenario{closed}, 3, ""},
		{"more than VUs", []plan.Scenario{closed}, 4, "segment 3/4 gets no VU of this plan"},
		{"open model capped", []plan.Scenario{closed, open}, 3, `scenario "o": max_vus 2 cannot be split into 3 segments`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSplit(plan.Plan{Scenarios: tc.scenarios}, tc.n)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
