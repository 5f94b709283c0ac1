package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

func dirtySample(stage string, startS float64, kind string) engine.Sample {
	s := failSample(stage, startS, "http_4xx:400")
	s.Dirty, s.Tags = kind, short
	s.E2E = 9 * time.Second
	return s
}

func TestDirtySamplesStayOutOfCleanStatistics(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{E2E: time.Hour}))
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.Sample(okSample("c1", 1, 100*time.Millisecond))
	for _, kind := range []string{"empty", "overlong"} {
		c.Sample(dirtySample("c1", 2, kind))
		ok := okSample("c1", 2, time.Minute) // a dirty request the server answered
		ok.Dirty, ok.Tags = kind, short
		c.Sample(ok)
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	live := c.Live()
	snap := c.Snapshot()
	sum := c.Close()
	st := findStage(t, sum, "c1")
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"dirty_requests", float64(st.DirtyRequests), 4},
		{"Live().Dirty", float64(live.Dirty), 4},
		{"requests", float64(st.Requests), 1},
		{"Live().Requests", float64(live.Requests), 1},
		{"failed", float64(st.Failed), 0},
		{"errors by class", float64(len(st.Errors)), 0},
		{"e2e max", st.E2E.Max, 100},
		{"output tokens", float64(st.OutputTokens), 3},
		{"good requests", float64(st.GoodRequests), 1},
		{"good share", st.GoodShare, 1},
		{"tag requests", float64(st.ByTag["prompt"]["short"].Requests), 0},
		{"series starts", float64(seriesTotal(sum.TimeSeries, func(p Point) int64 { return p.Starts })), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if v, n, err := snap.Value(Query{Metric: "errors", Agg: AggRate}); err != nil || v != 0 || n != 1 {
		t.Errorf("errors.rate = %v (n %d, err %v), want 0 over the one clean request", v, n, err)
	}
}

func TestNewDistributions(t *testing.T) {
	c := NewCollector()
	s := okSample("c1", 0, time.Second)
	s.Streamed = true
	s.TTFT, s.TTFC = 100*time.Millisecond, 400*time.Millisecond // reasoning first
	s.TokenITL = []time.Duration{0, 5 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}
	s.ReasoningTokens = 40
	c.Sample(s)
	plain := okSample("c1", 1, 2*time.Second) // no reasoning, no per-chunk usage
	plain.TTFC = plain.TTFT
	c.Sample(plain)
	batch := engine.Sample{Scenario: "sweep", Stage: "c1", Result: engine.Result{
		Start: at(2), Status: 200, TTFB: 3 * time.Second, E2E: 3 * time.Second,
		OutputTokens: 50, TokensSource: engine.TokensFromUsage, Streamed: false,
	}}
	c.Sample(batch)
	snap := c.Snapshot()
	st := findStage(t, c.Close(), "c1")
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"ttft count (not streamed: none)", float64(st.TTFT.Count), 2},
		{"ttfc count", float64(st.TTFC.Count), 2},
		{"ttfc max", st.TTFC.Max, 400},
		{"ttfc min", st.TTFC.Min, 400},
		{"itl_token count (zero gaps are real)", float64(st.ITLToken.Count), 4},
		{"itl_token mean", st.ITLToken.Mean, 5},
		{"itl count (chunk level)", float64(st.ITL.Count), 4},
		{"tpot count", float64(st.TPOT.Count), 2},
		{"e2e count (not streamed included)", float64(st.E2E.Count), 3},
		{"e2e max", st.E2E.Max, 3000},
		{"reasoning tokens", float64(st.ReasoningTokens), 40},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, tc := range []struct {
		q    Query
		want float64
	}{
		{Query{Metric: "ttfc", Agg: AggMax}, 400},
		{Query{Metric: "itl_token", Agg: AggCount}, 4},
		{Query{Metric: "itl_token", Agg: AggP, P: 99}, 10},
		{Query{Metric: "reasoning_tokens", Agg: AggCount}, 40},
	} {
		if v, _, err := snap.Value(tc.q); err != nil || !closeTo(v, tc.want) {
			t.Errorf("%+v = %v (err %v), want %v", tc.q, v, err, tc.want)
		}
	}
}

