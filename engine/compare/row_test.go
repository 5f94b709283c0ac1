package compare

import (
	"testing"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/report"
)

// TestDirection moves each metric up by a large, significant amount and
// checks which way is worse.
func TestDirection(t *testing.T) {
	tests := map[string]bool{ // metric: up is worse
		"ttft.p99": true, "ttfc.p50": true, "tpot.mean": true, "itl.p90": true, "e2e.p99.9": true, "ttfb.max": true,
		"req_per_sec": false, "output_tok_per_sec": false, "goodput": false, "errors.rate": true,
	}
	for name, upWorse := range tests {
		res, err := Compare(stageResult(1), stageResult(3), Options{MaxRegression: 0.2, Metrics: []string{name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		row := res.Rows[0]
		if row.NoData {
			t.Fatalf("%s: no data (%s)", name, row.Note)
		}
		if got, want := row.Worse, upWorse; got != want {
			t.Errorf("%s: Worse = %v, want %v", name, got, want)
		}
		if got, want := row.Significant, true; got != want {
			t.Errorf("%s: Significant = %v, want %v (%s)", name, got, want, row.Note)
		}
		if got, want := row.Regression, upWorse; got != want {
			t.Errorf("%s: Regression = %v, want %v", name, got, want)
		}
	}
}

// stageResult is one long stage whose every figure is k times a baseline.
func stageResult(k float64) *report.Result {
	d := metrics.Dist{Count: 100000, Mean: 100 * k, Stddev: 10, P50: 100 * k, P90: 100 * k, P95: 100 * k,
		P99: 100 * k, P999: 100 * k, Max: 100 * k}
	d.CI = metrics.Intervals{P50: metrics.Interval{99 * k, 101 * k}, P90: metrics.Interval{99 * k, 101 * k},
		P95: metrics.Interval{99 * k, 101 * k}, P99: metrics.Interval{99 * k, 101 * k}, P999: metrics.Interval{99 * k, 101 * k}}
	n := int64(10000 * k)
	st := metrics.StageSummary{Scenario: "s", Stage: "c1", DurationS: 100, Requests: n, Failed: int64(100 * k * k),
		OutputTokens: 100 * n, GoodRequests: n / 2, TTFT: d, TTFC: d, TPOT: d, ITL: d, E2E: d, TTFB: d}
	return &report.Result{SLOSet: true, Stages: []metrics.StageSummary{st}}
}

func TestBoundAndNoise(t *testing.T) {
	tests := map[string]struct {
		base, new   sample
		bound       float64
		wantVerdict string
	}{
		"beyond bound":    {iv(100, 99, 101), iv(130, 129, 131), 0.2, VerdictRegression},
		"within bound":    {iv(100, 99, 101), iv(110, 109, 111), 0.2, VerdictWorse},
		"zero bound":      {iv(100, 99, 101), iv(110, 109, 111), 0, VerdictRegression},
		"overlap":         {iv(100, 80, 125), iv(130, 120, 140), 0.2, VerdictNoise},
		"better":          {iv(130, 129, 131), iv(100, 99, 101), 0.2, VerdictBetter},
		"no CI, weak":     {sample{ok: true, value: 100, weak: true}, sample{ok: true, value: 200}, 0.2, VerdictNoise},
		"no CI, enough":   {sample{ok: true, value: 100}, sample{ok: true, value: 200}, 0.2, VerdictRegression},
		"from zero":       {iv(0, 0, 0.01), iv(0.2, 0.1, 0.3), 0.2, VerdictRegression},
		"no data in base": {sample{absent: "no data"}, iv(1, 0, 2), 0.2, VerdictNoData},
		"no data in new":  {iv(1, 0, 2), sample{absent: "no data"}, 0.2, VerdictNoData},
	}
	m, _ := lookup("ttft.p99")
	for name, tc := range tests {
		row := compareOne("s/c1", m, tc.base, tc.new, tc.bound)
		if got, want := row.Verdict(), tc.wantVerdict; got != want {
			t.Errorf("%s: verdict %q, want %q (%+v)", name, got, want, row)
		}
	}
}

func iv(v, lo, hi float64) sample {
	return sample{ok: true, value: v, iv: [2]float64{lo, hi}, hasIV: true}
}

func TestRateIntervals(t *testing.T) {
	st := &metrics.StageSummary{Requests: 100, Failed: 0, DurationS: 10}
	s := poisson(st.Requests, st.DurationS)
	if got, want := s.value, 10.0; got != want {
		t.Errorf("rate = %v, want %v", got, want)
	}
	if s.iv[0] > 8.1 || s.iv[0] < 8.0 || s.iv[1] < 11.9 || s.iv[1] > 12.0 {
		t.Errorf("Poisson interval of 100 in 10 s = %v, want about [8.04, 11.96]", s.iv)
	}
	e := errorRate(st, nil)
	if e.iv[0] != 0 || e.iv[1] < 0.03 || e.iv[1] > 0.04 {
		t.Errorf("Wilson interval of 0/100 = %v, want about [0, 0.037]", e.iv)
	}
	if got := goodput(st, &report.Result{}); got.ok {
		t.Error("goodput without an SLO has data")
	}
}
