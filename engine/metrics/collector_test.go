package metrics

import (
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func mark(scenario, stage string, index, vus int, atS float64) engine.StageMark {
	return engine.StageMark{Scenario: scenario, Stage: stage, Index: index, Target: vus, At: at(atS)}
}

// okSample is a successful request in stage "sweep"/stage starting at
// startS with the given E2E; other latencies derive from it.
func okSample(stage string, startS float64, e2e time.Duration) engine.Sample {
	return engine.Sample{Scenario: "sweep", Stage: stage, Result: engine.Result{
		Start: at(startS), Status: 200,
		TTFB: e2e / 10, TTFT: e2e / 5, E2E: e2e, TPOT: e2e / 100,
		ITL:         []time.Duration{e2e / 100, e2e / 100},
		InputTokens: 10, OutputTokens: 3, TokensSource: engine.TokensFromUsage,
	}}
}

func failSample(stage string, startS float64, class string) engine.Sample {
	return engine.Sample{Scenario: "sweep", Stage: stage, Result: engine.Result{
		Start: at(startS), Status: 503, TTFB: 5 * time.Millisecond,
		E2E: 6 * time.Millisecond, OutputTokens: 7, InputTokens: 9,
		Err: &engine.Error{Class: class, Message: "boom"},
	}}
}

func findStage(t *testing.T, s *Summary, stage string) StageSummary {
	t.Helper()
	for _, st := range s.Stages {
		if st.Stage == stage {
			return st
		}
	}
	t.Fatalf("stage %q not in summary (%d stages)", stage, len(s.Stages))
	return StageSummary{}
}

func TestCollectorCounts(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 4, 0))
	for i := range 6 {
		c.Sample(okSample("c1", float64(i), 100*time.Millisecond))
	}
	c.Sample(failSample("c1", 1, "http_5xx:503"))
	c.Sample(failSample("c1", 2, "http_5xx:503"))
	c.Sample(failSample("c1", 3, engine.ErrTimeoutTTFT))
	c.Sample(failSample("c1", 3, ""))
	c.IterationError(engine.IterationError{Scenario: "sweep", Stage: "c1", Message: "s.lua:3: x"})
	c.StageEnded(mark("sweep", "c1", 0, 4, 10))
	st := findStage(t, c.Close(), "c1")

	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"requests", st.Requests, 10},
		{"ok", st.OK, 6},
		{"failed", st.Failed, 4},
		{"iteration errors", st.IterationErrors, 1},
		{"output tokens (ok only)", st.OutputTokens, 18},
		{"input tokens (ok only)", st.InputTokens, 60},
		{"errors 503", st.Errors["http_5xx:503"], 2},
		{"errors ttft", st.Errors[engine.ErrTimeoutTTFT], 1},
		{"errors without class", st.Errors["unknown"], 1},
		{"tokens from usage", st.TokensSource[engine.TokensFromUsage], 6},
		{"ttft count (failed excluded)", st.TTFT.Count, 6},
		{"ttfb count (failed excluded)", st.TTFB.Count, 6},
		{"e2e count", st.E2E.Count, 6},
		{"itl count (one per gap)", st.ITL.Count, 12},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if got, want := st.VUs, 4; got != want {
		t.Errorf("VUs = %d, want %d", got, want)
	}
	if got, want := st.TTFB.Max, 10.0; got != want {
		t.Errorf("TTFB max = %v ms, want %v (a failed request's 5 ms must not count)", got, want)
	}
}

// within reports whether got is within HDR's three significant digits of want.
func within(got, want float64) bool { return math.Abs(got-want) <= math.Abs(want)/1000+1e-9 }

func TestCollectorPercentiles(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	// E2E of 1 ms .. 1000 ms, shuffled by a stride coprime to 1000.
	for i := range 1000 {
		ms := (i*617)%1000 + 1
		c.Sample(okSample("c1", 0, time.Duration(ms)*time.Millisecond))
	}
	st := findStage(t, c.Close(), "c1")
	d := st.E2E
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"p50", d.P50, 500}, {"p90", d.P90, 900}, {"p95", d.P95, 950},
		{"p99", d.P99, 990}, {"p999", d.P999, 999},
	} {
		if !within(tc.got, tc.want) {
			t.Errorf("%s = %v ms, want %v within 0.1%%", tc.name, tc.got, tc.want)
		}
	}
	if got, want := d.Min, 1.0; got != want {
		t.Errorf("min = %v, want %v", got, want)
	}
	if got, want := d.Max, 1000.0; got != want {
		t.Errorf("max = %v, want %v", got, want)
	}
	if got, want := d.Mean, 500.5; got != want {
		t.Errorf("mean = %v, want %v", got, want)
	}
	if want := 288.675; math.Abs(d.Stddev-want) > want/100 {
		t.Errorf("stddev = %v, want about %v", d.Stddev, want)
	}
	if d.LowSamples {
		t.Errorf("LowSamples with %d samples, want false", d.Count)
	}
}

