package capacity

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
)

// Bounds beyond which a probe's load was not what the search asked for,
// so that no verdict on it is sound and the search stops.
const (
	// ProbeMaxDropShare is the share of a probe's scheduled iterations
	// that may find no free VU (max_vus reached) before the load counts as
	// undelivered. A handful of drops barely changes the load; more would
	// credit the server with a rate it never got.
	ProbeMaxDropShare = 0.01
	// ProbeMaxLag and ProbeMaxLagGap bound the schedule lag's p99: the
	// larger of 50 ms and a tenth of the mean gap between arrivals. Below
	// both, iterations start close enough to their schedule that the
	// arrival process is the one asked for; beyond them llmload is falling
	// behind. The lag's 95% lower bound must exceed it, so that a few
	// slow starts among little data do not stop a search.
	ProbeMaxLag    = 50 * time.Millisecond
	ProbeMaxLagGap = 0.10
)

// Snapshotter is what the judge reads: metrics.Collector.
type Snapshotter interface{ Snapshot() *metrics.Snapshot }

// ClientWindow is the client's self-check over a window: selfcheck.Monitor.
type ClientWindow interface {
	Window(start, end time.Time) engine.ClientCheck
}

// WindowJudge decides a capacity search's probes from the live collector,
// whose snapshot holds every sample sent before it is taken: the probe's
// requests are the clean requests of its window stages (warm-up and drain
// are not in them). Safe for concurrent use: each call takes its own
// snapshot.
type WindowJudge struct {
	col      Snapshotter
	client   ClientWindow // nil: the client is not checked
	slo      plan.SLO
	searches map[string]*probeRules
}

// probeRules is one capacity scenario's search with its conditions parsed.
type probeRules struct {
	plan.CapacitySearch
	conds  []*threshold.Threshold
	maxVUs int
}

var _ Judge = (*WindowJudge)(nil)

// NewWindowJudge makes the judge of the plan's capacity searches; nil when
// the plan has none. It refuses a good_share without an SLO to count good
// requests against, and conditions that do not parse.
func NewWindowJudge(p plan.Plan, col Snapshotter, client ClientWindow) (*WindowJudge, error) {
	j := &WindowJudge{col: col, client: client, slo: p.SLO, searches: map[string]*probeRules{}}
	for _, sc := range p.Scenarios {
		if sc.Capacity == nil {
			continue
		}
		r := &probeRules{CapacitySearch: *sc.Capacity, maxVUs: sc.MaxVUs()}
		if r.GoodShare > 0 && p.SLO.RequestZero() {
			return nil, fmt.Errorf("scenario %s: a capacity search with good_share needs options.slo to count good requests", sc.Name)
		}
		for _, text := range r.Conditions {
			t, err := threshold.ParseProbeCondition(text)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: conditions: %w", sc.Name, err)
			}
			r.conds = append(r.conds, t)
		}
		j.searches[sc.Name] = r
	}
	if len(j.searches) == 0 {
		return nil, nil
	}
	return j, nil
}

// JudgeProbe decides p: Stop when llmload could not deliver or time the
// load (client-bound, behind its schedule, iterations dropped while the
// SLO still held, no request sent); else undecided below MinSamples
// requests or while a confidence interval straddles its limit; else pass
// when the good share and every condition pass. A Stop verdict is also
// Decided, so that no caller extends a probe that cannot be judged.
func (j *WindowJudge) JudgeProbe(p Probe) Verdict {
	rules := j.searches[p.Scenario]
	if rules == nil {
		return Verdict{Decided: true, Stop: "no capacity search named " + p.Scenario}
	}
	src := newProbeSource(j.col.Snapshot(), p)
	load, err := measureLoad(src)
	if err != nil {
		return Verdict{Decided: true, Stop: "probe " + probeName(p) + ": " + err.Error()}
	}
	if stop := j.stop(p, rules, src, load); stop != "" {
		return Verdict{Decided: true, Stop: stop, Why: load.text()}
	}
	v := judgeSLO(src, rules, load, cmp.Or(p.MinSamples, rules.MinSamples))
	if v.Decided && !v.Pass {
		if load.dropped > 0 {
			// A failure under less load than planned is a failure at the plan.
			v.Why += fmt.Sprintf("; %d iterations dropped (no free VU)", load.dropped)
		}
		return v
	}
	return judgeDrops(v, load, rules.maxVUs)
}

