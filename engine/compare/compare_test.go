package compare

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	goldenfile "github.com/llmload/llmload/engine/golden"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
)

// readBase reads a real run against the built-in simulator
// (scenarios/chat_mix.lua, stages c1..c16).
func readBase(t *testing.T) *result.Result {
	t.Helper()
	f, err := os.Open("testdata/r4.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scaleDist multiplies a distribution's figures, CI included, by k: the
// same shape, slower or faster.
func scaleDist(d *metrics.Dist, k float64) {
	d.Mean, d.P50, d.P90, d.P95, d.P99, d.P999, d.Max = d.Mean*k, d.P50*k, d.P90*k, d.P95*k, d.P99*k, d.P999*k, d.Max*k
	for _, iv := range []*metrics.Interval{&d.CI.P50, &d.CI.P90, &d.CI.P95, &d.CI.P99, &d.CI.P999} {
		iv[0], iv[1] = iv[0]*k, iv[1]*k
	}
}

// readLong is the base run as if c8 and c16 had run long enough for
// their p99 intervals to be trusted (a run of a few seconds has 18 and 26
// samples: every p99 is too noisy to gate on).
func readLong(t *testing.T) *result.Result {
	t.Helper()
	r := readBase(t)
	for i := 2; i < len(r.Stages); i++ {
		st := &r.Stages[i]
		for _, d := range []*metrics.Dist{&st.TTFT, &st.TPOT, &st.E2E} {
			d.Count, d.LowSamples, d.Unreliable = 2000, false, nil
		}
	}
	return r
}

// readNew is readLong changed: c1 gone and c32 added; at c16 TTFT 1.5x
// slower (intervals apart: a regression) and 10 of 26 requests failed; at
// c8 TTFT p99 1.3x (intervals overlap: noise) and TPOT 10% better; at c4
// E2E 1.5x (too few samples: noise).
func readNew(t *testing.T) *result.Result {
	t.Helper()
	r := readLong(t)
	r.Run.Start = r.Run.Start.Add(3600e9)
	c16 := r.Stages[3]
	c16.Stage = "c32"
	r.Stages = append(r.Stages[1:], c16)
	scaleDist(&r.Stages[2].TTFT, 1.5)
	r.Stages[2].Failed, r.Stages[2].OK = 10, 16
	scaleDist(&r.Stages[1].TTFT, 1.3)
	scaleDist(&r.Stages[1].TPOT, 0.9)
	scaleDist(&r.Stages[0].E2E, 1.5)
	return r
}

func TestCompareRegressions(t *testing.T) {
	res, err := Compare(readLong(t), readNew(t), Options{MaxRegression: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"sweep/c4 ttft.p99":     VerdictInconclusive, // 18 samples, no histogram
		"sweep/c8 ttft.p99":     VerdictInconclusive,
		"sweep/c8 tpot.p99":     VerdictBetter,
		"sweep/c4 e2e.p99":      VerdictInconclusive,
		"sweep/c16 ttft.p99":    VerdictRegression,
		"sweep/c16 e2e.p99":     VerdictSame,
		"sweep/c16 errors.rate": VerdictRegression,
		"sweep/c16 req_per_sec": VerdictSame,
	}
	got := map[string]string{}
	for _, row := range res.Rows {
		got[row.Stage+" "+row.Metric] = row.Verdict()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: verdict %q, want %q", k, got[k], v)
		}
	}
	if got, want := res.Regressions, 2; got != want {
		t.Errorf("Regressions = %d, want %d", got, want)
	}
	if got, want := strings.Join(res.OnlyBase, ","), "sweep/c1"; got != want {
		t.Errorf("OnlyBase = %q, want %q", got, want)
	}
	if got, want := strings.Join(res.OnlyNew, ","), "sweep/c32"; got != want {
		t.Errorf("OnlyNew = %q, want %q", got, want)
	}
}

func TestGolden(t *testing.T) {
	res, err := Compare(readLong(t), readNew(t), Options{MaxRegression: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]report.Reporter{"compare.txt": Text(res), "compare.md": Markdown(res), "compare.json": JSON(res)} {
		var b bytes.Buffer
		if err := rep(&b); err != nil {
			t.Fatal(err)
		}
		golden(t, name+".golden", b.Bytes())
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func TestNoCommonStage(t *testing.T) {
	base, other := readBase(t), readBase(t)
	for i := range other.Stages {
		other.Stages[i].Scenario = "other"
	}
	_, err := Compare(base, other, Options{})
	if !errors.Is(err, ErrNoCommonStage) {
		t.Fatalf("err = %v, want ErrNoCommonStage", err)
	}
	for _, s := range []string{"sweep/c1", "other/c16"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
}

func TestBadOptions(t *testing.T) {
	tests := map[string]struct {
		o    Options
		want string
	}{
		"unknown metric": {Options{Metrics: []string{"ttft.p42"}}, `unknown metric "ttft.p42": valid metrics are ttft.p50`},
		"unknown dist":   {Options{Metrics: []string{"latency.p99"}}, "errors.rate"},
		"negative bound": {Options{MaxRegression: -0.1}, "must be a finite fraction"},
	}
	for name, tc := range tests {
		_, err := Compare(readBase(t), readBase(t), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", name, err, tc.want)
		}
	}
	if _, err := Compare(nil, readBase(t), Options{}); err == nil {
		t.Error("Compare(nil, ...) returned no error")
	}
}

// TestGoldenHistograms renders a comparison of files with histograms, as
// this llmload writes them: a short run whose TTFT went from 100 to 150
// ms on every request, against a long, unchanged stage.
func TestGoldenHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	stage := func(name string, n int, ttft float64) metrics.StageSummary {
		st := stageOf(distOf(t, constant(rng, n, ttft)), int64(n), 0, 3).Stages[0]
		st.Stage, st.TPOT, st.E2E = name, distOf(t, constant(rng, n, 25)), distOf(t, constant(rng, n, ttft+75))
		return st
	}
	base := &result.Result{Stages: []metrics.StageSummary{stage("short", 126, 100), stage("long", 5000, 100)}}
	next := &result.Result{Stages: []metrics.StageSummary{stage("short", 126, 150), stage("long", 5000, 100)}}
	res, err := Compare(base, next, Options{MaxRegression: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Text(res)(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_hdr.txt.golden", b.Bytes())
}

// The stage's own req/s leaves the graceful-stop tail out; so must the
// gate, or a run whose VUs linger past the window would look faster.
func TestRatesLeaveTheTailOut(t *testing.T) {
	stage := func(requests, tail int64) metrics.StageSummary {
		return metrics.StageSummary{Scenario: "s", Stage: "c1", Complete: true, DurationS: 10,
			Requests: requests, OK: requests, TailRequests: tail, OutputTokens: 10 * requests, TailOutputTokens: 10 * tail}
	}
	base := &result.Result{Stages: []metrics.StageSummary{stage(100, 0)}}
	next := &result.Result{Stages: []metrics.StageSummary{stage(140, 40)}}
	res, err := Compare(base, next, Options{MaxRegression: 0.2, Metrics: []string{"req_per_sec", "output_tok_per_sec"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if got, want := row.New, row.Base; got != want {
			t.Errorf("%s: new %v, want %v (the 40 tail requests left out)", row.Metric, got, want)
		}
	}
}
