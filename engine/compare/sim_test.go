package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/metrics"
)

// The simulations behind the false-alarm rate and the smallest
// detectable regressions that README states. Fixed seeds: the printed
// tables are reproducible (go test -run 'TestFalseAlarmRate|TestDetection'
// -v ./engine/compare).

// maxFalseAlarm bounds the share of A/A comparisons (4 stages × the
// default metrics, both files from one unchanged system) that report at
// least one REGRESSION.
const maxFalseAlarm = 0.03

// family is a latency distribution, as a function drawing one value in
// ms at a given median.
type family struct {
	name string
	draw func(rng *rand.Rand, median float64) float64
}

var families = []family{
	// Long-tailed: p99 about 3.2x the median.
	{"lognormal", func(rng *rand.Rand, median float64) float64 { return median * math.Exp(0.5*rng.NormFloat64()) }},
	// Two modes: 85% served at once, 15% queued for about 8x as long.
	{"bimodal", func(rng *rand.Rand, median float64) float64 {
		if rng.Float64() < 0.15 {
			return 8 * median * math.Exp(0.3*rng.NormFloat64())
		}
		return median * math.Exp(0.25*rng.NormFloat64())
	}},
}

// simStage is one stage of one simulated run: its default metrics'
// samples, ready for compareOne.
type simStage map[string]sample

// drawStage simulates a stage of about n requests: Poisson arrivals over
// 60 s, 1% failures, and TTFT, TPOT and E2E of the family with every
// latency scaled by k[metric] (1 when absent).
func drawStage(rng *rand.Rand, f family, n int, k map[string]float64) simStage {
	requests := max(1, int64(math.Round(float64(n)+math.Sqrt(float64(n))*rng.NormFloat64())))
	var failed int64
	for range requests {
		if rng.Float64() < 0.01 {
			failed++
		}
	}
	st := &metrics.StageSummary{Requests: requests, Failed: failed, DurationS: 60}
	s := simStage{"req_per_sec": poisson(requests, 60), "errors.rate": errorRate(st, nil)}
	// A slice, not a map: the draws must come in one order to reproduce.
	for _, dm := range []struct {
		dist   string
		median float64
	}{{"ttft", 200}, {"tpot", 20}, {"e2e", 3000}} {
		dist, median := dm.dist, dm.median
		ms := make([]float64, requests)
		scale := k[dist+".p99"]
		if scale == 0 {
			scale = 1
		}
		for i := range ms {
			ms[i] = scale * f.draw(rng, median)
		}
		s[dist+".p99"] = percentileSample(ms, 99)
	}
	return s
}

// percentileSample is the sample distSample reads from a file's
// histogram, without the encoding round trip (tested in metrics).
func percentileSample(ms []float64, q float64) sample {
	h := histOf(ms)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ms {
		lo, hi = min(lo, v), max(hi, v)
	}
	v := min(max(float64(h.ValueAtPercentile(q))/metrics.HDRTicksPerMs, lo), hi)
	return sample{ok: true, value: v, test: testPercentile, q: q, hist: metrics.HDRBuckets(h), count: int64(len(ms))}
}

// simCompare compares 4 stages of two simulated runs on the default
// metrics, as compare would, and counts regressions and inconclusive rows.
func simCompare(rng *rand.Rand, f family, n int, k map[string]float64) (regressions, inconclusive map[string]int) {
	regressions, inconclusive = map[string]int{}, map[string]int{}
	lv := levels{DefaultAlpha, DefaultWithinAlpha}
	for range 4 {
		b, nw := drawStage(rng, f, n, nil), drawStage(rng, f, n, k)
		for _, name := range DefaultMetrics {
			m, _ := lookup(name)
			row := compareOne("s/c", m, b[name], nw[name], 0.2, lv)
			if row.Regression {
				regressions[name]++
			}
			if row.Inconclusive {
				inconclusive[name]++
			}
		}
	}
	return regressions, inconclusive
}

