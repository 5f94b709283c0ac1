package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// SLOAttainment is the share of a stage's requests (failed ones included)
// that must meet every objective of the SLO for the stage to meet it: the
// same 99% the cliff's SLO rule reads as a p99, so that the best operating
// point and the cliff tell one story.
const SLOAttainment = 0.99

// ParetoDefinition states how a ParetoPoint's axes are computed. Per-user
// speed is NVIDIA AIPerf's output_token_throughput_per_user (aiperf
// metrics/types/output_token_throughput_per_user_metric.py: 1 / its
// inter-token latency, (E2E − TTFT) / (output tokens − 1), per request),
// read at the median request as InferenceMAX's interactivity axis is; the
// median of 1/TPOT is 1 / the median TPOT, so the stage's TPOT p50 is
// enough.
const ParetoDefinition = "tok/s/user: 1000 / the stage's median TPOT in ms (the median request's 1 / TPOT, " +
	"TPOT = (last text − first text) / (output tokens − 1); AIPerf's output_token_throughput_per_user); " +
	"tok/s: the stage's output tokens per second of its window, successful requests only"

// Reasons a stage is left out of a Pareto front (ParetoSkip.Reason).
const (
	SkipWarmup  = "a warmup stage"
	SkipDirty   = "only dirty requests"
	SkipNoOK    = "no successful request"
	SkipNoToken = "no output tokens"
	SkipNoTPOT  = "no TPOT (no request with 2 or more output tokens)"
)

// ParetoPoint is one stage of a ParetoFront.
type ParetoPoint struct {
	Stage    string  `json:"stage"`
	Load     float64 `json:"load"`      // VUs, or target iterations/s
	LoadUnit string  `json:"load_unit"` // UnitVUs or UnitReqRate
	// PerUserTokPerSec is the interactivity axis (see ParetoDefinition).
	PerUserTokPerSec float64 `json:"per_user_tok_per_sec"`
	// TokPerSec is the stage's output tokens/s in all; TokPerSecPerGPU is
	// it divided by ParetoFront.GPUs, 0 (absent) when that is unknown.
	TokPerSec       float64 `json:"tok_per_sec"`
	TokPerSecPerGPU float64 `json:"tok_per_sec_per_gpu,omitempty"`
	// OnFront is true when no other point has both figures at least as
	// high and one higher; otherwise DominatedBy names the first stage of
	// the front that has. Equal points do not dominate each other.
	OnFront     bool   `json:"on_front"`
	DominatedBy string `json:"dominated_by,omitempty"`
	// GoodShare is the stage's share of requests that met every SLO
	// objective (metrics.StageSummary.GoodShare); MeetsSLO is GoodShare ≥
	// SLOAttainment. Both are zero when the run has no SLO.
	GoodShare float64 `json:"good_share"`
	MeetsSLO  bool    `json:"meets_slo"`
	// Tentative is true when the stage's TPOT p50 was flagged as resting
	// on too few samples (metrics.Dist.Unreliable).
	Tentative bool `json:"tentative,omitempty"`
	// Suspect says why the stage's figures may be the client side's (see
	// StageSuspect).
	Suspect []string `json:"suspect,omitempty"`
}

// ParetoSkip is a stage left out of a front, and why (Skip*).
type ParetoSkip struct {
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
}

// ParetoFront is one sweep's stages as per-user speed against total
// throughput: which stages no other beats on both, and the best operating
// point that meets the SLO.
type ParetoFront struct {
	Scenario   string `json:"scenario"`
	Definition string `json:"definition"` // ParetoDefinition
	// GPUs is the GPU count the per-GPU figures divide by; 0 when unknown.
	GPUs int `json:"gpus,omitempty"`
	// Points are the eligible stages in the order they ran; Skipped the
	// others.
	Points  []ParetoPoint `json:"points"`
	Skipped []ParetoSkip  `json:"skipped,omitempty"`
	// SLOSet is false when the run had no SLO: no point can meet one and
	// Best is empty.
	SLOSet bool `json:"slo_set"`
	// Best is the stage of the highest total throughput among those that
	// meet the SLO (ties: the faster per user, then the first); "" when
	// none does or no SLO is set. BestText says which and why in words.
	Best     string `json:"best,omitempty"`
	BestText string `json:"best_text"`
	// Suspect joins the points' Suspect reasons with the stages they hold
	// for ("c16: the machine was busy with other processes"); "" when none.
	Suspect string `json:"suspect,omitempty"`
}

// Pareto builds the ParetoFront of each sweep among stages (see Sweeps:
// one scenario's stages at growing load), in the order of Sweeps; a
// capacity search's probes or a single level are no sweep and get none.
// gpus is the number of GPUs serving the target, 0 when unknown.
func Pareto(stages []metrics.StageSummary, slo plan.SLO, gpus int) []ParetoFront {
	var out []ParetoFront
	for _, s := range Sweeps(stages) {
		var own []metrics.StageSummary
		for _, st := range stages {
			if st.Scenario == s.Scenario {
				own = append(own, st)
			}
		}
		out = append(out, FrontOf(s.Scenario, own, slo, gpus))
	}
	return out
}