// judgeDrops weighs a probe's drops against a verdict that did not fail:
// beyond ProbeMaxDropShare the load was not delivered. At max_vus no
// verdict is sound (Stop: raise max_vus); while the pool was still
// growing, the probe is extended, since the pool keeps growing and a
// later window gets the load; a pool that could not grow stops.
func judgeDrops(v Verdict, load probeLoad, maxVUs int) Verdict {
	scheduled := load.dropped + load.iterations
	share := func(n int64) float64 { return float64(n) / float64(max(scheduled, 1)) }
	switch {
	case share(load.droppedMax) > ProbeMaxDropShare:
		return Verdict{Decided: true, Why: v.Why, Stop: fmt.Sprintf(
			"llmload could not deliver the load: %d of %d scheduled iterations (%.1f%%) found every VU busy at max_vus %d; raise max_vus",
			load.droppedMax, scheduled, 100*share(load.droppedMax), maxVUs)}
	case share(load.droppedGrowing) > ProbeMaxDropShare:
		return Verdict{Why: fmt.Sprintf(
			"%d of %d scheduled iterations (%.1f%%) dropped while the VU pool was still growing (a VU took longer to make than an arrival waits): "+
				"not judged on less load than asked; raise pre_allocated_vus if this persists", load.droppedGrowing, scheduled, 100*share(load.droppedGrowing))}
	case share(load.dropped-load.droppedMax-load.droppedGrowing) > ProbeMaxDropShare:
		return Verdict{Decided: true, Why: v.Why, Stop: fmt.Sprintf(
			"llmload could not deliver the load: %d of %d scheduled iterations found every VU busy and no VU could be made (see the script errors)",
			load.dropped-load.droppedMax-load.droppedGrowing, scheduled)}
	}
	if load.dropped > 0 {
		v.Why += fmt.Sprintf("; %d iterations dropped (no free VU)", load.dropped)
	}
	return v
}

// probeLoad is what a probe sent.
type probeLoad struct {
	requests, iterations, scriptErrors int64
	// dropped counts every drop; droppedMax and droppedGrowing those at
	// max_vus and while the pool grew.
	dropped, droppedMax, droppedGrowing int64
}

func measureLoad(src *probeSource) (probeLoad, error) {
	var l probeLoad
	for metric, into := range map[string]*int64{"requests": &l.requests, "iterations": &l.iterations,
		"dropped_iterations": &l.dropped, "dropped_max_vus": &l.droppedMax, "dropped_growing": &l.droppedGrowing,
		"iteration_errors": &l.scriptErrors} {
		v, _, err := src.sum(metric, metrics.AggCount)
		if err != nil {
			return probeLoad{}, err
		}
		*into = int64(math.Round(v))
	}
	return l, nil
}

func (l probeLoad) text() string {
	s := fmt.Sprintf("n=%d requests, %d iterations", l.requests, l.iterations)
	if l.dropped > 0 {
		s += fmt.Sprintf(", %d dropped", l.dropped)
	}
	return s
}

// stop says why llmload, not the server, limited the probe; "" when it
// did not.
func (j *WindowJudge) stop(p Probe, rules *probeRules, src *probeSource, load probeLoad) string {
	if j.client != nil {
		if c := j.client.Window(p.Start, p.End); c.Bound {
			return "llmload was the bottleneck (CLIENT-BOUND): " + strings.Join(c.Reasons, "; ")
		}
	}
	if load.requests == 0 && load.iterations+load.scriptErrors > 0 {
		return fmt.Sprintf("the script sent no request in %d iterations (%d script errors): nothing to judge the server on",
			load.iterations, load.scriptErrors)
	}
	if rules.Load != plan.CapacityRate || p.Load <= 0 {
		return ""
	}
	lo, hi, n, err := src.percentileInterval("schedule_lag", 99)
	if err != nil || n == 0 {
		return ""
	}
	gap := time.Duration(float64(time.Second) / p.Load)
	bound := max(ProbeMaxLag, time.Duration(ProbeMaxLagGap*float64(gap)))
	if lo <= ms(bound) {
		return ""
	}
	return fmt.Sprintf("llmload fell behind its schedule: schedule lag p99 [%s, %s] (n=%d) above %s (the larger of %s and %.0f%% of the %s mean gap at %.4g/s)",
		fmtMS(lo), fmtMS(hi), n, fmtMS(ms(bound)), plan.FormatDuration(ProbeMaxLag), 100*ProbeMaxLagGap,
		gap.Round(time.Microsecond), p.Load)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMS renders milliseconds as threshold values are, "?" for an
// unbounded side of an interval.
func fmtMS(v float64) string {
	if math.IsInf(v, 0) {
		return "?"
	}
	return threshold.FormatValue(engine.MetricTrend, metrics.AggP, v)
}

func probeName(p Probe) string {
	if len(p.Stages) > 0 {
		return p.Stages[0]
	}
	return fmt.Sprint(p.Index + 1)
}

// SetClient has the judge check the client's own health over each probe's
// window (a client-bound window stops the search); call it before the first
// probe, once the self-check it reads runs.
func (j *WindowJudge) SetClient(c ClientWindow) { j.client = c }