func TestDistLowSamplesAndEmpty(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want bool
	}{{0, false}, {1, true}, {999, true}, {1000, false}} {
		r := newRecorder(durationGeo)
		for range tc.n {
			r.record(time.Millisecond)
		}
		d := r.freeze(false).dist()
		if got := d.LowSamples; got != tc.want {
			t.Errorf("n=%d: LowSamples = %v, want %v", tc.n, got, tc.want)
		}
		if tc.n == 0 && !reflect.DeepEqual(d, Dist{}) {
			t.Errorf("empty Dist = %+v, want all zeros", d)
		}
	}
}

func TestRecorderClampsOutOfRange(t *testing.T) {
	r := newRecorder(durationGeo)
	r.record(2 * time.Hour)
	r.record(-time.Millisecond)
	r.record(time.Millisecond)
	d := r.freeze(false).dist()
	if got, want := d.Count, int64(3); got != want {
		t.Errorf("count = %d, want %d (clamped values are kept)", got, want)
	}
	if got, want := d.Clamped, int64(2); got != want {
		t.Errorf("clamped = %d, want %d", got, want)
	}
	if got, want := d.Max, float64(time.Hour/time.Millisecond); got != want {
		t.Errorf("max = %v, want %v", got, want)
	}
	if got, want := d.Min, 0.0; got != want {
		t.Errorf("min = %v, want %v", got, want)
	}
}

func TestCollectorWarmupExcluded(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.Sample(okSample("c1", 1, 10*time.Millisecond))
	for _, fail := range []bool{false, false, true} {
		s := okSample("c1", 1, time.Minute)
		if fail {
			s = failSample("c1", 1, "conn_reset")
		}
		s.Warmup = true
		c.Sample(s)
	}
	c.IterationError(engine.IterationError{Scenario: "sweep", Stage: "c1", Warmup: true, Message: "w"})
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	if got, want := c.Live().WarmupRequests, int64(3); got != want {
		t.Errorf("Live().WarmupRequests = %d, want %d", got, want)
	}
	sum := c.Close()
	st := findStage(t, sum, "c1")
	if got, want := st.Requests, int64(1); got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
	if got, want := st.E2E.Max, 10.0; got != want {
		t.Errorf("E2E max = %v, want %v (warmup leaked)", got, want)
	}
	if got, want := st.IterationErrors, int64(0); got != want {
		t.Errorf("iteration errors = %d, want %d", got, want)
	}
	if got, want := sum.Warmup, (WarmupSummary{Requests: 3, Failed: 1, IterationErrors: 1}); got != want {
		t.Errorf("warmup = %+v, want %+v", got, want)
	}
	if got := len(sum.ScriptErrors); got != 0 {
		t.Errorf("%d script errors, want none from warmup", got)
	}
}

func TestCollectorITLGaps(t *testing.T) {
	c := NewCollector()
	s := okSample("c1", 0, time.Second)
	s.ITL = []time.Duration{0, 200 * time.Nanosecond, time.Millisecond, 3 * time.Millisecond}
	c.Sample(s)
	st := findStage(t, c.Close(), "c1")
	if got, want := st.ITL.Count, int64(4); got != want {
		t.Errorf("ITL count = %d, want %d (zero gaps are real)", got, want)
	}
	if got, want := st.ITL.Max, 3.0; got != want {
		t.Errorf("ITL max = %v, want %v", got, want)
	}
	if got, want := st.ITL.Mean, 1.0; got != want {
		t.Errorf("ITL mean = %v, want %v", got, want)
	}
}

func TestCollectorStageAttributionAndRates(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for i := range 20 {
		c.Sample(okSample("c1", float64(i)/2, 100*time.Millisecond))
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	c.StageStarted(mark("sweep", "c2", 1, 2, 10))
	// Started in c1, completed during c2: still c1's.
	c.Sample(okSample("c1", 9.9, 3*time.Second))
	for i := range 10 {
		c.Sample(okSample("c2", 10+float64(i), 100*time.Millisecond))
	}
	c.StageEnded(mark("sweep", "c2", 1, 2, 15))
	sum := c.Close()
	c1, c2 := findStage(t, sum, "c1"), findStage(t, sum, "c2")
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"c1 requests", float64(c1.Requests), 21},
		{"c2 requests", float64(c2.Requests), 10},
		{"c1 duration", c1.DurationS, 10},
		{"c2 duration", c2.DurationS, 5},
		{"c1 req/s", c1.ReqPerSec, 2.1},
		{"c2 req/s", c2.ReqPerSec, 2},
		{"c2 out tok/s", c2.OutputTokPerSec, 6},
		{"c2 in tok/s", c2.InputTokPerSec, 20},
		{"c1 E2E max", c1.E2E.Max, 3000},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if !c1.Complete || !c2.Complete {
		t.Errorf("complete = %v, %v, want true, true", c1.Complete, c2.Complete)
	}
	if got, want := c2.Index, 1; got != want {
		t.Errorf("c2 index = %d, want %d", got, want)
	}
}

