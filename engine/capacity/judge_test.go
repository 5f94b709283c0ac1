package capacity

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// window is one synthetic probe window: n requests, the i-th with a TTFT
// of ttft(i) ms (or failed), one iteration each, lag ms behind its
// schedule, and drops iterations that found no VU.
type window struct {
	stage   string
	n       int
	ttft    func(i int) float64
	failed  func(i int) bool
	lagMS   float64
	drops   int
	reason  string // the drops' reason; "" is engine.DropMaxVUs
	noReqs  bool   // iterations that sent nothing (a script error each)
	startAt time.Duration
}

// feed sends w's marks and samples to c, as the executor and VUs would.
func feed(c *metrics.Collector, scenario string, w window) {
	start := t0.Add(w.startAt)
	c.StageStarted(engine.StageMark{Scenario: scenario, Stage: w.stage, Rate: 10, At: start})
	for i := range w.n {
		at := start.Add(time.Duration(i) * 10 * time.Millisecond)
		it := engine.IterationMark{Scenario: scenario, Stage: w.stage, Started: at}
		if w.lagMS > 0 {
			it.Scheduled = at.Add(-time.Duration(w.lagMS * float64(time.Millisecond)))
		}
		c.IterationStarted(it)
		if w.noReqs {
			c.IterationError(engine.IterationError{Scenario: scenario, Stage: w.stage, Message: "chat.lua:3: boom"})
			continue
		}
		ttft := time.Duration(w.ttft(i) * float64(time.Millisecond))
		s := engine.Sample{Scenario: scenario, Stage: w.stage, Result: engine.Result{Start: at, Status: 200,
			TTFT: ttft, TTFB: ttft / 2, E2E: ttft + time.Second, TPOT: 20 * time.Millisecond, OutputTokens: 50}}
		if w.failed != nil && w.failed(i) {
			s.Result = engine.Result{Start: at, Err: &engine.Error{Class: engine.ErrTimeoutTTFT}}
		}
		c.Sample(s)
	}
	for range w.drops {
		c.Dropped(engine.DropMark{Scenario: scenario, Stage: w.stage, Scheduled: start, Reason: cmp.Or(w.reason, engine.DropMaxVUs)})
	}
	c.StageEnded(engine.StageMark{Scenario: scenario, Stage: w.stage, Rate: 10, At: start.Add(30 * time.Second)})
}

func constMS(v float64) func(int) float64 { return func(int) float64 { return v } }

// every fails one request in k.
func every(k int) func(int) bool { return func(i int) bool { return i%k == 0 } }

// spread gives TTFTs evenly from lo to hi ms.
func spread(lo, hi float64, n int) func(int) float64 {
	return func(i int) float64 { return lo + (hi-lo)*float64(i)/float64(max(n-1, 1)) }
}

type fakeSelfCheck engine.ClientCheck

func (f fakeSelfCheck) Window(time.Time, time.Time) engine.ClientCheck { return engine.ClientCheck(f) }

func capacityPlan(s plan.CapacitySearch) plan.Plan {
	return plan.Plan{SLO: plan.SLO{TTFT: time.Second}, Scenarios: []plan.Scenario{{
		Name: "cap", Executor: plan.ExecutorCapacity, Capacity: &s, MaxVUsCap: 100, PreAllocatedVUs: 10}}}
}

func search(goodShare float64, conds ...string) plan.CapacitySearch {
	return plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 100, Growth: 2, Precision: 0.05,
		Window: 30 * time.Second, MaxWindow: 2 * time.Minute, GoodShare: goodShare, Conditions: conds, MinSamples: 30}
}

