package capacity

import (
	"slices"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/threshold"
)

// settleFrom is the result's account of a probe's start; nil for a probe
// that waited for nothing.
func settleFrom(s Settle) *result.ProbeSettle {
	if !s.Checked {
		return nil
	}
	return &result.ProbeSettle{WaitedS: s.Waited.Seconds(), Began: s.Began.UTC(), Idle: s.Idle, Running: s.Running, Server: s.Server}
}

// ResultOf records a search's outcome o, set up as s, with each
// probe's figures taken from its stages among stages. sloSet says whether
// good requests were counted.
func ResultOf(o Outcome, s plan.CapacitySearch, stages []metrics.StageSummary, sloSet bool) result.Capacity {
	c := result.Capacity{Scenario: o.Scenario, Load: o.Load, Unit: result.CapacityUnit(o.Load), Capacity: o.Capacity, Lo: o.Lo, Hi: o.Hi,
		AtLeast: o.AtLeast, Stopped: o.Stopped, Probes: []result.CapacityProbe{}, Search: result.CapacitySearch{
			Start: s.Start, Max: s.Max, Growth: s.Growth, Precision: s.Precision, GoodShare: s.GoodShare,
			Conditions: slices.Clone(s.Conditions), MinSamples: s.MinSamples, WarmupS: s.Warmup.Seconds(),
			WindowS: s.Window.Seconds(), MaxWindowS: s.MaxWindow.Seconds()}}
	for _, p := range o.Probes {
		c.Probes = append(c.Probes, probeFrom(p, stages, sloSet))
	}
	return c
}

func probeFrom(p ProbeResult, stages []metrics.StageSummary, sloSet bool) result.CapacityProbe {
	out := result.CapacityProbe{Index: p.Index, Stages: slices.Clone(p.Stages), Load: p.Load, Phase: p.Phase, Extended: p.Extended,
		Verdict: probeVerdict(p.Verdict), Why: p.Verdict.Why, Stop: p.Verdict.Stop, MinSamples: p.MinSamples,
		Settle: settleFrom(p.Settle)}
	var ttft, tpot []metrics.Dist
	var good, started int64
	var secs float64
	for i := range stages {
		st := &stages[i]
		if st.Scenario != p.Scenario || !slices.Contains(p.Stages, st.Stage) {
			continue
		}
		out.Requests += st.Requests
		good += st.GoodRequests
		started += st.WindowRequests()
		secs += st.DurationS
		ttft, tpot = append(ttft, st.TTFT), append(tpot, st.TPOT)
	}
	if sloSet && out.Requests > 0 {
		share := float64(good) / float64(out.Requests)
		out.GoodShare = &share
	}
	if secs > 0 {
		out.ReqPerSec = float64(started) / secs
	}
	t, tp := mergedDist(ttft), mergedDist(tpot)
	out.TTFTP50MS, out.TTFTP99MS, out.TPOTP99MS = t.P50, t.P99, tp.P99
	return out
}

// mergedDist joins a probe's windows; a window without its histogram (a
// hand-made file) leaves the figures of the first window alone.
func mergedDist(ds []metrics.Dist) metrics.Dist {
	switch len(ds) {
	case 0:
		return metrics.Dist{}
	case 1:
		return ds[0]
	}
	d, err := metrics.MergeDists(ds...)
	if err != nil {
		return ds[0]
	}
	return d
}

func probeVerdict(v Verdict) string {
	switch {
	case v.Stop != "":
		return result.ProbeStopped
	case !v.Decided:
		return result.ProbeUndecided
	case v.Pass:
		return result.ProbePass
	}
	return result.ProbeFail
}

// AddTo records in res what each of p's capacity searches found, with
// its probes' figures from res's stages.
func AddTo(res *result.Result, p plan.Plan, outcomes []Outcome) {
	for _, o := range outcomes {
		var search plan.CapacitySearch
		for _, sc := range p.Scenarios {
			if sc.Name == o.Scenario && sc.Capacity != nil {
				search = *sc.Capacity
			}
		}
		res.AddCapacity(ResultOf(o, search, res.Stages, res.SLOSet))
	}
}

// Source answers the thresholds judged when the run ends: the final
// snapshot, and what the capacity searches found.
func Source(snap *metrics.Snapshot, outcomes []Outcome) threshold.CapacitySource {
	s := source{Snapshot: snap}
	for _, o := range outcomes {
		s.findings = append(s.findings, threshold.CapacityFinding{Scenario: o.Scenario, Load: o.Load, Capacity: o.Capacity,
			Lo: o.Lo, Hi: o.Hi, AtLeast: o.AtLeast, Stopped: o.Stopped, Probes: len(o.Probes)})
	}
	return s
}

type source struct {
	*metrics.Snapshot
	findings []threshold.CapacityFinding
}

func (s source) Capacities() []threshold.CapacityFinding { return s.findings }
