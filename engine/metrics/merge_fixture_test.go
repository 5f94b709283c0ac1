package metrics

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// A seeded run for the merge tests: stages of two scenarios (and one
// that only the first segment runs, and one never marked), whose events
// are dealt out to segments. Every time is at least 50 ms from a whole
// second and from a stage boundary, so that the segments' skewed marks
// cannot move a request to another second or out of its window, and
// every streamed request lies within one second, so that no skew changes
// how its tokens spread over the time series.

// planStage is one stage of the seeded run, with its whole load.
type planStage struct {
	scenario, stage string
	index, vus      int
	rate            float64
	from, to        int // seconds
}

var mergePlan = []planStage{
	{scenario: "open", stage: "s1", index: 0, rate: 4, from: 0, to: 10},
	{scenario: "closed", stage: "c1", index: 0, vus: 4, from: 0, to: 15},
	{scenario: "solo", stage: "x", index: 0, vus: 1, from: 5, to: 12},
	{scenario: "open", stage: "s2", index: 1, rate: 8, from: 10, to: 20},
	{scenario: "closed", stage: "c2", index: 1, vus: 6, from: 15, to: 30},
	{scenario: "open", stage: "s3", index: 2, rate: 12, from: 20, to: 30},
}

// mergeSkews are the segments' clock offsets: the first has none.
var mergeSkews = []time.Duration{0, 3 * time.Millisecond, -2 * time.Millisecond, 4 * time.Millisecond}

// runEvent is one call of the run: a stage mark, which every segment gets
// (shifted by its skew, with its share of the load), or a unit of work
// (an iteration and what it records), which one segment gets.
type runEvent struct {
	at    float64
	mark  *planStage
	start bool
	part  int // for work: the segment, before reduction modulo n; -1: the first
	work  func(*Collector)
}

// mergeSetup declares and tracks what the run's queries need.
func mergeSetup(t testing.TB, c *Collector) {
	if err := c.Declare(plan.MetricDef{Name: "ratio", Kind: engine.MetricTrend},
		plan.MetricDef{Name: "bytes", Kind: engine.MetricCounter},
		plan.MetricDef{Name: "unused", Kind: engine.MetricCounter}); err != nil {
		t.Fatal(err)
	}
	for _, v := range mergeViews {
		if err := c.Track(v.metric, v.f); err != nil {
			t.Fatal(err)
		}
	}
}

var mergeViews = []struct {
	metric string
	f      Filter
}{
	{"ttft", Filter{"prompt": "short"}},
	{"requests", Filter{"prompt": "short"}},
	{"output_tokens", Filter{"prompt": "short"}},
	{"errors", Filter{"prompt": "long"}},
	{"e2e", Filter{"prompt": "long", "scenario": "open"}},
	{"ratio", Filter{"region": "eu"}},
	{"checks", Filter{"check": "status 200", "prompt": "short"}},
	{"task", Filter{"task": "plan"}},
	{"task_good", Filter{"task": "work"}},
}

// seededRun returns the run's events in time order.
func seededRun(seed uint64) []runEvent {
	r := rand.New(rand.NewPCG(seed, 7))
	var evs []runEvent
	for i := range mergePlan {
		p := &mergePlan[i]
		evs = append(evs, runEvent{at: float64(p.from), mark: p, start: true},
			runEvent{at: float64(p.to), mark: p})
		n := 12 * (p.to - p.from)
		for range n {
			evs = append(evs, work(r, p, inWindow(r, p)))
		}
		for range 6 { // the graceful-stop tail
			evs = append(evs, work(r, p, float64(p.to)+0.1+0.35*r.Float64()))
		}
	}
	for range 20 { // a stage no mark names
		evs = append(evs, work(r, &planStage{scenario: "closed", stage: "orphan"}, float64(31+r.IntN(3))+0.1+0.3*r.Float64()))
	}
	slices.SortStableFunc(evs, func(x, y runEvent) int {
		switch {
		case x.at < y.at:
			return -1
		case x.at > y.at:
			return 1
		}
		return 0
	})
	return evs
}

// inWindow is a start time in the stage, 0.1-0.45 s into a second.
func inWindow(r *rand.Rand, p *planStage) float64 {
	return float64(p.from+r.IntN(p.to-p.from)) + 0.1 + 0.35*r.Float64()
}