func TestTokenAccounting(t *testing.T) {
	c := NewCollector()
	for _, tc := range []struct {
		usage, client int
		source, in    string
	}{
		{100, 100, engine.TokensFromUsage, engine.TokensFromUsage},        // agree
		{100, 104, engine.TokensFromUsage, engine.TokensFromUsage},        // 4%: within tolerance
		{100, 110, engine.TokensFromUsage, engine.TokensFromTokenizer},    // 10%: mismatch
		{0, 7, engine.TokensFromUsage, ""},                                // usage 0: 700%
		{100, 0, engine.TokensFromUsage, engine.TokensFromUsage},          // client did not count
		{90, 100, engine.TokensFromTokenizer, engine.TokensFromTokenizer}, // nothing to compare
	} {
		s := okSample("c1", 0, time.Second)
		s.OutputTokens, s.ClientOutputTokens = tc.usage, tc.client
		s.TokensSource, s.InputTokensSource = tc.source, tc.in
		c.Sample(s)
	}
	bad := failSample("c1", 0, "conn_reset")
	bad.TokensSource, bad.ClientOutputTokens, bad.InputTokensSource = engine.TokensFromUsage, 3, engine.TokensFromUsage
	c.Sample(bad)
	st := findStage(t, c.Close(), "c1")
	if got, want := st.TokenCheck.Compared, int64(4); got != want {
		t.Errorf("compared = %d, want %d", got, want)
	}
	if got, want := st.TokenCheck.Mismatched, int64(2); got != want {
		t.Errorf("mismatched = %d, want %d", got, want)
	}
	if got, want := st.TokenCheck.MeanRelDiff, (0+0.04+0.10+7)/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("mean_rel_diff = %v, want %v", got, want)
	}
	want := map[string]int64{engine.TokensFromUsage: 3, engine.TokensFromTokenizer: 2, "unknown": 1}
	if got := jsonOf(t, st.InputTokensSource); got != jsonOf(t, want) {
		t.Errorf("input_tokens_source = %s, want %s (successes only)", got, jsonOf(t, want))
	}
}

// feedGoodput runs a stage of 4 s: two requests meet TTFT ≤ 250 ms and
// E2E ≤ 2 s, one misses TTFT, one E2E, one fails.
func feedGoodput(c *Collector) {
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for _, e2e := range []time.Duration{time.Second, time.Second, 1500 * time.Millisecond, 3 * time.Second} {
		c.Sample(okSample("c1", 1, e2e)) // TTFT = E2E/5
	}
	c.Sample(failSample("c1", 2, "conn_reset"))
	c.StageEnded(mark("sweep", "c1", 0, 1, 4))
}

func TestGoodput(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{TTFT: 250 * time.Millisecond, E2E: 2 * time.Second}))
	feedGoodput(c)
	snap := c.Snapshot()
	sum := c.Close()
	st := findStage(t, sum, "c1")
	if !sum.SLOSet {
		t.Error("slo_set = false with an SLO")
	}
	if st.GoodRequests != 2 || st.Goodput != 0.5 || st.GoodShare != 0.4 {
		t.Errorf("good requests %d, goodput %v/s, share %v; want 2, 0.5/s, 0.4 (failed included)",
			st.GoodRequests, st.Goodput, st.GoodShare)
	}
	for _, tc := range []struct {
		q    Query
		want float64
		n    int64
	}{
		{Query{Metric: "goodput", Agg: AggCount}, 2, 5},
		{Query{Metric: "goodput", Agg: AggRate}, 0.5, 5},
		{Query{Metric: "good_share", Agg: AggRate}, 0.4, 5},
		{Query{Metric: "good_share", Agg: AggCount}, 2, 5},
	} {
		if v, n, err := snap.Value(tc.q); err != nil || !closeTo(v, tc.want) || n != tc.n {
			t.Errorf("%+v = %v (n %d, err %v), want %v (n %d)", tc.q, v, n, err, tc.want, tc.n)
		}
	}
}

