package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/report"
)

// DefaultMetrics are the metrics Compare reads when Options.Metrics is
// empty: the tails users feel, throughput and errors.
var DefaultMetrics = []string{"ttft.p99", "tpot.p99", "e2e.p99", "req_per_sec", "errors.rate"}

// sample is one metric of one stage of one file, with what significance
// needs: a 95% interval, or the reason there is none.
type sample struct {
	value  float64
	ok     bool       // false: no data
	iv     [2]float64 // 95% interval; valid when hasIV
	hasIV  bool
	weak   bool   // no interval and too few samples to trust the value
	absent string // why ok is false
}

// metric reads one named figure from a stage.
type metric struct {
	name      string
	higherBad bool   // latency and errors: up is worse; throughput: down is worse
	kind      string // "ms", "rate", "tok", "share"
	read      func(st *metrics.StageSummary, r *report.Result) sample
}

var dists = map[string]func(*metrics.StageSummary) metrics.Dist{
	"ttft": func(s *metrics.StageSummary) metrics.Dist { return s.TTFT },
	"ttfc": func(s *metrics.StageSummary) metrics.Dist { return s.TTFC },
	"tpot": func(s *metrics.StageSummary) metrics.Dist { return s.TPOT },
	"itl":  func(s *metrics.StageSummary) metrics.Dist { return s.ITL },
	"e2e":  func(s *metrics.StageSummary) metrics.Dist { return s.E2E },
	"ttfb": func(s *metrics.StageSummary) metrics.Dist { return s.TTFB },
}

var distOrder = []string{"ttft", "ttfc", "tpot", "itl", "e2e", "ttfb"}
var statOrder = []string{"p50", "p90", "p95", "p99", "p99.9", "mean", "max"}

// ValidMetrics lists every metric name Compare accepts.
func ValidMetrics() []string {
	var out []string
	for _, d := range distOrder {
		for _, s := range statOrder {
			out = append(out, d+"."+s)
		}
	}
	return append(out, "req_per_sec", "output_tok_per_sec", "goodput", "errors.rate")
}

// lookup resolves a metric name.
func lookup(name string) (metric, error) {
	switch name {
	case "req_per_sec":
		return metric{name, false, "rate", countRate(func(s *metrics.StageSummary) int64 { return s.Requests })}, nil
	case "output_tok_per_sec":
		return metric{name, false, "tok", countRate(func(s *metrics.StageSummary) int64 { return s.OutputTokens })}, nil
	case "goodput":
		return metric{name, false, "rate", goodput}, nil
	case "errors.rate":
		return metric{name, true, "share", errorRate}, nil
	}
	d, stat, ok := strings.Cut(name, ".")
	if get, known := dists[d]; ok && known && slices.Contains(statOrder, stat) {
		return metric{name, true, "ms", func(st *metrics.StageSummary, _ *report.Result) sample {
			return distSample(get(st), stat)
		}}, nil
	}
	return metric{}, fmt.Errorf("unknown metric %q: valid metrics are %s", name, strings.Join(ValidMetrics(), ", "))
}

// distSample reads one statistic of a latency distribution. Percentiles
// carry their confidence interval when the file has one and the count
// reaches minCount; the mean gets ±1.96 standard errors; the max has no
// interval. Without an interval, too few samples make the value weak.
func distSample(d metrics.Dist, stat string) sample {
	if d.Count == 0 {
		return sample{absent: "no data"}
	}
	s := sample{ok: true, weak: d.LowSamples || slices.Contains(d.Unreliable, stat)}
	var iv metrics.Interval
	switch stat {
	case "p50":
		s.value, iv = d.P50, d.CI.P50
	case "p90":
		s.value, iv = d.P90, d.CI.P90
	case "p95":
		s.value, iv = d.P95, d.CI.P95
	case "p99":
		s.value, iv = d.P99, d.CI.P99
	case "p99.9":
		s.value, iv = d.P999, d.CI.P999
	case "mean":
		h := z95 * d.Stddev / math.Sqrt(float64(d.Count))
		s.value, iv = d.Mean, metrics.Interval{d.Mean - h, d.Mean + h}
	case "max":
		s.value = d.Max
	}
	if d.Count < minCount[stat] {
		s.weak = true // an interval from so few values is clamped to the largest: it understates the noise
		return s
	}
	s.iv, s.hasIV = iv, iv != metrics.Interval{}
	return s
}

// minCount is the count a statistic's interval needs to be trusted: for a
// percentile q, 10/(1−q) (as metrics flags Unreliable); for the mean, enough
// values for the normal approximation.
var minCount = map[string]int64{"p50": 20, "p90": 100, "p95": 200, "p99": 1000, "p99.9": 10000, "mean": 20}

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.96

// countRate reads a per-second rate of a count over the stage window; the
// count is taken as Poisson, so its interval is n ± 1.96·√n.
func countRate(count func(*metrics.StageSummary) int64) func(*metrics.StageSummary, *report.Result) sample {
	return func(st *metrics.StageSummary, _ *report.Result) sample {
		if st.DurationS <= 0 {
			return sample{absent: "no stage window"}
		}
		return poisson(count(st), st.DurationS)
	}
}

func poisson(n int64, window float64) sample {
	h := z95 * math.Sqrt(float64(n))
	v := float64(n)
	return sample{ok: true, value: v / window, iv: [2]float64{(v - h) / window, (v + h) / window}, hasIV: true}
}

func goodput(st *metrics.StageSummary, r *report.Result) sample {
	if !r.SLOSet {
		return sample{absent: "goodput not measured (no SLO)"}
	}
	if st.DurationS <= 0 {
		return sample{absent: "no stage window"}
	}
	return poisson(st.GoodRequests, st.DurationS)
}

// errorRate is failed/requests with a Wilson score interval, which stays
// inside [0, 1] and is sound at 0 failures, unlike the normal one.
func errorRate(st *metrics.StageSummary, _ *report.Result) sample {
	if st.Requests <= 0 {
		return sample{absent: "no requests"}
	}
	n, p := float64(st.Requests), float64(st.Failed)/float64(st.Requests)
	z2 := z95 * z95
	mid := (p + z2/(2*n)) / (1 + z2/n)
	h := z95 / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return sample{ok: true, value: p, iv: [2]float64{max(0, mid-h), min(1, mid+h)}, hasIV: true}
}