// work is one iteration starting at atS: its mark, one or two requests
// (or a dirty one), checks, custom metrics, now and then a script error.
func work(r *rand.Rand, p *planStage, atS float64) runEvent {
	open := p.rate > 0
	lagMS := 0.0
	if open {
		lagMS = 1 + 40*r.Float64()
	}
	seed := r.Uint64()
	ev := runEvent{at: atS, part: r.IntN(1 << 20)}
	if p.scenario == "solo" {
		ev.part = -1
	}
	ev.work = func(c *Collector) {
		r := rand.New(rand.NewPCG(seed, 11))
		m := engine.IterationMark{Scenario: p.scenario, Stage: p.stage, Started: at(atS)}
		if open {
			m.Scheduled = m.Started.Add(-msD(lagMS))
		}
		c.IterationStarted(m)
		if open && r.IntN(10) == 0 {
			c.Dropped(engine.DropMark{Scenario: p.scenario, Stage: p.stage, Scheduled: at(atS)})
		}
		if r.IntN(12) == 0 {
			c.Sample(randomDirty(r, p, atS))
			return
		}
		x := engine.TaskSample{Scenario: p.scenario, Stage: p.stage, Start: at(atS)}
		for turn := range 1 + r.IntN(2) {
			s := randomSample(r, p, atS+0.02*float64(turn))
			if turn == 0 && open {
				s.Scheduled = m.Scheduled
			}
			addCall(&x, &s)
			c.Sample(s)
			c.Metric(taggedCheck(p, "status 200", s.Err == nil, s.Tags))
			if s.Err == nil {
				c.Metric(taggedCheck(p, "has text", s.OutputTokens > 3, s.Tags))
			}
		}
		randomMetrics(r, c, p)
		c.Task(randomTask(r, x))
	}
	return ev
}

// addCall counts a request in the task around it.
func addCall(x *engine.TaskSample, s *engine.Sample) {
	x.Calls++
	if s.Err != nil {
		x.Failed++
	}
	x.InputTokens, x.OutputTokens = x.InputTokens+s.InputTokens, x.OutputTokens+s.OutputTokens
	x.Duration = max(x.Duration, s.Start.Add(s.E2E).Sub(x.Start))
}

// randomTask names the iteration's task and gives it tool time, now and
// then an error that ended it. Its draws come last in the iteration, so
// the rest of the run stays as it was.
func randomTask(r *rand.Rand, x engine.TaskSample) engine.TaskSample {
	x.Name = []string{"plan", "work", "review"}[r.IntN(3)]
	x.Tags = map[string]string{"task": x.Name}
	if r.IntN(3) > 0 {
		x.Tool = msD(float64(r.IntN(400)))
		x.Duration += x.Tool
	}
	if r.IntN(10) == 0 {
		x.Err = scriptErrs[r.IntN(len(scriptErrs))]
	}
	return x
}

// taggedCheck is an llm.check result carrying its request's tags.
func taggedCheck(p *planStage, name string, pass bool, tags map[string]string) engine.MetricSample {
	m := check(p.scenario, p.stage, name, pass)
	maps.Copy(m.Tags, tags)
	return m
}

var (
	errorClasses = []string{"http_5xx:503", engine.ErrTimeoutTTFT, engine.ErrConnReset}
	prompts      = []map[string]string{{"prompt": "short"}, {"prompt": "long"}, {"prompt": "short", "model": "m2"}}
	regions      = []map[string]string{{"region": "eu"}, {"region": "us"}, nil}
	scriptErrs   = []string{"s.lua:1: a", "s.lua:2: b", "s.lua:3: c"}
)

