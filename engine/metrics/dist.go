package metrics

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
	LowSamples bool `json:"low_samples"`
	// Clamped counts values outside the histogram's range (latencies: 0 ..
	// 1 hour; custom trends: ±1e12 units) that were recorded at the nearest
	// bound rather than dropped.
	Clamped int64 `json:"clamped"`
}

var quantiles = [...]float64{50, 90, 95, 99, 99.9}

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
	return Dist{
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
}