func TestGoodputWithoutSLO(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{}))
	feedGoodput(c)
	snap := c.Snapshot()
	sum := c.Close()
	st := findStage(t, sum, "c1")
	if sum.SLOSet || st.GoodRequests != 0 || st.Goodput != 0 || st.GoodShare != 0 {
		t.Errorf("slo_set %v, good %d, goodput %v, share %v; want all zero",
			sum.SLOSet, st.GoodRequests, st.Goodput, st.GoodShare)
	}
	if _, n, err := snap.Value(Query{Metric: "good_share", Agg: AggRate}); err != nil || n != 0 {
		t.Errorf("good_share: n %d, err %v; want no data", n, err)
	}
}

func TestGoodputTracked(t *testing.T) {
	c := NewCollector(WithSLO(plan.SLO{E2E: 2 * time.Second}))
	if err := c.Track("good_share", Filter{"prompt": "long"}); err != nil {
		t.Fatal(err)
	}
	for i, tags := range []map[string]string{short, long, long, long} {
		s := okSample("c1", 0, time.Duration(i+1)*time.Second) // 1 s .. 4 s
		s.Tags = tags
		c.Sample(s)
	}
	snap := c.Snapshot()
	c.Close()
	if v, n, err := snap.Value(Query{Metric: "good_share", Filter: Filter{"prompt": "long"}, Agg: AggRate}); err != nil || !closeTo(v, 1.0/3) || n != 3 {
		t.Errorf("good_share{prompt:long} = %v (n %d, err %v), want 1/3 of 3", v, n, err)
	}
}

func TestStageClientCheckCarried(t *testing.T) {
	st := StageSummary{Stage: "c1"}
	if got := jsonOf(t, st); strings.Contains(got, `"client"`) {
		t.Errorf("nil Client is written: %s", got)
	}
	st.Client = &engine.ClientCheck{CPUPercent: 97.5, Cores: 2, Bound: true, Reasons: []string{"cpu"}}
	var back StageSummary
	if err := json.Unmarshal([]byte(jsonOf(t, st)), &back); err != nil {
		t.Fatal(err)
	}
	if back.Client == nil || back.Client.CPUPercent != 97.5 || !back.Client.Bound {
		t.Errorf("client after a round trip = %+v, want %+v", back.Client, st.Client)
	}
}

// seriesTotal sums one figure over a time series.
func seriesTotal(ps []Point, f func(Point) int64) int64 {
	var n int64
	for _, p := range ps {
		n += f(p)
	}
	return n
}

