package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// DefaultMetrics are the metrics Compare reads when Options.Metrics is
// empty: the tails users feel, throughput and errors.
var DefaultMetrics = []string{"ttft.p99", "tpot.p99", "e2e.p99", "req_per_sec", "errors.rate"}

// sample is one metric of one stage of one file, with what the tests
// need: the histogram, moments or counts behind the figure, or, for files
// written before histograms, a 95% interval or the reason there is none.
type sample struct {
	value  float64
	ok     bool   // false: no data
	absent string // why ok is false
	err    error  // a corrupt histogram: the comparison fails

	test test // which test can decide on this figure

	// testPercentile: the quantile (0..100) and the whole histogram.
	q     float64
	hist  []metrics.HDRBucket
	count int64 // values behind the figure (percentiles, mean)
	// testMean: the standard deviation, with count and value.
	sd float64
	// testRate: events (requests, tokens) over exposure seconds, perEvent
	// events to one independent arrival (tokens per request; else 1).
	// testErrorRate: events failures of exposure requests.
	events, exposure, perEvent float64

	// testIntervals, the fallback: a 95% interval, or weak when there is
	// none and too few samples to trust the value.
	iv    [2]float64
	hasIV bool
	weak  bool

	// identity is the data the figure comes from, so that a file
	// compared with itself is "same" rather than a statistical question.
	identity string
}

// test names the significance test a sample allows.
type test int

const (
	testNone       test = iota // a maximum: one value, nothing to test
	testIntervals              // no histogram: 95% intervals, as before them
	testPercentile             // exceedance test on the histograms
	testMean                   // Welch's t test
	testRate                   // conditional binomial test of two Poisson counts
	testErrorRate              // Fisher's exact test
)

var testNames = [...]string{"none", "intervals", "exceedance", "welch", "poisson", "fisher"}

func (t test) String() string { return testNames[t] }

// metric reads one named figure from a stage.
type metric struct {
	name      string
	higherBad bool   // latency and errors: up is worse; throughput: down is worse
	kind      string // "ms", "rate", "tok", "share"
	read      func(st *metrics.StageSummary, r *result.Result) sample
}

// distOrder are the latencies compared (metrics.StageSummary.Latency
// names), in report order.
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
		return metric{name, false, "rate", countRate((*metrics.StageSummary).WindowRequests, one)}, nil
	case "output_tok_per_sec":
		return metric{name, false, "tok", countRate((*metrics.StageSummary).WindowOutputTokens, tokensPerRequest)}, nil
	case "goodput":
		return metric{name, false, "rate", goodput}, nil
	case "errors.rate":
		return metric{name, true, "share", errorRate}, nil
	}
	d, stat, ok := strings.Cut(name, ".")
	if ok && slices.Contains(distOrder, d) && slices.Contains(statOrder, stat) {
		return metric{name, true, "ms", func(st *metrics.StageSummary, _ *result.Result) sample {
			dist, _ := st.Latency(d)
			return distSample(dist, stat)
		}}, nil
	}
	return metric{}, fmt.Errorf("unknown metric %q: valid metrics are %s", name, strings.Join(ValidMetrics(), ", "))
}

// distSample reads one statistic of a latency distribution. With the
// file's histogram a percentile is tested exactly at any count; without
// one (older files) it carries its confidence interval when the count
// reaches minCount. The mean gets Welch's test from its moments; the max
// has no test.
func distSample(d metrics.Dist, stat string) sample {
	if d.Count == 0 {
		return sample{absent: "no data"}
	}
	s := sample{ok: true, count: d.Count, test: testIntervals,
		weak: d.LowSamples || slices.Contains(d.Unreliable, stat)}
	var iv metrics.Interval
	switch stat {
	case "p50":
		s.value, iv, s.q = d.P50, d.CI.P50, 50
	case "p90":
		s.value, iv, s.q = d.P90, d.CI.P90, 90
	case "p95":
		s.value, iv, s.q = d.P95, d.CI.P95, 95
	case "p99":
		s.value, iv, s.q = d.P99, d.CI.P99, 99
	case "p99.9":
		s.value, iv, s.q = d.P999, d.CI.P999, 99.9
	case "mean":
		s.value, s.sd, s.test = d.Mean, d.Stddev, testMean
		s.identity = fmt.Sprint(d.Count, d.Mean, d.Stddev)
		return s
	case "max":
		s.value, s.test = d.Max, testNone
		return s
	}
	h, err := d.HDRHistogram()
	if err != nil {
		return sample{err: err}
	}
	if h != nil {
		s.test, s.hist, s.identity = testPercentile, metrics.HDRBuckets(h), d.HDR
		return s
	}
	if d.Count < minCount[stat] {
		s.weak = true // an interval from so few values is clamped to the largest: it understates the noise
		return s
	}
	s.iv, s.hasIV = iv, iv != metrics.Interval{}
	return s
}

// minCount is the count a percentile's interval needs to be trusted,
// 10/(1−q), as metrics flags Unreliable; only files without histograms
// rely on intervals.
var minCount = map[string]int64{"p50": 20, "p90": 100, "p95": 200, "p99": 1000, "p99.9": 10000}

// countRate reads a per-second rate of a count over the stage window,
// from the requests started in it (the graceful-stop tail left out, as
// the stage's own rates leave it out).
// perEvent says how many counted units one independent arrival brings:
// tokens come in requests, so their count is far more variable than a
// Poisson count of tokens would be.
func countRate(count func(*metrics.StageSummary) int64, perEvent func(*metrics.StageSummary) float64) func(*metrics.StageSummary, *result.Result) sample {
	return func(st *metrics.StageSummary, _ *result.Result) sample {
		if st.DurationS <= 0 {
			return sample{absent: "no stage window"}
		}
		s := poisson(count(st), st.DurationS)
		s.perEvent = perEvent(st)
		return s
	}
}

func one(*metrics.StageSummary) float64 { return 1 }

// tokensPerRequest is the mean output tokens of a request, at least 1.
func tokensPerRequest(st *metrics.StageSummary) float64 {
	if st.Requests <= 0 {
		return 1
	}
	return max(1, float64(st.OutputTokens)/float64(st.Requests))
}

func poisson(n int64, window float64) sample {
	v := float64(n)
	return sample{ok: true, value: v / window, test: testRate, events: v, exposure: window, perEvent: 1,
		identity: fmt.Sprint(n, window)}
}

func goodput(st *metrics.StageSummary, r *result.Result) sample {
	if !r.SLOSet {
		return sample{absent: "goodput not measured (no SLO)"}
	}
	if st.DurationS <= 0 {
		return sample{absent: "no stage window"}
	}
	return poisson(st.WindowGoodRequests(), st.DurationS)
}

// errorRate is failed/requests, tested exactly.
func errorRate(st *metrics.StageSummary, _ *result.Result) sample {
	if st.Requests <= 0 {
		return sample{absent: "no requests"}
	}
	return sample{ok: true, value: float64(st.Failed) / float64(st.Requests), test: testErrorRate,
		events: float64(st.Failed), exposure: float64(st.Requests), identity: fmt.Sprint(st.Failed, st.Requests)}
}