func TestJudgeProbe(t *testing.T) {
	tests := []struct {
		name    string
		search  plan.CapacitySearch
		windows []window
		client  *fakeSelfCheck
		load    float64
		want    string // pass, fail, undecided, stop
		why     string // in Why (or Stop)
	}{
		{"clear pass", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200)}}, nil, 10,
			"pass", "good 100.0% [99.0, 100.0] ≥ 95% (n=400)"},
		{"clear fail", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), failed: every(5)}}, nil, 10,
			"fail", "good 80.0% [75.8, 83.6] < 95% (n=400)"},
		{"slow requests are not good", search(0.95), []window{{stage: "probe-01", n: 400, ttft: spread(100, 1900, 400)}}, nil, 10,
			"fail", "< 95%"},
		{"straddles", search(0.95), []window{{stage: "probe-01", n: 100, ttft: constMS(200), failed: every(20)}}, nil, 10,
			"undecided", "good 95.0% [88.8, 97.8] straddles 95% (n=100)"},
		{"too few", search(0.95), []window{{stage: "probe-01", n: 12, ttft: constMS(200)}}, nil, 10,
			"undecided", "too few requests to judge: 12 of the 30 min_samples"},
		{"an extension decides", search(0.95), []window{
			{stage: "probe-01", n: 100, ttft: constMS(200), failed: every(50)},
			{stage: "probe-01.2", n: 400, ttft: constMS(200), failed: every(100), startAt: 30 * time.Second}}, nil, 10,
			"pass", "good 98.8% [97.4, 99.4] ≥ 95% (n=500)"},
		{"percentile passes", search(0, "ttft.p99 < 1s"), []window{{stage: "probe-01", n: 1000, ttft: spread(100, 900, 1000)}}, nil, 10,
			"pass", "ttft.p99 892.4ms [886.8ms, 898.6ms] < 1s (n=1000)"},
		{"percentile fails", search(0, "ttft.p99 < 1s"), []window{{stage: "probe-01", n: 1000, ttft: spread(100, 2000, 1000)}}, nil, 10,
			"fail", "ttft.p99 1.98s [1.97s, 2s] not < 1s"},
		{"a tail percentile needs samples to pass", search(0, "ttft.p99 < 1s"), []window{{stage: "probe-01", n: 100, ttft: constMS(200)}}, nil, 10,
			"undecided", "ttft.p99 200ms [200ms, ?] undecided against < 1s (too few requests to bound it)"},
		{"a tail percentile fails on few samples", search(0, "ttft.p99 < 1s"), []window{{stage: "probe-01", n: 100, ttft: constMS(3000)}}, nil, 10,
			"fail", "not < 1s"},
		{"percentile over two windows", search(0, "ttft.p50 < 500ms"), []window{
			{stage: "probe-01", n: 30, ttft: constMS(100)},
			{stage: "probe-01.2", n: 70, ttft: constMS(900), startAt: 30 * time.Second}}, nil, 10,
			"fail", "ttft.p50 900ms not < 500ms (n=100)"},
		{"a percentile's interval over two windows", search(0, "ttft.p50 < 500ms"), []window{
			{stage: "probe-01", n: 40, ttft: constMS(100)},
			{stage: "probe-01.2", n: 60, ttft: constMS(900), startAt: 30 * time.Second}}, nil, 10,
			"undecided", "ttft.p50 900ms [100ms, 900ms] undecided against < 500ms (n=100)"},
		{"error rate", search(0, "errors.rate < 5%"), []window{{stage: "probe-01", n: 500, ttft: constMS(100), failed: every(100)}}, nil, 10,
			"pass", "errors.rate 1% [0.4279%, 2.319%] < 5% (n=500)"},
		{"both must pass", search(0.95, "tpot.p50 < 10ms"), []window{{stage: "probe-01", n: 400, ttft: constMS(200)}}, nil, 10,
			"fail", "good 100.0% [99.0, 100.0] ≥ 95% (n=400); tpot.p50 20ms not < 10ms"},
		{"client-bound stops", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200)}},
			&fakeSelfCheck{Bound: true, Reasons: []string{"CPU at 195% of the 200% that 2 cores give"}}, 10,
			"stop", "llmload was the bottleneck (CLIENT-BOUND): CPU at 195%"},
		{"a clear failure below min_samples fails", search(0.95), []window{{stage: "probe-01", n: 10, ttft: constMS(200), failed: every(1)}}, nil, 10,
			"fail", "(failed before the 30 min_samples: the interval is beyond the bound)"},
		{"a pass below min_samples waits", search(0.95), []window{{stage: "probe-01", n: 10, ttft: constMS(200)}}, nil, 10,
			"undecided", "too few requests to judge: 10 of the 30 min_samples"},
		{"fewer than five never fail", search(0.95), []window{{stage: "probe-01", n: 4, ttft: constMS(200), failed: every(1)}}, nil, 10,
			"undecided", "too few requests to judge: 4 of the 30 min_samples"},
		{"drops while the SLO holds stop", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), drops: 40}}, nil, 10,
			"stop", "40 of 440 scheduled iterations (9.1%) found every VU busy at max_vus 100; raise max_vus"},
		{"drops while the pool grows extend the probe", search(0.95),
			[]window{{stage: "probe-01", n: 400, ttft: constMS(200), drops: 40, reason: engine.DropGrowing}}, nil, 10,
			"undecided", "40 of 440 scheduled iterations (9.1%) dropped while the VU pool was still growing"},
		{"drops when no VU can be made stop", search(0.95),
			[]window{{stage: "probe-01", n: 400, ttft: constMS(200), drops: 40, reason: engine.DropVUFailed}}, nil, 10,
			"stop", "40 of 440 scheduled iterations found every VU busy and no VU could be made"},
		{"a few drops while growing do not matter", search(0.95),
			[]window{{stage: "probe-01", n: 400, ttft: constMS(200), drops: 2, reason: engine.DropGrowing}}, nil, 10,
			"pass", "; 2 iterations dropped (no free VU)"},
		{"drops under a failure keep the failure", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), failed: every(2), drops: 40}}, nil, 10,
			"fail", "; 40 iterations dropped (no free VU)"},
		{"lag stops", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), lagMS: 120}}, nil, 10,
			"stop", "llmload fell behind its schedule: schedule lag p99 [120ms, ?] (n=400) above 50ms (the larger of 50ms and 10% of the 100ms mean gap at 10/s)"},
		{"small lag is fine", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), lagMS: 5}}, nil, 10,
			"pass", "≥ 95%"},
		{"lag against the gap", search(0.95), []window{{stage: "probe-01", n: 400, ttft: constMS(200), lagMS: 80}}, nil, 1,
			"pass", "≥ 95%"},
		{"no request sent", search(0.95), []window{{stage: "probe-01", n: 50, noReqs: true}}, nil, 10,
			"stop", "the script sent no request in 50 iterations (50 script errors)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := metrics.NewCollector(metrics.WithSLO(plan.SLO{TTFT: time.Second}))
			defer col.Close()
			p := Probe{Scenario: "cap", Load: tt.load, Phase: ProbeBracket, Start: t0, End: t0.Add(time.Minute)}
			for _, w := range tt.windows {
				feed(col, "cap", w)
				p.Stages = append(p.Stages, w.stage)
			}
			var client ClientWindow
			if tt.client != nil {
				client = *tt.client
			}
			j, err := NewWindowJudge(capacityPlan(tt.search), col, client)
			if err != nil {
				t.Fatal(err)
			}
			v := j.JudgeProbe(p)
			if got := verdictWord(v); got != tt.want {
				t.Errorf("verdict %s, want %s (%+v)", got, tt.want, v)
			}
			if text := v.Why + " | " + v.Stop; !strings.Contains(text, tt.why) {
				t.Errorf("why %q, want it to contain %q", text, tt.why)
			}
		})
	}
}

