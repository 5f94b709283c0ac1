// Package analysis reads a load sweep — one scenario's stages at growing
// load — and names its knee (where throughput stops growing with load) and
// its cliff (where tail latency breaks away), and checks them against the
// server's own queue gauges. Everything here is a pure function of the
// stage summaries and the server's metrics: no I/O, safe for concurrent
// use.
package analysis

import (
	"slices"

	"github.com/llmload/llmload/engine/metrics"
)

// Load units of a Sweep.
const (
	UnitVUs     = "VUs"   // closed model: concurrent virtual users
	UnitReqRate = "req/s" // open model: target iterations per second
)

// minPoints is the fewest stages that make a sweep: with two there is one
// step, and one step cannot show a curve bending.
const minPoints = 3

// Point is one load level of a sweep (one stage). Latencies are in
// milliseconds; 0 means no data.
type Point struct {
	Stage     string  `json:"stage"`
	Load      float64 `json:"load"` // VUs (closed model) or target iterations/s (open model)
	ReqPerSec float64 `json:"req_per_sec"`
	TokPerSec float64 `json:"tok_per_sec"`
	// Throughput is the request rate the knee rule reads (see
	// Throughput); 0 falls back to ReqPerSec.
	Throughput float64 `json:"throughput"`
	TTFTP50    float64 `json:"ttft_p50"`
	TTFTP90    float64 `json:"ttft_p90,omitempty"`
	TTFTP99    float64 `json:"ttft_p99"`
	TPOTP50    float64 `json:"tpot_p50"`
	TPOTP99    float64 `json:"tpot_p99"`
	E2EP50     float64 `json:"e2e_p50"`
	E2EP90     float64 `json:"e2e_p90,omitempty"`
	E2EP99     float64 `json:"e2e_p99"`
	// E2EMean (ms) and VUs say how Throughput was bounded in a closed
	// model (VUs / mean E2E); E2EStddev (ms) says how noisy that bound is.
	E2EMean   float64 `json:"e2e_mean,omitempty"`
	E2EStddev float64 `json:"e2e_stddev,omitempty"`
	VUs       int     `json:"vus,omitempty"`
	// Requests started in the window: what ReqPerSec counts.
	Requests int64 `json:"requests,omitempty"`
	// TTFTCount and E2ECount are the samples behind the percentiles.
	TTFTCount int64 `json:"ttft_count,omitempty"`
	E2ECount  int64 `json:"e2e_count,omitempty"`
	// Unreliable names the percentiles the stage flagged as resting on
	// too few samples ("ttft_p50", "e2e_p99"; see metrics.Dist): a finding
	// read from one is tentative.
	Unreliable []string `json:"unreliable,omitempty"`
	// CI holds each percentile's 95% confidence interval by the same
	// names, where the stage had one.
	CI map[string]metrics.Interval `json:"ci,omitempty"`
	// Open models only: the iterations per second started (Achieved), and
	// due ones that found every VU busy (Dropped, a count), over a window
	// of WindowS seconds, and the schedule lag's p99 (ms).
	Achieved float64 `json:"achieved,omitempty"`
	Dropped  int64   `json:"dropped,omitempty"`
	WindowS  float64 `json:"window_s,omitempty"`
	LagP99   float64 `json:"lag_p99,omitempty"`
	// Parts are the stage's breakdown (where the time went), when the
	// server timed its requests; nil otherwise.
	Parts *PointParts `json:"parts,omitempty"`
	// Suspect says why the stage's figures may be the client side's (see
	// StageSuspect); empty when nothing is known against them.
	Suspect []string `json:"suspect,omitempty"`
}

// Sweep is one scenario's stages ordered by load.
type Sweep struct {
	Scenario string  `json:"scenario"`
	LoadUnit string  `json:"load_unit"` // UnitVUs or UnitReqRate
	Points   []Point `json:"points"`
}

// Sweeps builds one Sweep per scenario whose stages, in the order they ran,
// are at least three of strictly increasing load, all in one unit; other
// scenarios (a single level, a ramp down, a mix of models) are skipped. A
// stage's load is its TargetRate when that is positive, else its VUs.
// Sweeps come in the order their scenarios first appear.
func Sweeps(stages []metrics.StageSummary) []Sweep {
	var order []string
	byScenario := map[string][]metrics.StageSummary{}
	for _, st := range stages {
		if _, seen := byScenario[st.Scenario]; !seen {
			order = append(order, st.Scenario)
		}
		byScenario[st.Scenario] = append(byScenario[st.Scenario], st)
	}
	var out []Sweep
	for _, name := range order {
		if s, ok := sweepOf(name, byScenario[name]); ok {
			out = append(out, s)
		}
	}
	return out
}