// TestGracefulStopTail: requests that start after the window closed are
// counted apart and left out of the rates, but stay in the counts and
// latency distributions (see StageSummary).
func TestGracefulStopTail(t *testing.T) {
	tests := []struct {
		name                          string
		tailStarts                    []float64 // starts of extra requests, s
		wantReqPerSec, wantTokPerSec  float64
		wantTail, wantRequests, wantN int64
		wantAchieved                  float64
	}{
		{"no tail", nil, 1, 3, 0, 6, 6, 1},
		{"multi-turn tail", []float64{6.2, 7.5, 10.3}, 1, 3, 3, 9, 9, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(WithSLO(plan.SLO{TTFT: time.Second}))
			start := mark("sweep", "c1", 0, 1, 0)
			start.Planned = 6 * time.Second
			c.StageStarted(start)
			for i := range 6 {
				c.IterationStarted(engine.IterationMark{Scenario: "sweep", Stage: "c1", Started: at(float64(i))})
				c.Sample(okSample("c1", float64(i), 100*time.Millisecond))
			}
			end := mark("sweep", "c1", 0, 1, 6)
			end.Planned = 6 * time.Second
			c.StageEnded(end)
			for _, s := range tt.tailStarts {
				c.Sample(okSample("c1", s, 2*time.Second))
			}
			st := findStage(t, c.Close(), "c1")
			if got, want := st.ReqPerSec, tt.wantReqPerSec; got != want {
				t.Errorf("req/s = %v, want %v", got, want)
			}
			if got, want := st.OutputTokPerSec, tt.wantTokPerSec; got != want {
				t.Errorf("out tok/s = %v, want %v", got, want)
			}
			if got, want := st.Goodput, tt.wantReqPerSec; got != want {
				t.Errorf("goodput = %v, want %v", got, want)
			}
			if got, want := st.AchievedRate, tt.wantAchieved; got != want {
				t.Errorf("achieved rate = %v, want %v", got, want)
			}
			if st.TailRequests != tt.wantTail || st.TailOK != tt.wantTail || st.TailOutputTokens != 3*tt.wantTail || st.TailGoodRequests != tt.wantTail {
				t.Errorf("tail = %d requests, %d ok, %d tokens, %d good; want %d, %d, %d, %d",
					st.TailRequests, st.TailOK, st.TailOutputTokens, st.TailGoodRequests, tt.wantTail, tt.wantTail, 3*tt.wantTail, tt.wantTail)
			}
			if st.Requests != tt.wantRequests || st.E2E.Count != tt.wantN {
				t.Errorf("requests %d, E2E n %d; want %d, %d (the tail stays in counts and latencies)", st.Requests, st.E2E.Count, tt.wantRequests, tt.wantN)
			}
			if got, want := float64(st.WindowRequests())/st.DurationS, st.ReqPerSec; got != want {
				t.Errorf("WindowRequests / window = %v, want req/s %v", got, want)
			}
			if got, want := float64(st.WindowOutputTokens())/st.DurationS, st.OutputTokPerSec; got != want {
				t.Errorf("WindowOutputTokens / window = %v, want tok/s %v", got, want)
			}
			if got, want := float64(st.WindowGoodRequests())/st.DurationS, st.Goodput; got != want {
				t.Errorf("WindowGoodRequests / window = %v, want goodput %v", got, want)
			}
			if got, want := st.PlannedS, 6.0; got != want {
				t.Errorf("planned = %v s, want %v", got, want)
			}
			// Thresholds read the same rates: requests.rate is per second of
			// the window, requests.count still counts the tail.
			sn := c.Snapshot()
			for _, q := range []struct {
				query Query
				want  float64
			}{
				{Query{Metric: "requests", Agg: AggRate}, tt.wantReqPerSec},
				{Query{Metric: "output_tokens", Agg: AggRate}, tt.wantTokPerSec},
				{Query{Metric: "iterations", Agg: AggRate}, 1},
				{Query{Metric: "requests", Agg: AggCount}, float64(tt.wantRequests)},
			} {
				if got, _, err := sn.Value(q.query); err != nil || got != q.want {
					t.Errorf("%s.%s = %v (%v), want %v", q.query.Metric, q.query.Agg, got, err, q.want)
				}
			}
		})
	}
}

