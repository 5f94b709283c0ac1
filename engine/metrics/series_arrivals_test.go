package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// arrival is one open-model iteration of a synthetic stream: due at
// schedS, started at startS, or dropped (no start).
type arrival struct {
	schedS, startS float64
	dropped        bool
}

// TestTimeSeriesArrivals feeds an open-model stream and checks each
// second's intended, arrivals and dropped: intended and dropped by the
// intended second, arrivals by the actual one, whatever their order.
func TestTimeSeriesArrivals(t *testing.T) {
	stream := []arrival{
		{schedS: 10.0, startS: 10.001},
		{schedS: 10.5, startS: 10.5},
		{schedS: 10.9, startS: 11.2}, // late: intended in 0, arrived in 1
		{schedS: 11.3, dropped: true},
		{schedS: 11.4, startS: 11.399999}, // a hair early, same second
		{schedS: 12.0, startS: 11.9999},   // a hair early, across a second
		{schedS: 12.5, startS: 14.1},      // very late: arrives in 4
		{schedS: 12.6, dropped: true},
		{schedS: 12.7, dropped: true},
		{schedS: 15.5, startS: 15.6}, // after the stage's end mark
	}
	c := NewCollector()
	c.StageStarted(openMark("s1", 0, 3, 10))
	for _, a := range stream {
		if a.dropped {
			c.Dropped(engine.DropMark{Scenario: "open", Stage: "s1", Scheduled: at(a.schedS)})
			continue
		}
		c.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "s1", Scheduled: at(a.schedS), Started: at(a.startS)})
	}
	// Neither a closed-model iteration nor a warmup one is an arrival.
	c.IterationStarted(engine.IterationMark{Scenario: "closed", Stage: "c1", Started: at(12.5)})
	c.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "s1", Warmup: true, Scheduled: at(13.2), Started: at(13.2)})
	c.StageEnded(openMark("s1", 0, 3, 15))
	got := c.Close().TimeSeries
	want := [][3]int64{ // intended, arrivals, dropped, from t = 0
		{3, 2, 0},
		{2, 3, 1},
		{4, 0, 2},
		{0, 0, 0},
		{0, 1, 0},
		{1, 1, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d: %s", len(got), len(want), jsonOf(t, got))
	}
	for i, p := range got {
		if g, w := [3]int64{p.Intended, p.Arrivals, p.Dropped}, want[i]; g != w || p.T != int64(i) {
			t.Errorf("t = %d: intended, arrivals, dropped = %v, want %v at t = %d", p.T, g, w, i)
		}
	}
	var intended, arrivals, dropped int64
	for _, p := range got {
		intended, arrivals, dropped = intended+p.Intended, arrivals+p.Arrivals, dropped+p.Dropped
	}
	st := findStage(t, c.Close(), "s1")
	if g, w := fmt.Sprint(intended, arrivals, dropped), fmt.Sprint(st.Iterations+st.DroppedIterations, st.Iterations, st.DroppedIterations); g != w {
		t.Errorf("series totals intended, arrivals, dropped = %s, want the stage's %s", g, w)
	}
}

// TestTimeSeriesClosedModelNoArrivals: a closed-model run's points carry
// no arrival fields, so its result file reads as before.
func TestTimeSeriesClosedModelNoArrivals(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 10))
	c.IterationStarted(engine.IterationMark{Scenario: "sweep", Stage: "c1", Started: at(10.2)})
	c.Sample(okSample("c1", 10.2, 100*time.Millisecond))
	c.StageEnded(mark("sweep", "c1", 0, 1, 11))
	ts := c.Close().TimeSeries
	if got, want := jsonOf(t, ts[0]), `{"t":0,"starts":1,"completions":1,"errors":0,"in_flight":0,"output_tok_per_sec":3,"ttft_p50":20,"ttft_p99":20}`; got != want {
		t.Errorf("closed-model point = %s, want %s", got, want)
	}
}

// TestTimeSeriesArrivalsAnchor: an arrival that reaches the collector
// before any stage mark anchors the series at its intended start, so the
// second it was due is t = 0, not t = -1.
func TestTimeSeriesArrivalsAnchor(t *testing.T) {
	c := NewCollector()
	c.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "s1", Scheduled: at(5.9), Started: at(6.2)})
	ts := c.Close().TimeSeries
	if got, want := jsonOf(t, ts), `[{"t":0,"starts":0,"completions":0,"errors":0,"in_flight":0,"output_tok_per_sec":0,"ttft_p50":null,"ttft_p99":null,"intended":1,"arrivals":1}]`; got != want {
		t.Errorf("series = %s, want %s", got, want)
	}
}