// randomSample is a clean request: failed one time in eight; streamed
// within its second, or not streamed and up to 2.5 s long.
func randomSample(r *rand.Rand, p *planStage, atS float64) engine.Sample {
	s := engine.Sample{Scenario: p.scenario, Stage: p.stage, Tags: prompts[r.IntN(len(prompts))]}
	s.Start, s.Status = at(atS), 200
	s.Target = []string{"a", "b", "c"}[r.IntN(3)]
	if r.IntN(8) == 0 {
		s.Status, s.TTFB, s.E2E = 503, msD(5+20*r.Float64()), msD(30+100*r.Float64())
		s.Err = &engine.Error{Class: errorClasses[r.IntN(len(errorClasses))], Message: "boom"}
		return s
	}
	s.OutputTokens, s.InputTokens = 1+r.IntN(200), 10+r.IntN(500)
	s.TokensSource, s.InputTokensSource = engine.TokensFromUsage, engine.TokensFromUsage
	switch r.IntN(4) {
	case 0: // a prefix-cache hit
		s.CachedTokens = 1 + r.IntN(s.InputTokens)
	case 1: // input counted by the client: in no hit share
		s.InputTokensSource, s.CachedTokens = engine.TokensFromTokenizer, r.IntN(3)
	}
	if s.InputTokens%3 == 2 { // a prompt built for a target hit rate; no draw
		s.PrefixAsked = engine.PrefixAsked{Shared: s.InputTokens * 3 / 5, Tokens: s.InputTokens - 7}
	}
	if r.IntN(3) == 0 {
		s.ClientOutputTokens = s.OutputTokens + r.IntN(20) - 5
	}
	s.API = engine.EndpointChat
	if s.OutputTokens%7 == 0 {
		s.API = engine.EndpointResponses
	}
	if s.OutputTokens%5 == 0 {
		s.ToolCalls = make([]engine.ToolCall, 1+s.OutputTokens%3)
	}
	if r.IntN(6) == 0 { // not streamed: E2E and TTFB only
		s.TTFB, s.E2E = msD(20+50*r.Float64()), msD(float64(1+r.IntN(2))*1000+50*r.Float64())
		if s.InputTokens%4 == 1 { // a speech request, no draw either
			s.API, s.AudioOut, s.AudioBytes = engine.EndpointSpeech, float64(s.OutputTokens)/4, int64(s.OutputTokens)*960
		}
		if s.InputTokens%2 == 0 { // an embeddings request: nothing generated
			s.API, s.Inputs, s.ToolCalls, s.OutputTokens, s.TokensSource, s.ClientOutputTokens = engine.EndpointEmbeddings, 1+s.InputTokens%16, nil, 0, "", 0
		}
		return s
	}
	s.Connect = msD(2 * r.Float64())
	if s.InputTokens%3 == 0 { // a new TLS connection; no draw, so the rest stays as it was
		s.TLS = s.Connect / 2
	}
	mediaOfSample(&s)
	s.TTFT = msD(20 + 280*r.Float64())
	s.TTFB, s.TTFC = s.TTFT/2, s.TTFT
	if r.IntN(4) == 0 {
		s.TTFC, s.ReasoningTokens = s.TTFT+msD(30*r.Float64()), r.IntN(s.OutputTokens)
	}
	s.E2E = s.TTFT + msD(20+180*r.Float64())
	if s.OutputTokens >= 2 {
		s.TPOT = (s.E2E - s.TTFT) / time.Duration(s.OutputTokens-1)
	}
	for range min(s.OutputTokens-1, 8) {
		s.ITL = append(s.ITL, msD(1+30*r.Float64()))
	}
	if r.IntN(2) == 0 {
		s.TokenITL = slices.Clone(s.ITL)
	}
	return s
}

// randomDirty is a malformed request, of each verdict in turn.
func randomDirty(r *rand.Rand, p *planStage, atS float64) engine.Sample {
	s := engine.Sample{Scenario: p.scenario, Stage: p.stage, Dirty: []string{"empty", "overlong"}[r.IntN(2)]}
	s.Start, s.TTFB, s.E2E = at(atS), msD(10), msD(40)
	switch r.IntN(4) {
	case 0:
		s.Status = 200 // accepted
	case 1:
		s.Status, s.Err = 400, &engine.Error{Class: "http_4xx:400", Message: "bad request"} // handled
	case 2:
		s.Status, s.Err = 500, &engine.Error{Class: "http_5xx:500", Message: "crash"} // a defect
	default:
		s.Err = &engine.Error{Class: engine.ErrCanceled}
	}
	return s
}