func TestCollectorIncompleteStage(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.Sample(okSample("c1", 1, time.Second))
	c.Sample(okSample("c1", 3, time.Second)) // completes at 4 s
	c.StageStarted(mark("sweep", "idle", 1, 1, 5))
	before := time.Now()
	sum := c.Close()
	st := findStage(t, sum, "c1")
	if st.Complete {
		t.Error("stage without StageEnded reported complete")
	}
	if got, want := st.End, at(4); !got.Equal(want) {
		t.Errorf("end = %v, want %v (last completion)", got, want)
	}
	if got, want := st.ReqPerSec, 0.5; got != want {
		t.Errorf("req/s = %v, want %v", got, want)
	}
	idle := findStage(t, sum, "idle")
	if idle.Complete || idle.End.Before(before) {
		t.Errorf("idle stage: complete %v, end %v; want incomplete, ending at close (after %v)",
			idle.Complete, idle.End, before)
	}
}

func TestCollectorStageOrder(t *testing.T) {
	c := NewCollector()
	c.Sample(okSample("orphan", 0, time.Second)) // never started: goes last
	c.Sample(okSample("b", 0, time.Second))      // seen before its start
	c.StageStarted(mark("sweep", "a", 0, 1, 0))
	c.StageStarted(mark("sweep", "b", 1, 1, 1))
	c.StageStarted(mark("other", "x", 0, 1, 1))
	sum := c.Close()
	var got []string
	for _, st := range sum.Stages {
		got = append(got, st.Scenario+"/"+st.Stage)
	}
	if g, w := fmt.Sprint(got), "[sweep/a sweep/b other/x sweep/orphan]"; g != w {
		t.Errorf("stage order = %s, want %s", g, w)
	}
	orphan := findStage(t, sum, "orphan")
	if got, want := orphan.Start, at(0); !got.Equal(want) || orphan.Complete {
		t.Errorf("orphan start = %v complete %v, want %v, false", got, orphan.Complete, want)
	}
}

func TestCollectorScriptErrors(t *testing.T) {
	c := NewCollector()
	ie := func(msg string) engine.IterationError {
		return engine.IterationError{Scenario: "sweep", Stage: "c1", Message: msg}
	}
	for range 3 {
		c.IterationError(ie("s.lua:9: b"))
	}
	c.IterationError(ie("s.lua:1: a"))
	c.IterationError(ie("s.lua:2: c"))
	for i := range MaxScriptErrors + 5 {
		c.IterationError(ie(fmt.Sprintf("z.lua:%d: distinct", i)))
	}
	c.IterationError(ie("s.lua:9: b")) // a known message still counts after the cap
	sum := c.Close()
	errs := sum.ScriptErrors
	if got, want := len(errs), MaxScriptErrors+1; got != want {
		t.Fatalf("%d script error entries, want %d", got, want)
	}
	if got, want := errs[0], (ScriptError{"s.lua:9: b", 4, true}); got != want {
		t.Errorf("first = %+v, want %+v (raised first, so marked First)", got, want)
	}
	if got, want := errs[1], (ScriptError{"s.lua:1: a", 1, false}); got != want {
		t.Errorf("second = %+v, want %+v (ties by message)", got, want)
	}
	// 3 messages + 47 of the generated ones reach the cap; 8 overflow.
	if got, want := errs[len(errs)-1].Count, int64(8); got != want {
		t.Errorf("overflow entry count = %d, want %d", got, want)
	}
	if got, want := findStage(t, sum, "c1").IterationErrors, int64(MaxScriptErrors+11); got != want {
		t.Errorf("stage iteration errors = %d, want %d", got, want)
	}
}

func TestCollectorConcurrentProducers(t *testing.T) {
	const producers, each = 8, 2000
	c := NewCollector(WithBuffer(16)) // small, so producers really block
	c.StageStarted(mark("sweep", "c1", 0, producers, 0))
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if i%10 == 0 {
					c.Sample(failSample("c1", 1, "conn_reset"))
					continue
				}
				c.Sample(okSample("c1", 1, time.Duration(p+1)*time.Millisecond))
				_ = c.Live()
			}
		})
	}
	wg.Wait()
	live := c.Live()
	st := findStage(t, c.Close(), "c1")
	if got, want := st.Requests, int64(producers*each); got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
	if got, want := st.Failed, int64(producers*each/10); got != want {
		t.Errorf("failed = %d, want %d", got, want)
	}
	if got, want := live, (Live{Requests: st.Requests, Failed: st.Failed, OutputTokens: st.OutputTokens}); got != want {
		t.Errorf("Live() = %+v, want %+v (the summary's totals)", got, want)
	}
	if got, want := st.ITL.Count, 2*st.OK; got != want {
		t.Errorf("ITL count = %d, want %d", got, want)
	}
}

