package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// distOf builds the Dist a run would report for these latencies (ms),
// histogram included, as metrics does: HDR percentiles clamped to the
// exact extremes.
func distOf(tb testing.TB, ms []float64) metrics.Dist {
	tb.Helper()
	h := histOf(ms)
	enc, err := h.Encode()
	if err != nil {
		tb.Fatal(err)
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range ms {
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
	}
	p := func(q float64) float64 { return min(max(float64(h.ValueAtPercentile(q))/1000, lo), hi) }
	return metrics.Dist{Count: int64(len(ms)), Min: lo, Max: hi, Mean: sum / float64(len(ms)), Stddev: h.StdDev() / 1000,
		P50: p(50), P90: p(90), P95: p(95), P99: p(99), P999: p(99.9), HDR: string(enc)}
}

// histOf records latencies (ms) into llmload's latency geometry.
func histOf(ms []float64) *hdrhistogram.PackedHistogram {
	h := hdrhistogram.NewPacked(1, 3_600_000_000, 3)
	for _, v := range ms {
		h.RecordValue(int64(math.Round(v * 1000)))
	}
	return h
}

// constant is n latencies of ms each, with ±1% jitter, as a server with
// a fixed delay gives.
func constant(rng *rand.Rand, n int, ms float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = ms * (1 + 0.01*(rng.Float64()-0.5))
	}
	return out
}

// stageOf is a result with one stage whose every latency is dist.
func stageOf(d metrics.Dist, requests, failed int64, secs float64) *result.Result {
	st := metrics.StageSummary{Scenario: "s", Stage: "c1", DurationS: secs, Requests: requests, Failed: failed,
		OK: requests - failed, OutputTokens: 100 * requests, GoodRequests: requests / 2,
		TTFT: d, TTFC: d, TPOT: d, ITL: d, E2E: d, TTFB: d}
	return &result.Result{SLOSet: true, Stages: []metrics.StageSummary{st}}
}

