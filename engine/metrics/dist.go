package metrics

import "math"

// lowSampleSize is the count below which a Dist is flagged LowSamples.
const lowSampleSize = 1000

// Dist summarises one distribution: latencies in milliseconds, or a custom
// trend's values in the unit the script used. A Dist with Count 0 is all
// zeros. Percentiles are within HDR precision (three significant digits;
// for custom trends also 0.001 units) and never leave [Min, Max]; Min,
// Max and Mean are exact, Stddev
// is from bucket midpoints.
type Dist struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
	// LowSamples is true when 0 < Count < 1000: a p99 from so few samples
	// rests on the ten slowest requests or fewer and is not trustworthy.
	// Unreliable says the same for every percentile; LowSamples stays for
	// readers of older results.
	LowSamples bool `json:"low_samples"`
	// Clamped counts values outside the histogram's range (latencies: 0 ..
	// 1 hour; custom trends: ±1e12 units) that were recorded at the nearest
	// bound rather than dropped.
	Clamped int64 `json:"clamped"`
	// CI holds a 95% confidence interval of each percentile (see
	// Intervals); zero, and left out of JSON, when Count is 0 (or every
	// value is 0).
	CI Intervals `json:"ci,omitzero"`
	// Unreliable names the percentiles ("p50", "p90", "p95", "p99",
	// "p99.9") that should not be read as figures: too few samples to
	// reach that far into the tail (Count < 10/(1−q): 20, 100, 200, 1000,
	// 10000), or a confidence interval wider than a quarter of the value.
	Unreliable []string `json:"unreliable,omitempty"`
	// Histogram counts the values in log-spaced buckets from the one
	// holding Min to the one holding Max, for a terminal bar chart. Only
	// TTFT and E2E carry one (stages and tag values); elsewhere it is nil.
	Histogram []Bucket `json:"histogram,omitempty"`
	// HDR is the whole histogram of a latency distribution, for gates
	// and exact merges: hdrhistogram-go's V2 compressed encoding in
	// base64, of microsecond ticks (HDRTicksPerMs to a millisecond), from
	// 1 µs to one hour at three significant digits. Decode it with
	// HDRHistogram. Empty when Count is 0, for custom trends (whose
	// values may be negative) and in files written before the field.
	HDR string `json:"hdr,omitempty"`
}

// quantiles are the percentiles a Dist reports, in the order of
// quantileNames and of Intervals' fields.
var quantiles = [...]float64{50, 90, 95, 99, 99.9}

// quantileNames name the percentiles in Unreliable and in CI's JSON.
var quantileNames = [len(quantiles)]string{"p50", "p90", "p95", "p99", "p99.9"}

// minReliable is the count a percentile needs, 10/(1−q): ten values
// beyond it, so that it does not rest on the very largest few.
var minReliable = [len(quantiles)]int64{20, 100, 200, 1000, 10000}

// SummaryPercentiles are the percentiles the summary's latency table
// prints for every stage.
var SummaryPercentiles = []float64{50, 90, 95, 99}

// MinReliable is the sample count percentile p (in percent, 0 < p < 100)
// needs before a Dist stops flagging it for too few samples: 10/(1−q),
// ten values beyond it — 20 for a p50, 100 for a p90, 200 for a p95,
// 1,000 for a p99, 10,000 for a p99.9. The lints that judge whether a
// stage is long enough ask the same rule the summary applies.
func MinReliable(p float64) int64 {
	for i, q := range quantiles {
		if q == p {
			return minReliable[i]
		}
	}
	if p <= 0 || p >= 100 {
		return 1
	}
	// The table's values exactly; elsewhere rounded up, less a hair of
	// floating-point error (10/(1−0.9) is 100.00000000000001).
	return int64(math.Ceil(10/(1-p/100) - 1e-9))
}

// wideInterval is the width of a confidence interval, relative to its
// percentile, beyond which the percentile is flagged unreliable.
const wideInterval = 0.25

// dist converts an immutable trend into a Dist.
func (t *trend) dist() Dist {
	if t == nil || t.n == 0 {
		if t == nil {
			return Dist{}
		}
		return Dist{Clamped: t.clamped}
	}
	var q [len(quantiles)]float64
	for i, p := range quantiles {
		q[i] = t.percentile(p)
	}
	d := Dist{
		Count:      t.n,
		Min:        t.geo.out(t.min),
		Mean:       t.avg(),
		Stddev:     t.stddev(),
		P50:        q[0],
		P90:        q[1],
		P95:        q[2],
		P99:        q[3],
		P999:       q[4],
		Max:        t.geo.out(t.max),
		LowSamples: t.n < lowSampleSize,
		Clamped:    t.clamped,
	}
	d.CI, d.Unreliable = t.intervals(q)
	if t.geo.quantized && t.neg == nil && t.pos != nil {
		d.HDR = encodeHDR(t.pos)
	}
	return d
}

// distWithHistogram is dist plus the bucket counts, for TTFT and E2E.
func (t *trend) distWithHistogram() Dist {
	d := t.dist()
	if t != nil && t.n > 0 {
		d.Histogram = t.buckets()
	}
	return d
}