// sweepOf converts one scenario's stages, or reports that they are no sweep.
func sweepOf(scenario string, stages []metrics.StageSummary) (Sweep, bool) {
	if len(stages) < minPoints {
		return Sweep{}, false
	}
	s := Sweep{Scenario: scenario, LoadUnit: unitOf(stages[0])}
	prev := 0.0
	for _, st := range stages {
		p := pointOf(st)
		if unitOf(st) != s.LoadUnit || p.Load <= prev {
			return Sweep{}, false
		}
		prev = p.Load
		s.Points = append(s.Points, p)
	}
	return s, true
}

func unitOf(st metrics.StageSummary) string {
	if st.TargetRate > 0 {
		return UnitReqRate
	}
	return UnitVUs
}

func pointOf(st metrics.StageSummary) Point {
	load := float64(st.VUs)
	if st.TargetRate > 0 {
		load = st.TargetRate
	}
	return Point{
		Stage:      st.Stage,
		Load:       load,
		ReqPerSec:  st.ReqPerSec,
		TokPerSec:  st.OutputTokPerSec,
		Throughput: Throughput(st),
		TTFTP50:    st.TTFT.P50,
		TTFTP90:    st.TTFT.P90,
		TTFTP99:    st.TTFT.P99,
		TPOTP50:    st.TPOT.P50,
		TPOTP99:    st.TPOT.P99,
		E2EP50:     st.E2E.P50,
		E2EP90:     st.E2E.P90,
		E2EP99:     st.E2E.P99,
		E2EMean:    st.E2E.Mean,
		E2EStddev:  st.E2E.Stddev,
		VUs:        st.VUs,
		Requests:   st.WindowRequests(),
		TTFTCount:  st.TTFT.Count,
		E2ECount:   st.E2E.Count,
		Unreliable: slices.Concat(prefixed("ttft_", st.TTFT.Unreliable), prefixed("e2e_", st.E2E.Unreliable)),
		CI:         intervals(st.TTFT, st.E2E),
		Achieved:   st.AchievedRate,
		Dropped:    st.DroppedIterations,
		WindowS:    st.DurationS,
		LagP99:     st.ScheduleLag.P99,
		Parts:      partsOf(st),
		Suspect:    StageSuspect(st),
	}
}

// intervals names the confidence intervals of a TTFT and an E2E
// distribution as Point.CI does; nil when neither has any.
func intervals(ttft, e2e metrics.Dist) map[string]metrics.Interval {
	var out map[string]metrics.Interval
	for _, d := range []struct {
		prefix string
		ci     metrics.Intervals
	}{{"ttft_", ttft.CI}, {"e2e_", e2e.CI}} {
		for name, iv := range map[string]metrics.Interval{"p50": d.ci.P50, "p90": d.ci.P90, "p99": d.ci.P99} {
			if iv[1] > 0 {
				if out == nil {
					out = map[string]metrics.Interval{}
				}
				out[d.prefix+name] = iv
			}
		}
	}
	return out
}

// prefixed names a distribution's flagged percentiles as Point.Unreliable
// does.
func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Throughput estimates the requests per second a stage delivered. A
// stage's ReqPerSec counts the requests that started in its window, and in
// a closed model each step up in VUs starts a burst of first requests at
// once, so a short stage beyond saturation still shows req/s growing while
// completions do not. Each VU completes at most one request per mean E2E
// latency (Little's law: fewer with think time), so in a closed model the
// estimate is the smaller of ReqPerSec and VUs / mean E2E. Open models keep
// ReqPerSec.
func Throughput(st metrics.StageSummary) float64 {
	if st.TargetRate > 0 || st.VUs <= 0 || st.E2E.Mean <= 0 {
		return st.ReqPerSec
	}
	bound := float64(st.VUs) * 1000 / st.E2E.Mean
	if st.ReqPerSec > 0 && st.ReqPerSec < bound {
		return st.ReqPerSec
	}
	return bound
}
