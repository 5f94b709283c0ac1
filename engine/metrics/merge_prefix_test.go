package metrics

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/llmload/llmload/engine"
)

// TestMergeExactExercisesIssue15 makes sure the seeded run behind
// TestMergeExact has what its equality checks are to prove: arrivals,
// drops and prefix-cache hits.
func TestMergeExactExercisesIssue15(t *testing.T) {
	whole, _ := mergeRun(t, 42, 1)
	sum := whole.Close()
	var intended, arrivals, dropped, hits int64
	for _, p := range sum.TimeSeries {
		intended, arrivals, dropped = intended+p.Intended, arrivals+p.Arrivals, dropped+p.Dropped
	}
	shares := 0
	for _, st := range sum.Stages {
		hits += st.CachedRequests
		if st.PrefixHitShare != nil {
			shares++
		}
	}
	if intended == 0 || arrivals == 0 || dropped == 0 || hits == 0 || shares == 0 {
		t.Errorf("intended %d, arrivals %d, dropped %d, cached requests %d, stages with a hit share %d: want all > 0",
			intended, arrivals, dropped, hits, shares)
	}
}

// TestMergePrefixAndArrivals: a part whose server never reported a hit
// shows no hit share of its own, yet merged with a part that did its
// stages get the share the whole run's collector gives; arrivals of the
// open stage add up second by second.
func TestMergePrefixAndArrivals(t *testing.T) {
	whole, a, b := NewCollector(), NewCollector(), NewCollector()
	feed := func(c *Collector, f func(*Collector)) { f(c); f(whole) }
	open := func(stage string, in, cached int) engine.Sample {
		s := cachedSample(stage, in, cached, engine.TokensFromUsage)
		s.Scenario = "open"
		return s
	}
	for _, c := range []*Collector{whole, a, b} {
		c.StageStarted(openMark("s1", 0, 2, 0))
		c.StageStarted(openMark("s2", 1, 2, 0))
	}
	feed(a, func(c *Collector) {
		c.Sample(open("s1", 100, 40))
		c.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "s1", Scheduled: at(0.5), Started: at(1.2)})
		c.Dropped(engine.DropMark{Scenario: "open", Stage: "s1", Scheduled: at(1.5)})
	})
	feed(b, func(c *Collector) {
		c.Sample(open("s1", 300, 0))
		c.Sample(open("s2", 50, 0))
		c.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "s1", Scheduled: at(0.7), Started: at(0.8)})
	})
	for _, c := range []*Collector{whole, a, b} {
		c.StageEnded(openMark("s1", 0, 2, 3))
		c.StageEnded(openMark("s2", 1, 2, 3))
	}
	if st := findStage(t, b.Close(), "s1"); st.PrefixHitShare != nil {
		t.Errorf("part b alone: hit share %v, want absent (its server never said)", *st.PrefixHitShare)
	}
	sum, _, err := Merge(partsOf([]*Collector{a, b}))
	if err != nil {
		t.Fatal(err)
	}
	want := whole.Close()
	for _, name := range []string{"s1", "s2"} {
		g, w := findStage(t, sum, name), findStage(t, want, name)
		if got, wnt := prefixOf(&g), prefixOf(&w); got != wnt {
			t.Errorf("%s: merged %s, want %s", name, got, wnt)
		}
	}
	if got, wnt := prefixOf(ptr(findStage(t, sum, "s1"))), "400 40 1 0.1"; got != wnt {
		t.Errorf("s1 = %s, want %s", got, wnt)
	}
	if got, wnt := prefixOf(ptr(findStage(t, sum, "s2"))), "50 0 0 0"; got != wnt {
		t.Errorf("s2 = %s, want %s (a hit elsewhere in the run: 0%%, not absent)", got, wnt)
	}
	strip := func(ps []Point) []Point {
		out := make([]Point, len(ps))
		for i, p := range ps {
			out[i] = Point{T: p.T, Intended: p.Intended, Arrivals: p.Arrivals, Dropped: p.Dropped}
		}
		return out
	}
	if got, wnt := strip(sum.TimeSeries), strip(want.TimeSeries); !reflect.DeepEqual(got, wnt) {
		t.Errorf("merged arrivals %+v, want %+v", got, wnt)
	}
	if got, wnt := strip(sum.TimeSeries)[:2], []Point{{T: 0, Intended: 2, Arrivals: 1}, {T: 1, Intended: 1, Arrivals: 1, Dropped: 1}}; !reflect.DeepEqual(got, wnt) {
		t.Errorf("merged arrivals %+v, want %+v", got, wnt)
	}
}

func ptr[T any](v T) *T { return &v }

// prefixOf prints a stage's prefix-cache figures: usage input, cached
// tokens, cached requests, share or "absent".
func prefixOf(st *StageSummary) string {
	share := "absent"
	if st.PrefixHitShare != nil {
		share = fmt.Sprint(*st.PrefixHitShare)
	}
	return fmt.Sprintf("%d %d %d %s", st.UsageInputTokens, st.CachedTokens, st.CachedRequests, share)
}