// FrontOf builds the ParetoFront of one scenario's stages, any number of
// them. A stage is left out when it cannot place a point: a warmup stage,
// one with only dirty requests, none successful, no output tokens or no
// TPOT.
func FrontOf(scenario string, stages []metrics.StageSummary, slo plan.SLO, gpus int) ParetoFront {
	f := ParetoFront{Scenario: scenario, Definition: ParetoDefinition, GPUs: max(gpus, 0),
		Points: []ParetoPoint{}, SLOSet: !slo.RequestZero()}
	var placed []Point
	for _, st := range stages {
		if reason := paretoSkip(st); reason != "" {
			f.Skipped = append(f.Skipped, ParetoSkip{Stage: st.Stage, Reason: reason})
			continue
		}
		p := pointOf(st)
		placed = append(placed, p)
		f.Points = append(f.Points, paretoPoint(st, p, f.SLOSet, f.GPUs))
	}
	markFront(f.Points)
	f.Best, f.BestText = best(f.Points, f.SLOSet)
	f.Suspect = suspectOf(placed...)
	return f
}

// paretoSkip says why st places no point; "" when it does.
func paretoSkip(st metrics.StageSummary) string {
	switch {
	case strings.EqualFold(st.Stage, "warmup"):
		return SkipWarmup
	case st.Requests == 0 && st.DirtyRequests > 0:
		return SkipDirty
	case st.OK == 0:
		return SkipNoOK
	case st.OutputTokens <= 0 || st.OutputTokPerSec <= 0:
		return SkipNoToken
	case st.TPOT.Count == 0 || st.TPOT.P50 <= 0:
		return SkipNoTPOT
	}
	return ""
}

// paretoPoint places st, whose sweep point is p.
func paretoPoint(st metrics.StageSummary, p Point, sloSet bool, gpus int) ParetoPoint {
	pp := ParetoPoint{
		Stage: st.Stage, Load: p.Load, LoadUnit: unitOf(st),
		PerUserTokPerSec: 1000 / st.TPOT.P50,
		TokPerSec:        st.OutputTokPerSec,
		Tentative:        slices.Contains(st.TPOT.Unreliable, "p50"),
		Suspect:          p.Suspect,
	}
	if gpus > 0 {
		pp.TokPerSecPerGPU = st.OutputTokPerSec / float64(gpus)
	}
	if sloSet {
		pp.GoodShare = st.GoodShare
		pp.MeetsSLO = st.GoodShare >= SLOAttainment
	}
	return pp
}

// dominates reports whether a is at least as good as b on both axes and
// better on one.
func dominates(a, b ParetoPoint) bool {
	return a.PerUserTokPerSec >= b.PerUserTokPerSec && a.TokPerSec >= b.TokPerSec &&
		(a.PerUserTokPerSec > b.PerUserTokPerSec || a.TokPerSec > b.TokPerSec)
}

// markFront sets OnFront and DominatedBy on every point; quadratic, as a
// sweep has tens of stages at most. Every dominated point is dominated by
// some point of the front, and DominatedBy names the first such: the
// stage to run instead.
func markFront(points []ParetoPoint) {
	for i := range points {
		points[i].OnFront = !slices.ContainsFunc(points, func(q ParetoPoint) bool { return dominates(q, points[i]) })
	}
	for i := range points {
		points[i].DominatedBy = ""
		if !points[i].OnFront {
			j := slices.IndexFunc(points, func(q ParetoPoint) bool { return q.OnFront && dominates(q, points[i]) })
			points[i].DominatedBy = points[j].Stage
		}
	}
}

// best picks the best operating point (see ParetoFront.Best).
func best(points []ParetoPoint, sloSet bool) (string, string) {
	if len(points) == 0 {
		return "", "no stage placed a point"
	}
	if !sloSet {
		return "", "no SLO set (options.slo): no operating point can be named as meeting one"
	}
	var pick *ParetoPoint
	for i := range points {
		p := &points[i]
		if p.MeetsSLO && (pick == nil || better(*p, *pick)) {
			pick = p
		}
	}
	if pick == nil {
		return "", noneMeets(points)
	}
	text := fmt.Sprintf("%s (%s): the highest output tok/s of the stages with at least %s of requests within the SLO (%s)",
		pick.Stage, loadText(pick.Load, pick.LoadUnit), pctText(SLOAttainment), pctText(pick.GoodShare))
	if !pick.OnFront {
		text += fmt.Sprintf("; off the front: %s is ahead on both but misses the SLO", pick.DominatedBy)
	}
	return pick.Stage, text
}

// better orders candidates for Best: more total throughput, then more per
// user; an exact tie keeps the earlier stage.
func better(a, b ParetoPoint) bool {
	return cmp.Or(cmp.Compare(a.TokPerSec, b.TokPerSec), cmp.Compare(a.PerUserTokPerSec, b.PerUserTokPerSec)) > 0
}

// noneMeets says that no stage met the SLO, naming the closest.
func noneMeets(points []ParetoPoint) string {
	closest := slices.MaxFunc(points, func(a, b ParetoPoint) int { return cmp.Compare(a.GoodShare, b.GoodShare) })
	return fmt.Sprintf("none: no stage had at least %s of requests within the SLO (closest: %s, %s)",
		pctText(SLOAttainment), closest.Stage, pctText(closest.GoodShare))
}

// pctText renders a share as a percentage: "99%", "93.5%".
func pctText(share float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", share*100), "0"), ".") + "%"
}