func verdictWord(v Verdict) string {
	switch {
	case v.Stop != "":
		return "stop"
	case !v.Decided:
		return "undecided"
	case v.Pass:
		return "pass"
	}
	return "fail"
}

func TestNewProbeJudgeRefuses(t *testing.T) {
	noSLO := capacityPlan(search(0.95))
	noSLO.SLO = plan.SLO{}
	if _, err := NewWindowJudge(noSLO, nil, nil); err == nil || !strings.Contains(err.Error(), "needs options.slo") {
		t.Errorf("good_share without an SLO: err = %v", err)
	}
	if _, err := NewWindowJudge(capacityPlan(search(0, "ttft.p99 == 1s")), nil, nil); err == nil || !strings.Contains(err.Error(), "not ==") {
		t.Errorf("== condition: err = %v", err)
	}
	if j, err := NewWindowJudge(plan.Plan{Scenarios: []plan.Scenario{{Name: "plain"}}}, nil, nil); j != nil || err != nil {
		t.Errorf("a plan without a capacity search: judge %v, err %v", j, err)
	}
}

// TestValueAtRankMatchesMerged checks the union's percentiles against a
// single stage holding every value: the ranks of several stages must
// give what one histogram would.
func TestValueAtRankMatchesMerged(t *testing.T) {
	col := metrics.NewCollector()
	defer col.Close()
	parts := []window{
		{stage: "a", n: 300, ttft: spread(100, 400, 300)},
		{stage: "b", n: 50, ttft: spread(350, 2000, 50), startAt: 30 * time.Second},
		{stage: "c", n: 7, ttft: constMS(250), startAt: time.Minute},
	}
	all := window{stage: "all", startAt: 2 * time.Minute}
	var values []float64
	for _, w := range parts {
		feed(col, "cap", w)
		for i := range w.n {
			values = append(values, w.ttft(i))
		}
	}
	all.n, all.ttft = len(values), func(i int) float64 { return values[i] }
	feed(col, "cap", all)
	snap := col.Snapshot()
	union := newProbeSource(snap, Probe{Scenario: "cap", Stages: []string{"a", "b", "c"}})
	whole := newProbeSource(snap, Probe{Scenario: "cap", Stages: []string{"all"}})
	for _, p := range []float64{1, 10, 50, 90, 95, 99, 99.9, 100} {
		got, n, err := union.percentile("ttft", p)
		want, wn, _ := whole.percentile("ttft", p)
		if err != nil || got != want || n != wn {
			t.Errorf("p%v over a, b, c = %v (n=%d, %v), want %v (n=%d)", p, got, n, err, want, wn)
		}
		glo, ghi, _, _ := union.percentileInterval("ttft", p)
		wlo, whi, _, _ := whole.percentileInterval("ttft", p)
		if glo != wlo || ghi != whi {
			t.Errorf("p%v interval [%v, %v], want [%v, %v]", p, glo, ghi, wlo, whi)
		}
	}
	for _, agg := range []string{metrics.AggAvg, metrics.AggMin, metrics.AggMax, metrics.AggCount} {
		got, _, _ := union.Value(metrics.Query{Metric: "ttft", Agg: agg})
		want, _, _ := whole.Value(metrics.Query{Metric: "ttft", Agg: agg})
		if math.Abs(got-want) > 0.001 {
			t.Errorf("%s = %v, want %v", agg, got, want)
		}
	}
}

func TestWilson(t *testing.T) {
	tests := []struct {
		hits, n int64
		lo, hi  string
	}{
		{0, 0, "0.0000", "1.0000"},
		{95, 100, "0.8882", "0.9785"},
		{100, 100, "0.9630", "1.0000"},
		{0, 10, "0.0000", "0.2775"},
	}
	for _, tt := range tests {
		lo, hi := wilson(tt.hits, tt.n)
		if got := fmt.Sprintf("%.4f %.4f", lo, hi); got != tt.lo+" "+tt.hi {
			t.Errorf("wilson(%d, %d) = %s, want %s %s", tt.hits, tt.n, got, tt.lo, tt.hi)
		}
	}
}
