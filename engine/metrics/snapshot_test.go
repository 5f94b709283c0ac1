package metrics

import (
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestSnapshotDuringRun queries snapshots while producers send: counts
// only grow, never pass what was sent, and the final state has everything.
func TestSnapshotDuringRun(t *testing.T) {
	const producers, each = 4, 1500
	c := NewCollector(WithBuffer(64))
	if err := c.Track("ttft", Filter{"prompt": "short"}); err != nil {
		t.Fatal(err)
	}
	c.StageStarted(openMark("s1", 0, 10, 0))
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for i := range each {
				c.Sample(req("open", "s1", 1, 100, 1000, 5, short))
				c.IterationStarted(iter("open", "s1", 1, 5))
				c.Metric(check("open", "s1", "ok", i%2 == 0))
			}
		})
	}
	queries := []Query{
		{Metric: "ttft", Agg: AggP, P: 99},
		{Metric: "ttft", Filter: Filter{"prompt": "short"}, Agg: AggCount},
		{Metric: "iterations", Filter: Filter{"stage": "s1"}, Agg: AggRate},
		{Metric: "checks", Filter: Filter{"check": "ok"}, Agg: AggRate},
	}
	stop := make(chan struct{})
	reader := make(chan error, 1)
	go func() {
		defer close(reader)
		last := make([]int64, len(queries))
		for {
			snap := c.Snapshot()
			for i, q := range queries {
				_, n, err := snap.Value(q)
				if err != nil {
					reader <- err
					return
				}
				if n < last[i] || n > producers*each {
					t.Errorf("%+v: n = %d after %d", q, n, last[i])
				}
				last[i] = n
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-reader; err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, q := range queries[:2] {
		if _, n, _ := c.Snapshot().Value(q); n != producers*each {
			t.Errorf("final %+v: n = %d, want %d", q, n, producers*each)
		}
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	c := NewCollector()
	c.Sample(req("sc", "st", 0, 100, 1000, 0, nil))
	c.Metric(metricSample("sc", "st", "bytes", engine.MetricCounter, 5, nil))
	before := c.Snapshot()
	c.Sample(req("sc", "st", 0, 900, 9000, 0, nil))
	c.Metric(metricSample("sc", "st", "bytes", engine.MetricCounter, 5, nil))
	after := c.Snapshot()
	c.Close()
	for _, tc := range []struct {
		snap *Snapshot
		q    Query
		want float64
	}{
		{before, Query{Metric: "ttft", Agg: AggMax}, 100},
		{before, Query{Metric: "ttft", Agg: AggP, P: 99}, 100},
		{before, Query{Metric: "bytes", Agg: AggCount}, 5},
		{after, Query{Metric: "ttft", Agg: AggMax}, 900},
		{after, Query{Metric: "bytes", Agg: AggCount}, 10},
	} {
		v, _, err := tc.snap.Value(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(v, tc.want) {
			t.Errorf("%+v = %v, want %v", tc.q, v, tc.want)
		}
	}
}

// TestSnapshotReusesUnchangedHistograms: a snapshot copies only the
// histograms that changed since the last one.
func TestSnapshotReusesUnchangedHistograms(t *testing.T) {
	a := newAggregator()
	s1, s2 := req("sc", "s1", 0, 100, 1000, 0, nil), req("sc", "s2", 0, 100, 1000, 0, nil)
	e1, e2 := sampleEvent(&s1), sampleEvent(&s2)
	a.add(&e1)
	a.add(&e2)
	first := a.snapshot(time.Now(), false)
	a.add(&e2)
	second := a.snapshot(time.Now(), false)
	if first.stages[0].cells[mTTFT].t != second.stages[0].cells[mTTFT].t {
		t.Error("unchanged stage s1: its TTFT histogram was copied again")
	}
	if first.stages[1].cells[mTTFT].t == second.stages[1].cells[mTTFT].t {
		t.Error("changed stage s2: the snapshot reused a stale TTFT histogram")
	}
	if got, want := first.stages[1].cells[mTTFT].n, int64(1); got != want {
		t.Errorf("first snapshot's s2 count = %d, want %d", got, want)
	}
}

func TestSnapshotAfterClose(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for i := range 1000 {
		c.Sample(okSample("c1", 1, time.Duration(i+1)*time.Millisecond))
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	var wg sync.WaitGroup
	snaps := make([]*Snapshot, 4)
	for i := range snaps {
		wg.Go(func() { snaps[i] = c.Snapshot() }) // some before, some after Close
	}
	sum := c.Close()
	wg.Wait()
	st := findStage(t, sum, "c1")
	final := c.Snapshot()
	if final != c.Snapshot() {
		t.Error("Snapshot after Close returned a different snapshot each call")
	}
	for i, s := range append(snaps, final) {
		for _, tc := range []struct {
			q    Query
			want float64
		}{
			{Query{Metric: "e2e", Agg: AggP, P: 99}, st.E2E.P99},
			{Query{Metric: "e2e", Agg: AggAvg}, st.E2E.Mean},
			{Query{Metric: "requests", Agg: AggRate}, st.ReqPerSec},
		} {
			v, n, err := s.Value(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if v != tc.want || n == 0 {
				t.Errorf("snapshot %d: %+v = %v (n %d), want the summary's %v", i, tc.q, v, n, tc.want)
			}
		}
	}
}

// TestSnapshotLiveWindow: during the run a stage that has not ended ends
// now, so a counter's rate is per second so far.
func TestSnapshotLiveWindow(t *testing.T) {
	c := NewCollector()
	start := time.Now().Add(-2 * time.Second)
	c.StageStarted(engine.StageMark{Scenario: "sc", Stage: "st", At: start})
	for range 10 {
		c.IterationStarted(engine.IterationMark{Scenario: "sc", Stage: "st", Started: start})
	}
	v, n, err := c.Snapshot().Value(Query{Metric: "iterations", Agg: AggRate})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	// 10 iterations over at least 2 s (the bound is generous: a slow
	// machine only lengthens the window).
	if n != 10 || v > 5.0001 || v < 0.5 {
		t.Errorf("live rate = %v with n %d, want about 5 (at most 5) with n 10", v, n)
	}
}

// TestSnapshotConcurrentValues: one snapshot serves queries from several
// goroutines, which share its cache of merged stages.
func TestSnapshotConcurrentValues(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	snap := c.Snapshot()
	c.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, q := range []Query{
				{Metric: "ttft", Agg: AggAvg},
				{Metric: "ttft", Agg: AggP, P: 99},
				{Metric: "ratio", Filter: Filter{"scenario": "open"}, Agg: AggMin},
			} {
				if _, n, err := snap.Value(q); err != nil || n == 0 {
					t.Errorf("%+v: n %d, err %v", q, n, err)
				}
			}
		})
	}
	wg.Wait()
	if v, _, _ := snap.Value(Query{Metric: "ttft", Agg: AggAvg}); v != 450 {
		t.Errorf("ttft avg = %v after concurrent queries, want 450", v)
	}
}

// TestAggregatorAllocs: once a stage, check and metric exist, recording
// allocates nothing, also with tracked views.
func TestAggregatorAllocs(t *testing.T) {
	a := newAggregator()
	for _, tr := range []struct {
		metric string
		f      Filter
	}{{"ttft", Filter{"prompt": "short"}}, {"checks", Filter{"prompt": "short"}}} {
		if err := a.track(tr.metric, tr.f); err != nil {
			t.Fatal(err)
		}
	}
	s := req("open", "s1", 1, 100, 1000, 5, short)
	m := iter("open", "s1", 1, 5)
	ch := check("open", "s1", "ok", true)
	tr := metricSample("open", "s1", "ratio", engine.MetricTrend, -1.25, short)
	ct := metricSample("open", "s1", "bytes", engine.MetricCounter, 3, nil)
	events := []event{sampleEvent(&s), iterationEvent(&m), metricEvent(&ch), metricEvent(&tr),
		metricEvent(&ct), {kind: evDrop, scenario: "open", stage: "s1", at: at(1)}}
	for i := range events {
		a.add(&events[i]) // first use allocates histograms and map entries
	}
	for i := range events {
		if got := testing.AllocsPerRun(100, func() { a.add(&events[i]) }); got != 0 {
			t.Errorf("event kind %d: %v allocs per add, want 0", events[i].kind, got)
		}
	}
}

// TestAggregatorAllocsNewFigures: a judged, tagged sample with token-level
// ITL, a token check and a dirty sample allocate nothing once their
// stage, tag values and second exist.
func TestAggregatorAllocsNewFigures(t *testing.T) {
	a := newAggregator()
	s := req("open", "s1", 1, 100, 1000, 5, map[string]string{"prompt": "short", "model": "m1"})
	s.TTFC, s.ClientOutputTokens, s.ReasoningTokens = 200*time.Millisecond, 6, 2
	s.TokenITL = []time.Duration{time.Millisecond, 2 * time.Millisecond}
	d := s
	d.Dirty = "empty"
	events := []event{sampleEvent(&s), dirtyEvent(&d)}
	events[0].judged, events[0].good = true, true
	for i := range events {
		a.add(&events[i])
	}
	for i := range events {
		if got := testing.AllocsPerRun(100, func() { a.add(&events[i]) }); got != 0 {
			t.Errorf("event kind %d: %v allocs per add, want 0", events[i].kind, got)
		}
	}
}
