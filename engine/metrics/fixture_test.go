package metrics

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

func msD(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// req is a successful request with TTFT and E2E in ms; TTFB is half the
// TTFT, TPOT 10 ms, two gaps of 10 and 20 ms, 10 tokens in and 5 out.
// lagMS > 0 gives it an intended start that much before its start.
func req(scenario, stage string, startS, ttft, e2e, lagMS float64, tags map[string]string) engine.Sample {
	s := engine.Sample{Scenario: scenario, Stage: stage, Tags: tags, Result: engine.Result{
		Start: at(startS), Status: 200,
		TTFB: msD(ttft / 2), TTFT: msD(ttft), E2E: msD(e2e), TPOT: 10 * time.Millisecond,
		ITL:         []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		InputTokens: 10, OutputTokens: 5, TokensSource: engine.TokensFromUsage,
	}}
	if lagMS > 0 {
		s.Scheduled = s.Start.Add(-msD(lagMS))
	}
	return s
}

func iter(scenario, stage string, startS, lagMS float64) engine.IterationMark {
	m := engine.IterationMark{Scenario: scenario, Stage: stage, Started: at(startS)}
	if lagMS > 0 {
		m.Scheduled = m.Started.Add(-msD(lagMS))
	}
	return m
}

func metricSample(scenario, stage, name, kind string, v float64, tags map[string]string) engine.MetricSample {
	return engine.MetricSample{Scenario: scenario, Stage: stage, Name: name, Kind: kind, Value: v, Tags: tags}
}

func check(scenario, stage, name string, pass bool) engine.MetricSample {
	return metricSample(scenario, stage, checksName, engine.MetricRate, b2f(pass),
		map[string]string{"check": name})
}

func openMark(stage string, index int, rate, atS float64) engine.StageMark {
	return engine.StageMark{Scenario: "open", Stage: stage, Index: index, Rate: rate, At: at(atS)}
}

var (
	short = map[string]string{"prompt": "short"}
	long  = map[string]string{"prompt": "long"}
	eu    = map[string]string{"region": "eu"}
)

// fixture feeds a known run into c: scenario "open" with stages s1 (0-10 s,
// 2 it/s) and s2 (10-20 s, 4 it/s), and scenario "closed" with stage c1
// (0-20 s). Every figure the query tests expect follows from it.
func fixture(t testing.TB, c *Collector) {
	t.Helper()
	if err := c.Declare(plan.MetricDef{Name: "ratio", Kind: engine.MetricTrend},
		plan.MetricDef{Name: "unused", Kind: engine.MetricCounter}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []struct {
		metric string
		f      Filter
	}{
		{"ttft", Filter{"prompt": "short"}},
		{"requests", Filter{"prompt": "short"}},
		{"errors", Filter{"prompt": "short"}},
		{"ttft", Filter{"prompt": "long", "scenario": "open"}},
		{"ratio", Filter{"region": "eu"}},
		{"checks", Filter{"check": "status 200", "prompt": "short"}},
	} {
		if err := c.Track(tr.metric, tr.f); err != nil {
			t.Fatalf("Track(%s, %v): %v", tr.metric, tr.f, err)
		}
	}
	c.StageStarted(openMark("s1", 0, 2, 0))
	c.StageStarted(engine.StageMark{Scenario: "closed", Stage: "c1", Target: 3, At: at(0)})
	fixtureS1(c)
	fixtureS2(c)
	fixtureC1(c)
}

func fixtureS1(c *Collector) {
	for i, ttft := range []float64{100, 200, 300, 400} {
		tags := short
		if i >= 2 {
			tags = long
		}
		c.Sample(req("open", "s1", float64(i), ttft, ttft*10, 50, tags))
	}
	fail := failSample("s1", 4, "http_5xx:503")
	fail.Scenario, fail.Tags = "open", short
	c.Sample(fail)
	for i := range 5 {
		c.IterationStarted(iter("open", "s1", float64(i), 10))
	}
	for range 3 {
		c.Dropped(engine.DropMark{Scenario: "open", Stage: "s1", Scheduled: at(5)})
	}
	for _, pass := range []bool{true, true, false, true} {
		c.Metric(check("open", "s1", "status 200", pass))
	}
	for _, v := range []float64{-1.5, 0.25, 2.75} {
		c.Metric(metricSample("open", "s1", "ratio", engine.MetricTrend, v, eu))
	}
	c.Metric(metricSample("open", "s1", "bytes", engine.MetricCounter, 100, nil))
	c.Metric(metricSample("open", "s1", "bytes", engine.MetricCounter, 50, nil))
	for _, v := range []float64{1, 0, 1} {
		c.Metric(metricSample("open", "s1", "cache_hit", engine.MetricRate, v, nil))
	}
	c.StageEnded(openMark("s1", 0, 2, 10))
}

func fixtureS2(c *Collector) {
	c.StageStarted(openMark("s2", 1, 4, 10))
	c.Sample(req("open", "s2", 11, 500, 5000, 100, long))
	c.Sample(req("open", "s2", 12, 600, 6000, 100, long))
	c.IterationStarted(iter("open", "s2", 11, 30))
	c.IterationStarted(iter("open", "s2", 12, 30))
	c.Dropped(engine.DropMark{Scenario: "open", Stage: "s2", Scheduled: at(13)})
	c.Metric(check("open", "s2", "has text", true))
	c.Metric(check("open", "s2", "has text", false))
	c.Metric(metricSample("open", "s2", "ratio", engine.MetricTrend, 10.125, nil))
	c.Metric(metricSample("open", "s2", "cache_hit", engine.MetricRate, 0, nil))
	c.StageEnded(openMark("s2", 1, 4, 20))
}

func fixtureC1(c *Collector) {
	c.Sample(req("closed", "c1", 5, 700, 7000, 0, short))
	c.Sample(req("closed", "c1", 6, 800, 8000, 0, short))
	c.IterationStarted(iter("closed", "c1", 5, 0))
	c.IterationStarted(iter("closed", "c1", 6, 0))
	c.IterationError(engine.IterationError{Scenario: "closed", Stage: "c1", Message: "s.lua:1: x"})
	c.Metric(check("closed", "c1", "status 200", true))
	c.Metric(check("closed", "c1", "status 200", true))
	c.Metric(metricSample("closed", "c1", "bytes", engine.MetricCounter, 25, nil))
	c.StageEnded(engine.StageMark{Scenario: "closed", Stage: "c1", Target: 3, At: at(20)})
}