// randomMetrics records custom metrics, now and then a bad one or a
// script error.
func randomMetrics(r *rand.Rand, c *Collector, p *planStage) {
	tags := regions[r.IntN(len(regions))]
	c.Metric(metricSample(p.scenario, p.stage, "ratio", engine.MetricTrend, float64(r.IntN(15001)-5000)/1000, tags))
	c.Metric(metricSample(p.scenario, p.stage, "bytes", engine.MetricCounter, float64(r.IntN(1000)), nil))
	c.Metric(metricSample(p.scenario, p.stage, "hit", engine.MetricRate, float64(r.IntN(2)), nil))
	switch r.IntN(25) {
	case 0:
		c.Metric(metricSample(p.scenario, p.stage, "bytes", engine.MetricTrend, 1, nil)) // a metric error
	case 1:
		c.IterationError(engine.IterationError{Scenario: p.scenario, Stage: p.stage, Message: scriptErrs[r.IntN(len(scriptErrs))]})
	case 2:
		c.Sample(engine.Sample{Scenario: p.scenario, Stage: p.stage, Warmup: true})
	}
}

// share is part's share of a load of n split among parts: the first
// n%parts get one more, as engine.Segment splits VUs.
func share(n, part, parts int) int {
	s := n / parts
	if part < n%parts {
		s++
	}
	return s
}

// markOf is the stage mark a segment sends: shifted by its skew, with its
// share of the VUs and of the rate.
func markOf(p *planStage, start bool, part, parts int) engine.StageMark {
	atS := p.from
	if !start {
		atS = p.to
	}
	m := engine.StageMark{
		Scenario: p.scenario, Stage: p.stage, Index: p.index,
		At:      at(float64(atS)).Add(mergeSkews[part]),
		Target:  share(p.vus, part, parts),
		Rate:    p.rate / float64(parts),
		Planned: time.Duration(p.to-p.from) * time.Second,
	}
	if p.scenario == "solo" {
		m.Target, m.Rate = p.vus, p.rate
	}
	return m
}

// play plays the run into the whole collector and n segment collectors.
func play(evs []runEvent, whole *Collector, parts []*Collector) {
	n := len(parts)
	for _, e := range evs {
		if e.mark != nil {
			send := (*Collector).StageStarted
			if !e.start {
				send = (*Collector).StageEnded
			}
			send(whole, markOf(e.mark, e.start, 0, 1))
			for i, c := range parts {
				if e.mark.scenario != "solo" || i == 0 {
					send(c, markOf(e.mark, e.start, i, n))
				}
			}
			continue
		}
		e.work(whole)
		e.work(parts[max(e.part, 0)%n])
	}
}

// mergeRun builds the whole collector and n segments of one seeded run,
// closed.
func mergeRun(t testing.TB, seed uint64, n int) (*Collector, []*Collector) {
	slo := WithSLO(plan.SLO{TTFT: 200 * time.Millisecond, Task: 300 * time.Millisecond})
	whole := NewCollector(slo)
	mergeSetup(t, whole)
	parts := make([]*Collector, n)
	for i := range parts {
		parts[i] = NewCollector(slo)
		mergeSetup(t, parts[i])
	}
	play(seededRun(seed), whole, parts)
	whole.Close()
	for _, c := range parts {
		c.Close()
	}
	return whole, parts
}

func partsOf(cs []*Collector) []Part {
	out := make([]Part, len(cs))
	for i, c := range cs {
		out[i] = Part{Summary: c.Close(), State: c.State()}
	}
	return out
}

func stageName(st *StageSummary) string { return fmt.Sprintf("%s/%s", st.Scenario, st.Stage) }

// mediaOfSample makes some streamed requests carry images and audio,
// from the figures already drawn (no draw: the rest of the run stays as
// it was). Audio seconds are halves, exact in binary, so that their sums
// do not depend on the order they were added in.
func mediaOfSample(s *engine.Sample) {
	if s.InputTokens%5 != 1 {
		return
	}
	s.Images, s.MediaTokens = 1+s.OutputTokens%3, (s.InputTokens%4)*300
	s.BodyBytes, s.Encode, s.Upload = int64(1000*s.InputTokens), 3*s.Connect, msD(float64(1+s.InputTokens%17))
	if s.OutputTokens%2 == 0 {
		s.Audios, s.AudioIn = 1, float64(s.OutputTokens%4)/2
	}
}