func TestSlipped(t *testing.T) {
	tests := []struct {
		name string
		s    StageSummary
		want bool
	}{
		{"on plan", StageSummary{Complete: true, PlannedS: 20, DurationS: 20.1}, false},
		{"long", StageSummary{Complete: true, PlannedS: 20, DurationS: 23}, true},
		{"short", StageSummary{Complete: true, PlannedS: 20, DurationS: 17.5}, true},
		{"cut by Ctrl-C", StageSummary{Complete: false, PlannedS: 20, DurationS: 3}, false},
		{"no plan", StageSummary{Complete: true, DurationS: 3}, false},
		{"load changed late", StageSummary{Complete: true, PlannedS: 20, DurationS: 20, LateS: 3}, true},
		{"a little late", StageSummary{Complete: true, PlannedS: 20, DurationS: 20, LateS: 0.1}, false},
	}
	for _, tt := range tests {
		if got := tt.s.Slipped(); got != tt.want {
			t.Errorf("%s: Slipped = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The controller's lateness at either boundary reaches the summary, the
// larger of the two: windows are the planned ones, so only Late can show
// that a busy machine changed the load late.
func TestStageLateness(t *testing.T) {
	c := NewCollector()
	start := mark("sweep", "c1", 0, 1, 0)
	start.Planned, start.Late = 20*time.Second, 300*time.Millisecond
	c.StageStarted(start)
	end := mark("sweep", "c1", 0, 1, 20)
	end.Planned, end.Late = 20*time.Second, 3*time.Second
	c.StageEnded(end)
	st := findStage(t, c.Close(), "c1")
	if got, want := st.LateS, 3.0; got != want {
		t.Errorf("late = %v s, want %v", got, want)
	}
	if got, want := st.SlipReason(), "its load changed 3.0 s late in its 20 s window"; got != want {
		t.Errorf("slip reason = %q, want %q", got, want)
	}
}

// TestLateScheduledStartsStayInTheirWindow: stage marks carry the planned
// boundaries, so on a busy machine an open-model iteration scheduled just
// before the end starts (and reaches the collector) after the end mark. It
// belongs to its window by its schedule; only starts without one (a
// closed-model iteration, a later request of an iteration) form the tail.
func TestLateScheduledStartsStayInTheirWindow(t *testing.T) {
	tests := map[string]struct {
		scheduled bool
		wantTail  int64
	}{
		"scheduled in the window": {scheduled: true, wantTail: 0},
		"no schedule":             {scheduled: false, wantTail: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewCollector()
			c.StageStarted(mark("sweep", "c1", 0, 0, 0))
			for i := range 5 {
				c.IterationStarted(engine.IterationMark{Scenario: "sweep", Stage: "c1", Scheduled: at(float64(i)), Started: at(float64(i))})
				s := okSample("c1", float64(i), 100*time.Millisecond)
				s.Scheduled = s.Start
				c.Sample(s)
			}
			c.StageEnded(mark("sweep", "c1", 0, 0, 6))
			// Due at 5.99 s, started 60 ms late, after the window's end.
			it := engine.IterationMark{Scenario: "sweep", Stage: "c1", Started: at(6.05)}
			s := okSample("c1", 6.05, 100*time.Millisecond)
			if tt.scheduled {
				it.Scheduled, s.Scheduled = at(5.99), at(5.99)
			}
			c.IterationStarted(it)
			c.Sample(s)
			st := findStage(t, c.Close(), "c1")
			if got := st.TailRequests; got != tt.wantTail {
				t.Errorf("tail requests = %d, want %d", got, tt.wantTail)
			}
			if got, want := st.WindowRequests(), 6-tt.wantTail; got != want {
				t.Errorf("window requests = %d, want %d", got, want)
			}
			if got, want := st.ReqPerSec, float64(6-tt.wantTail)/6; got != want {
				t.Errorf("req/s = %v, want %v", got, want)
			}
		})
	}
}

// TestConnectDist: the time to reach a connection is a stage distribution
// of its own, of successful requests, beside (never inside) TTFB and TTFT.
func TestConnectDist(t *testing.T) {
	c := NewCollector()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: at(0)})
	for i, connect := range []time.Duration{3 * time.Millisecond, 0, 40 * time.Microsecond} {
		s := req("s", "c1", float64(i), 100, 200, 0, nil)
		s.Connect = connect
		c.Sample(s)
	}
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", At: at(10)})
	st := c.Close().Stages[0]
	if st.Connect.Count != 2 || st.Connect.Max != 3 || st.Connect.Min != 0.04 || st.TTFT.Min != 100 {
		t.Errorf("connect %+v, TTFT min %v; want 2 values from 0.04 to 3 ms, TTFT untouched", st.Connect, st.TTFT.Min)
	}
}

// TestTLSDist: the TLS handshake's time is a stage distribution of the
// requests that made one, beside Connect, which holds it.
func TestTLSDist(t *testing.T) {
	c := NewCollector()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: at(0)})
	for i, hs := range []time.Duration{2 * time.Millisecond, 0, 0, 500 * time.Microsecond} {
		s := req("s", "c1", float64(i), 100, 200, 0, nil)
		s.Connect, s.TLS = hs+time.Millisecond, hs
		c.Sample(s)
	}
	failed := req("s", "c1", 5, 0, 0, 0, nil)
	failed.TLS, failed.Err = 9*time.Millisecond, &engine.Error{Class: engine.ErrConnReset}
	c.Sample(failed)
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", At: at(10)})
	st := c.Close().Stages[0]
	if st.TLS.Count != 2 || st.TLS.Max != 2 || st.TLS.Min != 0.5 || st.Connect.Count != 4 {
		t.Errorf("tls %+v, connect count %d; want 2 values from 0.5 to 2 ms, 4 connects", st.TLS, st.Connect.Count)
	}
	if d, ok := st.Latency("tls"); !ok || d.Count != 2 {
		t.Errorf(`Latency("tls") = %+v, %t`, d, ok)
	}
}
