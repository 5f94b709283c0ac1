package metrics

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// TestByTarget: a stage whose requests several targets served is broken
// down by target, with the counts its rates, goodput and errors need; a
// run with one target has no breakdown, and a threshold's filter on
// target selects one target's requests.
func TestByTarget(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{TTFT: 150 * time.Millisecond}))
	if err := c.Track("ttft", Filter{TargetTag: "b"}); err != nil {
		t.Fatal(err)
	}
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for i, tc := range []struct {
		target string
		ttft   time.Duration
	}{{"a", 100 * time.Millisecond}, {"a", 120 * time.Millisecond}, {"b", 300 * time.Millisecond}, {"b", 100 * time.Millisecond}} {
		s := okSample("c1", float64(1+i), time.Second)
		s.Target, s.TTFT, s.OutputTokens = tc.target, tc.ttft, 10*(i+1)
		c.Sample(s)
	}
	failed := failSample("c1", 5, engine.ErrTimeoutTTFT)
	failed.Target = "b"
	c.Sample(failed)
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	snap := c.Snapshot()
	sum := c.Close()
	st := findStage(t, sum, "c1")
	a, b := st.ByTarget["a"], st.ByTarget["b"]
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"targets", float64(len(st.ByTarget)), 2},
		{"a requests", float64(a.Requests), 2},
		{"a output tokens", float64(a.OutputTokens), 30},
		{"a good", float64(a.GoodRequests), 2},
		{"a req/s", a.ReqPerSec(st.DurationS), 0.2},
		{"b requests", float64(b.Requests), 3},
		{"b failed", float64(b.Failed), 1},
		{"b timeouts", float64(b.Errors[engine.ErrTimeoutTTFT]), 1},
		{"b good", float64(b.GoodRequests), 1},
		{"b output tok/s", b.OutputTokPerSec(st.DurationS), 7},
		{"b ttft max", b.TTFT.Max, 300},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if len(b.TPOT.Histogram) == 0 {
		t.Error("b's TPOT has no histogram: two targets could not be compared exactly")
	}
	v, _, err := snap.Value(Query{Metric: "ttft", Filter: Filter{TargetTag: "b"}, Agg: AggMax})
	if err != nil {
		t.Fatal(err)
	}
	if v < 299 || v > 301 {
		t.Errorf("ttft{target:b}.max = %v ms, want 300", v)
	}

	one := NewCollector()
	one.StageStarted(mark("sweep", "c1", 0, 1, 0))
	one.Sample(okSample("c1", 1, time.Second))
	one.StageEnded(mark("sweep", "c1", 0, 1, 10))
	if st := findStage(t, one.Close(), "c1"); st.ByTarget != nil {
		t.Errorf("one target: ByTarget %v, want nil", st.ByTarget)
	}
}
