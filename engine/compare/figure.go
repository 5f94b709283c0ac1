package compare

import (
	"math"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// Figure is one metric of one stage as a trend across runs plots it.
type Figure struct {
	OK     bool    // false: the stage has no value of the metric
	Value  float64 // in Unit; an error rate in percent
	Lo, Hi float64 // its 95% interval; NaN when there is none (a maximum)
	Unit   string  // "ms", "req/s", "tok/s" or "%"
	// HigherBad is true for latencies and errors, false for throughput.
	HigherBad bool
}

// FigureOf reads the metric name (one of ValidMetrics) from a stage of r,
// with the interval its own data give: a percentile's distribution-free
// interval, a mean's normal one, a rate's from its count (overdispersed
// by the tokens a request brings), an error rate's Wilson interval.
func FigureOf(name string, st *metrics.StageSummary, r *result.Result) (Figure, error) {
	m, err := lookup(name)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{Unit: units[m.kind], HigherBad: m.higherBad, Lo: math.NaN(), Hi: math.NaN()}
	s := m.read(st, r)
	if s.err != nil {
		return Figure{}, s.err
	}
	if !s.ok {
		return f, nil
	}
	f.OK, f.Value = true, s.value
	switch s.test {
	case testPercentile, testIntervals:
		dist, stat, _ := strings.Cut(name, ".")
		d, _ := st.Latency(dist)
		if iv, ok := percentileCI(d, stat); ok {
			f.Lo, f.Hi = iv[0], iv[1]
		}
	case testMean:
		if s.count > 1 {
			h := 1.96 * s.sd / math.Sqrt(float64(s.count))
			f.Lo, f.Hi = s.value-h, s.value+h
		}
	case testRate:
		if s.exposure > 0 {
			h := 1.96 * math.Sqrt(s.events*s.perEvent) / s.exposure
			f.Lo, f.Hi = max(0, s.value-h), s.value+h
		}
	case testErrorRate:
		lo, hi := wilson(s.events, s.exposure)
		f.Value, f.Lo, f.Hi = 100*s.value, 100*lo, 100*hi
	}
	return f, nil
}

var units = map[string]string{"ms": "ms", "rate": "req/s", "tok": "tok/s", "share": "%"}

func percentileCI(d metrics.Dist, stat string) (metrics.Interval, bool) {
	var iv metrics.Interval
	switch stat {
	case "p50":
		iv = d.CI.P50
	case "p90":
		iv = d.CI.P90
	case "p95":
		iv = d.CI.P95
	case "p99":
		iv = d.CI.P99
	case "p99.9":
		iv = d.CI.P999
	}
	return iv, iv != metrics.Interval{}
}

// wilson is the 95% Wilson score interval of k successes in n trials.
func wilson(k, n float64) (float64, float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.96
	p := k / n
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	h := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return max(0, mid-h), min(1, mid+h)
}
