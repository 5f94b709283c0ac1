package metrics

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

func TestTimeSeries(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 10))    // the origin: t = 0 at 10 s
	a := okSample("c1", 10.2, 1500*time.Millisecond) // TTFT 300 ms; ends at 11.7
	a.OutputTokens = 12                              // generated 10.5 .. 11.7: 6 in each second
	c.Sample(a)
	b := okSample("c1", 10.5, 200*time.Millisecond) // ends at 10.7, its 3 tokens all in the first second
	c.Sample(b)
	c.Sample(failSample("c1", 11.9, "conn_reset")) // ends at 11.906
	d := okSample("c1", 13.5, 100*time.Millisecond)
	c.Sample(d)
	warm := okSample("c1", 12, time.Second)
	warm.Warmup = true
	c.Sample(warm)
	dirty := okSample("c1", 12, time.Second)
	dirty.Dirty = "empty"
	c.Sample(dirty)
	got := c.Close().TimeSeries
	want := []Point{
		// p50 of {40, 300} is the top of 40 ms's HDR bucket, as in a Dist.
		{T: 0, Starts: 2, Completions: 1, InFlight: 1, OutputTokPerSec: 5 + 3, TTFTP50: fp(40.031), TTFTP99: fp(300)},
		{T: 1, Starts: 1, Completions: 2, Errors: 1, InFlight: 0, OutputTokPerSec: 7},
		{T: 2},
		{T: 3, Starts: 1, Completions: 1, OutputTokPerSec: 3, TTFTP50: fp(20), TTFTP99: fp(20)},
	}
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("time series =\n%s\nwant\n%s", g, w)
	}
}

func fp(v float64) *float64 { return &v }

// TestTimeSeriesStartsAtFirstStage: a stage whose first request starts
// late still has its first seconds in the series, with null latencies.
func TestTimeSeriesStartsAtFirstStage(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 10))
	c.Sample(okSample("c1", 12.5, 100*time.Millisecond))
	end := mark("sweep", "c1", 0, 1, 14)
	c.StageEnded(end)
	ts := c.Close().TimeSeries
	if got, want := len(ts), 5; got != want {
		t.Fatalf("%d points, want %d (t = 0..4): %s", got, want, jsonOf(t, ts))
	}
	if got, want := ts[0].T, int64(0); got != want {
		t.Errorf("first t = %d, want %d", got, want)
	}
	if got, want := jsonOf(t, ts[1]), `{"t":1,"starts":0,"completions":0,"errors":0,"in_flight":0,"output_tok_per_sec":0,"ttft_p50":null,"ttft_p99":null}`; got != want {
		t.Errorf("a second without requests = %s, want %s", got, want)
	}
}

func TestTimeSeriesTokensAddUp(t *testing.T) {
	c := NewCollector()
	var want int64
	for i := range 200 {
		s := okSample("c1", float64(i)*0.37, time.Duration(500+i*37)*time.Millisecond)
		s.OutputTokens = 10 + i%17
		want += int64(s.OutputTokens)
		c.Sample(s)
	}
	sum := c.Close()
	var tokens float64
	var inFlight int64
	for i, p := range sum.TimeSeries {
		tokens += p.OutputTokPerSec
		if p.T != sum.TimeSeries[0].T+int64(i) {
			t.Fatalf("point %d has t %d: the series has a gap", i, p.T)
		}
		inFlight = p.InFlight
	}
	if math.Abs(tokens-float64(want)) > 0.001*float64(len(sum.TimeSeries)) {
		t.Errorf("tokens over the series = %v, want %d", tokens, want)
	}
	if got := findStage(t, sum, "c1").OutputTokens; got != want {
		t.Errorf("stage output tokens = %d, want %d", got, want)
	}
	if inFlight != 0 {
		t.Errorf("in flight at the end = %d, want 0", inFlight)
	}
}

func TestTimeSeriesBounds(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 100))
	c.Sample(okSample("c1", 99.5, time.Second)) // before the origin
	var zero engine.Sample
	zero.Scenario, zero.Stage, zero.E2E = "sweep", "c1", time.Second // no start time
	c.Sample(zero)
	far := okSample("c1", 100+2*MaxSeriesSeconds, time.Second)
	c.Sample(far)
	long := okSample("c1", 100, time.Hour) // its tokens spread over an hour
	c.Sample(long)
	ts := c.Close().TimeSeries
	if got, want := ts[0].T, int64(-1); got != want {
		t.Errorf("first point t = %d, want %d", got, want)
	}
	if got, want := len(ts), 3602; got != want {
		t.Errorf("%d points, want %d (an hour and two)", got, want)
	}
	if got := fmt.Sprint(ts[0].Starts, ts[1].Starts, ts[1].Completions); got != "1 1 1" {
		t.Errorf("starts, starts, completions = %s, want 1 1 1", got)
	}
}

func BenchmarkSeriesSample(b *testing.B) {
	var s series
	smp := okSample("c1", 0, 20*time.Second)
	e := sampleEvent(&smp)
	b.ReportAllocs()
	for b.Loop() {
		s.sample(&e)
	}
}