func TestCollectorCloseIdempotent(t *testing.T) {
	c := NewCollector()
	c.Sample(okSample("c1", 0, time.Second))
	var wg sync.WaitGroup
	sums := make([]*Summary, 4)
	for i := range sums {
		wg.Go(func() { sums[i] = c.Close() })
	}
	wg.Wait()
	for i, s := range sums {
		if s != sums[0] {
			t.Errorf("Close #%d returned a different summary", i)
		}
	}
	c.Sample(okSample("c1", 0, time.Second))
	c.IterationError(engine.IterationError{Stage: "c1", Message: "late"})
	c.StageEnded(mark("sweep", "c1", 0, 1, 1))
	if got, want := c.Live().Late, int64(3); got != want {
		t.Errorf("late = %d, want %d", got, want)
	}
	if got, want := findStage(t, c.Close(), "c1").Requests, int64(1); got != want {
		t.Errorf("requests after late calls = %d, want %d", got, want)
	}
}

// TestCollectorCloseUnderLoad closes while producers are still sending: every
// call is either aggregated or counted late, none lost, none panics.
func TestCollectorCloseUnderLoad(t *testing.T) {
	c := NewCollector(WithBuffer(4))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3000 {
				c.Sample(okSample("c1", 0, time.Millisecond))
			}
		})
	}
	time.Sleep(time.Millisecond)
	sum := c.Close()
	wg.Wait()
	var got int64
	if len(sum.Stages) > 0 {
		got = sum.Stages[0].Requests
	}
	if got, want := got+c.Live().Late, int64(4*3000); got != want {
		t.Errorf("aggregated + late = %d, want %d", got, want)
	}
}

func BenchmarkCollectorSample(b *testing.B) {
	c := NewCollector()
	s := okSample("c1", 0, time.Second)
	s.ITL = gaps(50)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Sample(s)
	}
	c.Close() // timed: draining the buffer is part of the cost
}

// BenchmarkCollectorSampleTracked is BenchmarkCollectorSample with two
// tracked tag filters, one matching every sample and one none.
func BenchmarkCollectorSampleTracked(b *testing.B) {
	c := NewCollector()
	for _, f := range []Filter{{"prompt": "short"}, {"prompt": "long", "stage": "c1"}} {
		if err := c.Track("itl", f); err != nil {
			b.Fatal(err)
		}
	}
	s := okSample("c1", 0, time.Second)
	s.Tags = map[string]string{"prompt": "short"}
	s.ITL = gaps(50)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Sample(s)
	}
	c.Close()
}

// BenchmarkCollectorSampleTagsSLO is BenchmarkCollectorSample with an SLO
// to judge and two user tags to break down.
func BenchmarkCollectorSampleTagsSLO(b *testing.B) {
	c := NewCollector(WithSLO(plan.SLO{TTFT: time.Second, TPOT: 50 * time.Millisecond}))
	s := okSample("c1", 0, time.Second)
	s.Tags = map[string]string{"prompt": "short", "model": "m1"}
	s.ITL = gaps(50)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Sample(s)
	}
	c.Close()
}

// BenchmarkSnapshot measures a live threshold check on a run with 8
// finished stages and one that changes between snapshots: taking the
// snapshot (which copies only the changed stage's histograms), and a
// run-wide p99 (which merges all nine stages' histograms, once per
// snapshot).
func BenchmarkSnapshot(b *testing.B) {
	c := NewCollector()
	defer c.Close()
	for i := range 9 {
		stage := fmt.Sprintf("c%d", i)
		for j := range 1000 {
			c.Sample(okSample(stage, 0, time.Duration(j+1)*time.Millisecond))
		}
	}
	live := okSample("c8", 0, time.Second)
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Sample(live)
			c.Snapshot()
		}
	})
	b.Run("snapshot+p99-over-9-stages", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Sample(live)
			if _, _, err := c.Snapshot().Value(Query{Metric: "ttft", Agg: AggP, P: 99}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// gaps is an ITL of n gaps, 20 ms and up.
func gaps(n int) []time.Duration {
	itl := make([]time.Duration, n)
	for i := range itl {
		itl[i] = time.Duration(20+i) * time.Millisecond
	}
	return itl
}