// TestDirection moves each metric up by a large amount and checks which
// way is worse and that the test sees it.
func TestDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// NEW: every latency, the request count and the error rate 3x.
	slow, fast := stageOf(distOf(t, constant(rng, 3000, 300)), 3000, 270, 100), stageOf(distOf(t, constant(rng, 3000, 100)), 1000, 30, 100)
	tests := map[string]bool{ // metric: up is worse
		"ttft.p99": true, "ttfc.p50": true, "tpot.mean": true, "itl.p90": true, "e2e.p99.9": true,
		"req_per_sec": false, "output_tok_per_sec": false, "goodput": false, "errors.rate": true,
	}
	for name, upWorse := range tests {
		res, err := Compare(fast, slow, Options{MaxRegression: 0.2, Metrics: []string{name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		row := res.Rows[0]
		if got, want := row.Worse, upWorse; got != want {
			t.Errorf("%s: Worse = %v, want %v", name, got, want)
		}
		if got, want := row.Verdict(), map[bool]string{true: VerdictRegression, false: VerdictBetter}[upWorse]; got != want {
			t.Errorf("%s: verdict %q, want %q (%s)", name, got, want, row.Note)
		}
	}
}

// TestVerdicts decides rows from real histograms at the sample counts of
// short CI runs.
func TestVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lognormal := func(n int, median, k float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = k * median * math.Exp(0.5*rng.NormFloat64())
		}
		return out
	}
	tests := []struct {
		name      string
		base, new []float64
		metric    string
		want      string
	}{
		{"126 samples all 50% slower", constant(rng, 126, 100), constant(rng, 126, 150), "ttft.p99", VerdictRegression},
		{"20 samples all 50% slower", constant(rng, 20, 100), constant(rng, 20, 150), "ttft.p99", VerdictRegression},
		{"126 samples 10% slower", constant(rng, 126, 100), constant(rng, 126, 110), "ttft.p50", VerdictWorse},
		{"126 samples 10% faster", constant(rng, 126, 100), constant(rng, 126, 90), "ttft.p50", VerdictBetter},
		{"126 samples unchanged, p50", constant(rng, 126, 100), constant(rng, 126, 100), "ttft.p50", VerdictSame},
		{"126 samples unchanged, p99", constant(rng, 126, 100), constant(rng, 126, 100), "ttft.p99", VerdictInconclusive},
		{"a long tail, 30 samples", lognormal(30, 100, 1), lognormal(30, 100, 1.3), "ttft.p99", VerdictInconclusive},
		{"a long tail, 20000 samples, 2x", lognormal(20000, 100, 1), lognormal(20000, 100, 2), "ttft.p99", VerdictRegression},
		{"a long tail, 20000 samples, same", lognormal(20000, 100, 1), lognormal(20000, 100, 1), "ttft.p99", VerdictSame},
		{"a long tail, 20000 samples, 10% slower", lognormal(20000, 100, 1), lognormal(20000, 100, 1.1), "ttft.p90", VerdictWorse},
		{"mean, 126 samples all 50% slower", constant(rng, 126, 100), constant(rng, 126, 150), "ttft.mean", VerdictRegression},
		{"max has no test", constant(rng, 126, 100), constant(rng, 126, 150), "ttft.max", VerdictInconclusive},
	}
	for _, tc := range tests {
		b, n := stageOf(distOf(t, tc.base), 100, 0, 10), stageOf(distOf(t, tc.new), 100, 0, 10)
		res, err := Compare(b, n, Options{MaxRegression: 0.2, Metrics: []string{tc.metric}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0]; got.Verdict() != tc.want {
			t.Errorf("%s: verdict %q, want %q (%+v)", tc.name, got.Verdict(), tc.want, got)
		}
	}
}

func TestRateAndErrorVerdicts(t *testing.T) {
	tests := []struct {
		name                string
		baseReq, baseFailed int64
		newReq, newFailed   int64
		metric, want        string
		baseSecs, newSecs   float64
		maxRegression       float64
	}{
		{"same counts, many", 10000, 0, 10000, 0, "req_per_sec", VerdictSame, 100, 100, 0.2},
		{"identical counts", 50, 0, 50, 0, "req_per_sec", VerdictSame, 10, 10, 0.2},
		{"nearly the same counts, few", 50, 0, 51, 0, "req_per_sec", VerdictInconclusive, 10, 10, 0.2},
		{"half the rate", 1000, 0, 500, 0, "req_per_sec", VerdictRegression, 10, 10, 0.2},
		{"same rate, longer window", 1000, 0, 2000, 0, "req_per_sec", VerdictSame, 10, 20, 0.2},
		// 3% fewer tokens: raw token counts would call it worse.
		{"tokens come in requests", 1000, 0, 970, 0, "output_tok_per_sec", VerdictSame, 10, 10, 0.2},
		{"tokens 10% fewer", 10000, 0, 9000, 0, "output_tok_per_sec", VerdictWorse, 10, 10, 0.2},
		{"no errors in either", 100, 0, 100, 0, "errors.rate", VerdictSame, 10, 10, 0.2},
		{"errors from none", 1000, 0, 1000, 50, "errors.rate", VerdictRegression, 10, 10, 0.2},
		{"one error from none", 100, 0, 100, 1, "errors.rate", VerdictInconclusive, 10, 10, 0.2},
		{"errors down", 1000, 100, 1000, 10, "errors.rate", VerdictBetter, 10, 10, 0.2},
	}
	d := distOf(t, []float64{1, 2, 3})
	for _, tc := range tests {
		b, n := stageOf(d, tc.baseReq, tc.baseFailed, tc.baseSecs), stageOf(d, tc.newReq, tc.newFailed, tc.newSecs)
		res, err := Compare(b, n, Options{MaxRegression: tc.maxRegression, Metrics: []string{tc.metric}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0]; got.Verdict() != tc.want {
			t.Errorf("%s: verdict %q, want %q (%+v)", tc.name, got.Verdict(), tc.want, got)
		}
	}
}

// TestIntervalFallback decides rows of files written before histograms
// by their intervals, and never passes what they cannot decide.
func TestIntervalFallback(t *testing.T) {
	tests := map[string]struct {
		base, new   sample
		bound       float64
		wantVerdict string
	}{
		"beyond bound":    {iv(100, 99, 101), iv(130, 129, 131), 0.2, VerdictRegression},
		"within bound":    {iv(100, 99, 101), iv(110, 109, 111), 0.2, VerdictWorse},
		"zero bound":      {iv(100, 99, 101), iv(110, 109, 111), 0, VerdictRegression},
		"overlap":         {iv(100, 80, 125), iv(130, 120, 140), 0.2, VerdictInconclusive},
		"overlap, tight":  {iv(100, 99, 101), iv(100.5, 99.5, 101.5), 0.2, VerdictSame},
		"better":          {iv(130, 129, 131), iv(100, 99, 101), 0.2, VerdictBetter},
		"no CI, weak":     {weak(100), weak(200), 0.2, VerdictInconclusive},
		"no CI, weak, eq": {weak(100), weak(100), 0.2, VerdictInconclusive},
		"no CI, enough":   {plain(100), plain(200), 0.2, VerdictRegression},
		"from zero":       {iv(0, 0, 0.01), iv(0.2, 0.1, 0.3), 0.2, VerdictRegression},
		"no data in base": {sample{absent: "no data"}, iv(1, 0, 2), 0.2, VerdictNoData},
		"no data in new":  {iv(1, 0, 2), sample{absent: "no data"}, 0.2, VerdictNoData},
	}
	m, _ := lookup("ttft.p99")
	for name, tc := range tests {
		row := compareOne("s/c1", m, tc.base, tc.new, tc.bound, levels{DefaultAlpha, DefaultWithinAlpha})
		if got, want := row.Verdict(), tc.wantVerdict; got != want {
			t.Errorf("%s: verdict %q, want %q (%+v)", name, got, want, row)
		}
		if got, want := row.Inconclusive, tc.wantVerdict == VerdictInconclusive; got != want {
			t.Errorf("%s: Inconclusive = %v, want %v", name, got, want)
		}
	}
}

func iv(v, lo, hi float64) sample {
	return sample{ok: true, value: v, iv: [2]float64{lo, hi}, hasIV: true, test: testIntervals}
}

func weak(v float64) sample  { return sample{ok: true, value: v, weak: true, test: testIntervals} }
func plain(v float64) sample { return sample{ok: true, value: v, test: testIntervals} }

// TestOldVerdictsFromFlags reads rows of a comparison written before
// Decision existed: an undecided change is inconclusive, not a pass.
func TestOldVerdictsFromFlags(t *testing.T) {
	tests := map[string]struct {
		row  Row
		want string
	}{
		"noise":      {Row{Base: 1, New: 2, Worse: true}, VerdictInconclusive},
		"regression": {Row{Base: 1, New: 2, Worse: true, Significant: true, Regression: true}, VerdictRegression},
		"same":       {Row{Base: 1, New: 1}, VerdictSame},
		"decided":    {Row{Base: 1, New: 2, Decision: VerdictWorse}, VerdictWorse},
	}
	for name, tc := range tests {
		if got := tc.row.Verdict(); got != tc.want {
			t.Errorf("%s: verdict %q, want %q", name, got, tc.want)
		}
	}
}
