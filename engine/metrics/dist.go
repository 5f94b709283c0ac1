package metrics

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microsecond resolution from 1 µs to one hour, three
// significant digits, as DESIGN.md asks.
const (
	lowestUS      = 1
	highestUS     = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
	lowSampleSize = 1000
)

// Dist summarises one latency distribution in milliseconds. A Dist with
// Count 0 is all zeros. Percentiles are within HDR precision (three
// significant digits) and never exceed Max; Min and Max are exact.
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
	// Clamped counts values outside 0 .. 1 hour that were recorded at the
	// nearest bound rather than dropped.
	Clamped int64 `json:"clamped"`
}

// recorder is one HDR histogram plus the exact extremes the histogram can
// only approximate. It is owned by the aggregator goroutine.
type recorder struct {
	h        *hdrhistogram.Histogram
	min, max int64
	sum      float64 // exact, so the mean does not depend on bucket midpoints
	clamped  int64
}

func newRecorder() *recorder {
	return &recorder{h: hdrhistogram.New(lowestUS, highestUS, sigFigs)}
}

// record adds d, rounded to the nearest microsecond. Out-of-range values are
// clamped and counted so that no sample silently disappears.
func (r *recorder) record(d time.Duration) {
	v := int64((d + time.Microsecond/2) / time.Microsecond)
	if d < 0 {
		v = -1 // rounding must not turn a negative duration into 0
	}
	if v < 0 || v > highestUS {
		v = min(max(v, 0), highestUS)
		r.clamped++
	}
	if err := r.h.RecordValue(v); err != nil {
		// Unreachable with the bounds above; counted rather than lost if
		// the histogram's geometry ever disagrees with them.
		r.clamped++
		return
	}
	if r.h.TotalCount() == 1 || v < r.min {
		r.min = v
	}
	r.max = max(r.max, v)
	r.sum += float64(v)
}

var quantiles = []float64{50, 90, 95, 99, 99.9}

// dist converts the recorder into a Dist in milliseconds.
func (r *recorder) dist() Dist {
	n := r.h.TotalCount()
	if n == 0 {
		return Dist{Clamped: r.clamped}
	}
	q := r.h.ValueAtPercentilesSlice(quantiles)
	for i := range q {
		// HDR reports the top of a bucket, which may lie above the exact
		// maximum; a p99 larger than max would only confuse readers.
		q[i] = min(max(q[i], r.min), r.max)
	}
	return Dist{
		Count:      n,
		Min:        ms(r.min),
		Mean:       roundUS(r.sum / float64(n)),
		Stddev:     roundUS(r.h.StdDev()),
		P50:        ms(q[0]),
		P90:        ms(q[1]),
		P95:        ms(q[2]),
		P99:        ms(q[3]),
		P999:       ms(q[4]),
		Max:        ms(r.max),
		LowSamples: n < lowSampleSize,
		Clamped:    r.clamped,
	}
}

func ms(us int64) float64 { return float64(us) / 1000 }

// roundUS converts microseconds to milliseconds, keeping the microsecond
// resolution the histograms have and no spurious digits beyond it.
func roundUS(us float64) float64 { return math.Round(us) / 1000 }
