package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

func TestStageOpenModelFigures(t *testing.T) {
	c := NewCollector()
	fixture(t, c)
	sum := c.Close()
	s1, s2, c1 := findStage(t, sum, "s1"), findStage(t, sum, "s2"), findStage(t, sum, "c1")
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"s1 iterations", float64(s1.Iterations), 5},
		{"s1 dropped", float64(s1.DroppedIterations), 3},
		{"s1 target rate", s1.TargetRate, 2},
		{"s1 achieved rate", s1.AchievedRate, 0.5},
		{"s1 scheduled rate", s1.ScheduledRate, 0.8},
		{"s2 iterations", float64(s2.Iterations), 2},
		{"s2 dropped", float64(s2.DroppedIterations), 1},
		{"s2 target rate", s2.TargetRate, 4},
		{"s2 achieved rate", s2.AchievedRate, 0.2},
		{"s2 scheduled rate", s2.ScheduledRate, 0.3},
		{"c1 iterations", float64(c1.Iterations), 2},
		{"c1 target rate (closed)", c1.TargetRate, 0},
		{"c1 achieved rate", c1.AchievedRate, 0.1},
		{"s1 schedule lag count", float64(s1.ScheduleLag.Count), 5},
		{"s1 schedule lag mean", s1.ScheduleLag.Mean, 10},
		{"s2 schedule lag max", s2.ScheduleLag.Max, 30},
		{"c1 schedule lag count (closed)", float64(c1.ScheduleLag.Count), 0},
		{"s1 ttft_sched min", s1.TTFTSched.Min, 150},
		{"s1 ttft_sched max", s1.TTFTSched.Max, 450},
		{"s1 e2e_sched mean", s1.E2ESched.Mean, 2550},
		{"s2 ttft_sched mean", s2.TTFTSched.Mean, 650},
		{"s2 e2e_sched min", s2.E2ESched.Min, 5100},
		{"c1 ttft_sched count (no schedule)", float64(c1.TTFTSched.Count), 0},
		{"s1 ttft unchanged by the schedule", s1.TTFT.Min, 100},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestScheduleLagEdges: a start a hair before its schedule is on time, not
// clamped; only an iteration's first request (with Scheduled) counts in the
// *_sched figures; failed requests count nowhere.
func TestScheduleLagEdges(t *testing.T) {
	c := NewCollector()
	early := iter("open", "s1", 1, 0)
	early.Scheduled = early.Started.Add(time.Microsecond)
	c.IterationStarted(early)
	c.IterationStarted(iter("open", "s1", 1, 2500))
	first := req("open", "s1", 1, 100, 1000, 0, nil)
	first.Scheduled = first.Start.Add(time.Millisecond) // started early
	c.Sample(first)
	c.Sample(req("open", "s1", 2, 100, 1000, 0, nil)) // a later request: no schedule
	late := req("open", "s1", 3, 100, 1000, 400, nil)
	c.Sample(late)
	bad := failSample("s1", 4, "conn_reset")
	bad.Scenario, bad.Scheduled = "open", at(3)
	c.Sample(bad)
	st := findStage(t, c.Close(), "s1")
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"lag count", float64(st.ScheduleLag.Count), 2},
		{"lag min (early start is on time)", st.ScheduleLag.Min, 0},
		{"lag max", st.ScheduleLag.Max, 2500},
		{"lag clamped", float64(st.ScheduleLag.Clamped), 0},
		{"ttft_sched count", float64(st.TTFTSched.Count), 2},
		{"ttft_sched min", st.TTFTSched.Min, 100},
		{"ttft_sched max", st.TTFTSched.Max, 500},
		{"e2e_sched max", st.E2ESched.Max, 1400},
		{"ttft count", float64(st.TTFT.Count), 3},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestWarmupExcludedFromNewFigures(t *testing.T) {
	c := NewCollector()
	c.StageStarted(openMark("s1", 0, 2, 0))
	c.IterationStarted(iter("open", "s1", 1, 10))
	w := iter("open", "s1", 1, 5000)
	w.Warmup = true
	c.IterationStarted(w)
	c.Metric(check("open", "s1", "ok", true))
	for _, m := range []engine.MetricSample{
		check("open", "s1", "ok", false),
		check("open", "s1", "warm only", false),
		metricSample("open", "s1", "ratio", engine.MetricTrend, 99, nil),
		metricSample("open", "s1", "bytes", engine.MetricCounter, 99, nil),
	} {
		m.Warmup = true
		c.Metric(m)
	}
	s := req("open", "s1", 1, 100, 1000, 9000, nil)
	s.Warmup = true
	c.Sample(s)
	c.StageEnded(openMark("s1", 0, 2, 10))
	if got, want := c.Live().Iterations, int64(1); got != want {
		t.Errorf("Live().Iterations = %d, want %d", got, want)
	}
	sum := c.Close()
	st := findStage(t, sum, "s1")
	if got, want := st.Iterations, int64(1); got != want {
		t.Errorf("iterations = %d, want %d", got, want)
	}
	if got, want := st.ScheduleLag.Max, 10.0; got != want {
		t.Errorf("schedule lag max = %v, want %v (warmup leaked)", got, want)
	}
	if got := st.TTFTSched.Count; got != 0 {
		t.Errorf("ttft_sched count = %d, want 0", got)
	}
	if got, want := len(st.Checks), 1; got != want {
		t.Fatalf("%d checks, want %d: %+v", got, want, st.Checks)
	}
	if got, want := st.Checks[0], (CheckSummary{"ok", 1, 0}); got != want {
		t.Errorf("check = %+v, want %+v", got, want)
	}
	if got := len(sum.Metrics) + len(st.Metrics); got != 0 {
		t.Errorf("%d custom metrics, want none from warmup", got)
	}
}

// TestDropsOutsideStages: drops and iterations that name a stage with no
// marks still get a window from their times.
func TestDropsOutsideStages(t *testing.T) {
	c := NewCollector()
	c.IterationStarted(iter("open", "x", 2, 0))
	c.Dropped(engine.DropMark{Scenario: "open", Stage: "x", Scheduled: at(6)})
	c.Dropped(engine.DropMark{Scenario: "open", Stage: "x", Scheduled: at(4)})
	live := c.Live()
	st := findStage(t, c.Close(), "x")
	if got, want := live.Dropped, int64(2); got != want {
		t.Errorf("Live().Dropped = %d, want %d", got, want)
	}
	if got, want := st.DurationS, 4.0; got != want {
		t.Errorf("duration = %v s, want %v", got, want)
	}
	if got, want := st.ScheduledRate, 0.75; got != want {
		t.Errorf("scheduled rate = %v, want %v", got, want)
	}
}