// trials is the number of simulated comparisons per cell; fewer under
// the race detector, which makes them slow and adds nothing here.
func trials(full int) int {
	if raceEnabled || testing.Short() {
		return full / 10
	}
	return full
}

var simCounts = []int{100, 300, 1000}

func TestFalseAlarmRate(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "A/A: 4 stages x %s, bound 20%%, alpha %v one-sided, within %v\n", strings.Join(DefaultMetrics, ","), DefaultAlpha, DefaultWithinAlpha)
	fmt.Fprintf(&table, "%-10s %6s %7s %12s   %s\n", "family", "n", "trials", "false alarm", "inconclusive: compares, p99 rows, req/s rows, error-rate rows (1% errors)")
	for fi, f := range families {
		for _, n := range simCounts {
			rng := rand.New(rand.NewPCG(uint64(fi), uint64(n)))
			runs := trials(1000)
			alarms, undecided := 0, 0
			byMetric, incByMetric := map[string]int{}, map[string]int{}
			for range runs {
				reg, inc := simCompare(rng, f, n, nil)
				if len(reg) > 0 {
					alarms++
				}
				if len(inc) > 0 {
					undecided++
				}
				for k, v := range reg {
					byMetric[k] += v
				}
				for k, v := range inc {
					incByMetric[k] += v
				}
			}
			t.Logf("%s, n=%d: false regressions by metric %v", f.name, n, byMetric)
			rate := float64(alarms) / float64(runs)
			rows := float64(4 * runs) // rows of one metric
			p99 := incByMetric["ttft.p99"] + incByMetric["tpot.p99"] + incByMetric["e2e.p99"]
			fmt.Fprintf(&table, "%-10s %6d %7d %11.1f%%   %5.1f%% %5.1f%% %5.1f%% %5.1f%%\n", f.name, n, runs, 100*rate,
				100*float64(undecided)/float64(runs), 100*float64(p99)/(3*rows),
				100*float64(incByMetric["req_per_sec"])/rows, 100*float64(incByMetric["errors.rate"])/rows)
			if rate > maxFalseAlarm {
				t.Errorf("%s, n=%d: false-alarm rate %.1f%%, want at most %.0f%%", f.name, n, 100*rate, 100*maxFalseAlarm)
			}
		}
	}
	t.Log("\n" + table.String())
}

// shifts are the slowdowns TestDetection tries, as factors of every
// latency of NEW.
var shifts = []float64{1.25, 1.3, 1.4, 1.5, 1.75, 2, 2.5, 3, 4, 6, 10}

// TestDetection finds the smallest slowdown of every TTFT that a
// one-stage ttft.p99 row reports as a REGRESSION in at least 80% of
// comparisons, per family and sample count.
func TestDetection(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "smallest TTFT slowdown detected as a ttft.p99 REGRESSION in >= 80%% of runs (bound 20%%)\n")
	fmt.Fprintf(&table, "%-10s %6s %10s\n", "family", "n", "slowdown")
	lv := levels{DefaultAlpha, DefaultWithinAlpha}
	m, _ := lookup("ttft.p99")
	for fi, f := range families {
		for _, n := range simCounts {
			rng := rand.New(rand.NewPCG(uint64(fi)+10, uint64(n)))
			found := "> 10x"
			for _, k := range shifts {
				hits, runs := 0, trials(200)
				for range runs {
					b, nw := drawStage(rng, f, n, nil), drawStage(rng, f, n, map[string]float64{"ttft.p99": k})
					if compareOne("s/c", m, b["ttft.p99"], nw["ttft.p99"], 0.2, lv).Regression {
						hits++
					}
				}
				if float64(hits) >= 0.8*float64(runs) {
					found = fmt.Sprintf("+%.0f%%", 100*(k-1))
					break
				}
			}
			fmt.Fprintf(&table, "%-10s %6d %10s\n", f.name, n, found)
		}
	}
	t.Log("\n" + table.String())
}
