package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// collect runs samples through a real Collector, in one stage "s/only"
// of 10 s, and renders the result.
func collect(t *testing.T, slo plan.SLO, samples ...engine.Sample) (string, *result.Result) {
	t.Helper()
	c := metrics.NewCollector(metrics.WithSLO(slo))
	start := time.Now()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "only", Target: 2, At: start})
	for _, s := range samples {
		s.Scenario, s.Stage = "s", "only"
		s.Start = start
		c.Sample(s)
	}
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "only", Target: 2, At: start.Add(10 * time.Second)})
	r := result.New(result.Meta{Scenario: "x.lua", Start: start, End: start.Add(10 * time.Second), Complete: true, SLO: result.SLOFrom(slo)}, c.Close())
	return string(render(t, Text(r))), r
}

func okSample(ttft, e2e time.Duration, tags map[string]string) engine.Sample {
	return engine.Sample{Tags: tags, Result: engine.Result{Status: 200, TTFB: ttft, TTFT: ttft, TTFC: ttft, E2E: e2e,
		TPOT: 10 * time.Millisecond, OutputTokens: 20, TokensSource: engine.TokensFromUsage, Streamed: true}}
}

// TestTailShowsTwoModes: half the requests are served at once and half
// wait; the tail chart must show two groups with empty buckets between,
// which the percentiles alone do not.
func TestTailShowsTwoModes(t *testing.T) {
	var samples []engine.Sample
	for i := range 40 {
		ttft := 10*time.Millisecond + time.Duration(i%5)*time.Millisecond
		kind := "cached"
		if i%2 == 1 {
			ttft, kind = 2*time.Second+time.Duration(i%5)*10*time.Millisecond, "cold"
		}
		samples = append(samples, okSample(ttft, ttft+time.Second, map[string]string{"cache": kind, "team": "a"}))
	}
	text, r := collect(t, plan.SLO{}, samples...)
	if !strings.Contains(text, "\ntail:") {
		t.Fatalf("no tail chart for 40 samples:\n%s", text)
	}
	rows := tailRows(&r.Stages[0])
	if got, max := len(rows), tailMaxRows; got > max {
		t.Errorf("tail has %d rows, want at most %d:\n%s", got, max, text)
	}
	var bars []bool
	for _, cells := range rows {
		bars = append(bars, strings.TrimSpace(cells[1]) != "") // TTFT's bar
	}
	if got, want := groups(bars), 2; got != want {
		t.Errorf("TTFT bars form %d groups, want %d (two modes with a gap):\n%s", got, want, text)
	}
	if !strings.Contains(text, "by tag cache") || strings.Contains(text, "by tag team") {
		t.Errorf("want a breakdown by cache (2 values) and none by team (1 value):\n%s", text)
	}
}

// groups counts runs of true.
func groups(bs []bool) int {
	n := 0
	for i, b := range bs {
		if b && (i == 0 || !bs[i-1]) {
			n++
		}
	}
	return n
}

// TestTextFromCollectorRows checks which optional rows and columns a real
// summary brings out.
func TestTextFromCollectorRows(t *testing.T) {
	plain := okSample(50*time.Millisecond, time.Second, nil)
	thinking := plain
	thinking.TTFC, thinking.ReasoningTokens = 900*time.Millisecond, 40
	perToken := plain
	perToken.ITL, perToken.TokenITL = []time.Duration{20 * time.Millisecond}, []time.Duration{5 * time.Millisecond, 5 * time.Millisecond}
	dirty := plain
	dirty.Dirty = "empty"
	for _, tc := range []struct {
		name         string
		slo          plan.SLO
		samples      []engine.Sample
		want, absent []string
	}{
		{"plain", plan.SLO{}, []engine.Sample{plain, plain},
			nil, []string{"TTFC", "ITL/tok", "goodput", "dirty", "tail:"}},
		{"reasoning", plan.SLO{}, []engine.Sample{plain, thinking},
			[]string{"TTFC"}, []string{"ITL/tok"}},
		{"per-token gaps", plan.SLO{}, []engine.Sample{perToken},
			[]string{"ITL/tok", "ITL = gap between chunks"}, []string{"TTFC"}},
		{"goodput", plan.SLO{TTFT: 100 * time.Millisecond}, []engine.Sample{plain, plain},
			[]string{"goodput/s", "good %", "0.20", "100.0%", "met the SLO TTFT ≤ 100ms;"}, nil},
		{"dirty", plan.SLO{}, []engine.Sample{plain, dirty},
			[]string{"dirty", "deliberately malformed"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, _ := collect(t, tc.slo, tc.samples...)
			assertText(t, text, tc.want, tc.absent)
		})
	}
}

func TestCompactBuckets(t *testing.T) {
	bk := func(pairs ...float64) []metrics.Bucket {
		var out []metrics.Bucket
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, metrics.Bucket{LeMS: pairs[i], Count: int64(pairs[i+1])})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []metrics.Bucket
		max  int
		want string
	}{
		{"nil", nil, 10, "[]"},
		{"all empty", bk(1, 0, 2, 0), 10, "[]"},
		{"fits", bk(1, 3, 1.5, 0, 2, 4), 10, "[{1 3} {1.5 0} {2 4}]"},
		{"trims empty ends", bk(1, 0, 1.5, 3, 2, 4, 3, 0), 10, "[{1.5 3} {2 4}]"},
		{"merges pairs", bk(1, 1, 1.5, 2, 2, 3, 3, 4, 5, 5), 3, "[{1.5 3} {3 7} {5 5}]"},
		{"merges triples", bk(1, 1, 1.5, 1, 2, 1, 3, 1, 5, 1, 7, 1, 10, 1), 3, "[{2 3} {7 3} {10 1}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := compactBuckets(tc.in, tc.max)
			if s := fmt.Sprint(got); s != tc.want {
				t.Errorf("compactBuckets = %s, want %s", s, tc.want)
			}
			if len(got) > tc.max {
				t.Errorf("%d buckets, want at most %d", len(got), tc.max)
			}
		})
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		n, top int64
		want   string
	}{
		{0, 10, "    "},
		{10, 10, "████"},
		{5, 10, "██  "},
		{1, 1000, "▏   "}, // tiny but present
		{3, 32, "▍   "},   // 3/8 of a cell
		{20, 10, "████"},  // never wider than width
		{5, 0, "    "},    // no scale: no bar
		{9, 10, "███▌"},   // 3.6 cells, to the eighth below
	} {
		if got := bar(tc.n, tc.top, 4); got != tc.want {
			t.Errorf("bar(%d, %d, 4) = %q, want %q", tc.n, tc.top, got, tc.want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		width    int
	}{
		{"short", "  ! short\n", 20},
		{"one two three four", "  ! one two\n    three four\n", 14},
		{"one two three four", "  ! one two\n    three\n    four\n", 12},
		{"averyveryverylongword x", "  ! averyveryverylongword\n    x\n", 10},
		{"", "  ! \n", 10},
	} {
		if got := wrap(tc.in, "  ! ", "    ", tc.width); got != tc.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestUnreliableLegacy: a result written before Dist.Unreliable existed
// still stars its p99 through LowSamples, and nothing else.
func TestUnreliableLegacy(t *testing.T) {
	d := metrics.Dist{Count: 50, P50: 10, P99: 40, LowSamples: true}
	for p, want := range map[string]bool{"p50": false, "p90": false, "p99": true} {
		if got := unreliable(d, p); got != want {
			t.Errorf("unreliable(legacy, %s) = %v, want %v", p, got, want)
		}
	}
	if got, want := fmtCI(d, d.CI.P99), "-"; got != want {
		t.Errorf("fmtCI without intervals = %q, want %q", got, want)
	}
}

func TestSLOFrom(t *testing.T) {
	if got := result.SLOFrom(plan.SLO{}); got != nil {
		t.Errorf("SLOFrom(zero) = %+v, want nil", got)
	}
	got := result.SLOFrom(plan.SLO{TTFT: 1500 * time.Microsecond, E2E: 20 * time.Second})
	if want := (result.SLO{TTFTMS: 1.5, E2EMS: 20000}); got == nil || *got != want {
		t.Errorf("SLOFrom = %+v, want %+v", got, want)
	}
	if got, want := goodputNote(nil), "met the scenario's SLO"; !strings.Contains(got, want) {
		t.Errorf("goodputNote(nil) = %q, want it to contain %q", got, want)
	}
}

func TestClientLine(t *testing.T) {
	for _, tc := range []struct {
		c    engine.ClientCheck
		want string
	}{
		{engine.ClientCheck{CPUPercent: 45, Cores: 2, SchedLatencyP99MS: 0.2, GCPauseP99MS: 0.1},
			"client: CPU 45% (of 200% for 2 cores), scheduling p99 0.2 ms, GC pauses p99 0.1 ms"},
		{engine.ClientCheck{CPUPercent: 99.6, Cores: 1, SchedLatencyP99MS: 12.34, GCPauseP99MS: 0.004, Bound: true},
			"client: CPU 100% (of 100% for 1 core), scheduling p99 12.3 ms, GC pauses p99 0 ms  ! CLIENT-BOUND"},
		{engine.ClientCheck{CPUPercent: 7, Cores: 2, SchedLatencyP99MS: 4.1, GCPauseP99MS: 0.08, MachineMeasured: true, MachineCores: 2,
			MachineCPUPercent: 97, OwnSharePercent: 3.6, RunQueue: 5.2, MachineBusy: true},
			"client: CPU 7% (of 200% for 2 cores), scheduling p99 4.1 ms, GC pauses p99 0.08 ms; " +
				"machine: CPU 97% busy (llmload 4% of it), steal 0%, run queue 5.2 on 2 cores  ! MACHINE-BUSY"},
		// The run: llama.cpp on loopback, nothing else running.
		{engine.ClientCheck{CPUPercent: 12, Cores: 2, SchedLatencyP99MS: 0.3, GCPauseP99MS: 0.05, MachineMeasured: true, MachineCores: 2,
			MachineCPUPercent: 60, OwnSharePercent: 11, RunQueue: 4.5,
			Server: &engine.ServerCPU{CPUPercent: 95, MachinePercent: 54, OwnPercent: 6, ServerPercent: 46, OtherPercent: 2}},
			"client: CPU 12% (of 200% for 2 cores), scheduling p99 0.3 ms, GC pauses p99 0.05 ms; " +
				"machine: CPU 54% on average (highest 60%): llmload 6%, server (llama-server pid 1234) 46%, other 2%, steal 0%, run queue 4.5 on 2 cores"},
		{engine.ClientCheck{CPUPercent: 10, Cores: 2, SchedLatencyP99MS: 4, MachineMeasured: true, MachineCores: 2, MachineCPUPercent: 52,
			Server: &engine.ServerCPU{CPUPercent: 190, MachinePercent: 50, OwnPercent: 5, ServerPercent: 95, Disagrees: true, Reasons: []string{"waited"}}},
			"client: CPU 10% (of 200% for 2 cores), scheduling p99 4.0 ms, GC pauses p99 0 ms; " +
				"machine: CPU 50% on average (highest 52%): llmload 5%, server (llama-server pid 1234) 95%, other 0% " +
				"(llmload and the server add up to 100%, more than the machine counted: the measurements disagree), steal 0%, run queue 0.0 on 2 cores; " +
				"llmload waited for cores the server held (not flagged: the server's work is what is measured)"},
	} {
		if got := clientLine(&tc.c, "llama-server pid 1234"); got != tc.want {
			t.Errorf("clientLine = %q, want %q", got, tc.want)
		}
	}
}

// assertText checks that text holds every want and none of absent.
func assertText(t *testing.T, text string, want, absent []string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	for _, s := range absent {
		if strings.Contains(text, s) {
			t.Errorf("text contains %q:\n%s", s, text)
		}
	}
}

// TestTextNamesKneeAndCliff: the 4 s simulator sweep's short prompts'
// p99 rose ×5.4 on 2 and 6 samples, one slow request: no tag cliff.
func TestTextNamesKneeAndCliff(t *testing.T) {
	r := readTestdata(t, "r4.json")
	text := string(render(t, Text(r)))
	assertText(t, text, []string{"throughput knee at 8 VUs", "tentative TTFT cliff at 16 VUs: p50 ×81.4 for ×2 load",
		"  tentative: TTFT p50 flagged unreliable at"}, []string{"prompt=short:"})
}

// TestLagBoundsAgree: a stage the warnings say fell behind its schedule
// is the one whose findings are suspect for it, and no other.
func TestLagBoundsAgree(t *testing.T) {
	if analysis.LagSuspectMS != result.LagWarnMS {
		t.Errorf("analysis.LagSuspectMS = %g, report.LagWarnMS = %g: one bound, two values", analysis.LagSuspectMS, result.LagWarnMS)
	}
}

// TestTextRecordedLlamaCpp is issue 12's done-when: the recorded llama.cpp
// sweep reads saturated from the first level, with a TTFT cliff at 8 VUs.
func TestTextRecordedLlamaCpp(t *testing.T) {
	r := readTestdata(t, "llamacpp-sweep-4slots.json")
	assertText(t, string(render(t, Text(r))), []string{
		"throughput flat from the first level: saturated at 1 VU (1.81 req/s",
		"tentative TTFT cliff at 8 VUs: p50 ×16.4 for ×2 load (129 ms → 2.1 s): requests queue\n",
		"prompt=short: tentative TTFT cliff at 4 VUs: p99 ×72.4",
	}, []string{"server agrees", "server disagrees"})
}

// TestTextServerReading: each finding is followed by what the server's
// queue gauges say of it, in the server's words.
func TestTextServerReading(t *testing.T) {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var stages []metrics.StageSummary
	var tt, waiting, running []float64
	for i, vus := range []int{1, 2, 4, 8} {
		st := metrics.StageSummary{Scenario: "sweep", Stage: fmt.Sprintf("c%d", vus), Index: i, VUs: vus, Complete: true,
			Start: start.Add(time.Duration(10+20*i) * time.Second), DurationS: 20, PlannedS: 20, ReqPerSec: float64(vus),
			TTFT: metrics.Dist{Count: 2000, P50: []float64{50, 51, 52, 400}[i], P90: 60, P99: 70}}
		st.End = st.Start.Add(20 * time.Second)
		stages = append(stages, st)
		// The server's queue stays empty and its batch follows the VUs.
		tt, waiting, running = append(tt, float64(20+20*i)), append(waiting, 0), append(running, float64(vus))
	}
	r := result.New(result.Meta{Start: start, Complete: true}, &metrics.Summary{Stages: stages})
	r.ServerMetrics = &servermetrics.Result{Series: []servermetrics.Series{
		{Name: "vllm:num_requests_running", T: tt, V: running}, {Name: "vllm:num_requests_waiting", T: tt, V: waiting}}}
	assertText(t, string(render(t, Text(r))), []string{
		"no throughput knee within the sweep (throughput kept growing)\n  server agrees: queue empty (vllm:num_requests_waiting 0 at every level)\n",
		"TTFT cliff at 8 VUs: p50 ×7.69 for ×2 load (52 ms → 400 ms): requests queue\n" +
			"  server disagrees: queue empty (vllm:num_requests_waiting 0 at every level) and running not at a plateau\n" +
			"    (vllm:num_requests_running 1 → 8): the delay may be client-side or in the network\n",
	}, nil)
}

func TestTextNotesServerMetrics(t *testing.T) {
	r := result.New(result.Meta{Complete: true}, nil)
	r.ServerMetrics = &servermetrics.Result{URL: "http://127.0.0.1:8000/metrics", Scrapes: 5, Failures: 2,
		Errors: []string{"HTTP 500 Internal Server Error (2×)"}, Series: []servermetrics.Series{{Name: "vllm:num_requests_waiting"}}}
	assertText(t, string(render(t, Text(r))), []string{"server metrics: 1 series from http://127.0.0.1:8000/metrics (5 scrapes, 2 failed: HTTP 500"}, nil)
}

func TestTextTentativeAndTagCliffs(t *testing.T) {
	r := result.New(result.Meta{Complete: true}, &metrics.Summary{Stages: []metrics.StageSummary{{Scenario: "sweep", Stage: "c1", VUs: 1, Requests: 1, OK: 1}}})
	r.Analysis = analysis.Analysis{Sweeps: []analysis.SweepAnalysis{{Scenario: "sweep",
		Knee: analysis.Finding{Kind: analysis.KindKnee, Found: true, Text: "throughput flat from the first level: saturated at 1 VU"},
		Cliff: analysis.Finding{Kind: analysis.KindCliff, Found: true, Text: "tentative TTFT cliff at 8 VUs: p50 ×16.4 for ×2 load",
			Tentative: "TTFT p50 flagged unreliable at c4 (39 samples), c8 (44 samples)"},
		TagCliffs: []analysis.Finding{{Kind: analysis.KindCliff, Found: true, Tag: "prompt=short", Text: "prompt=short: TTFT cliff at 4 VUs"}},
	}}}
	assertText(t, string(render(t, Text(r))), []string{
		"throughput flat from the first level: saturated at 1 VU\ntentative TTFT cliff at 8 VUs",
		"  tentative: TTFT p50 flagged unreliable at c4 (39 samples), c8 (44 samples); a reading, not a fact\nprompt=short: TTFT cliff at 4 VUs\n",
	}, nil)
}

// TestTextRereadsStaleAnalysis: a file written by an older llmload is
// reported with today's rules, not the reading stored in it.
func TestTextRereadsStaleAnalysis(t *testing.T) {
	r := readTestdata(t, "r4.json")
	r.Analysis = analysis.Analysis{Sweeps: []analysis.SweepAnalysis{{Scenario: "sweep",
		Cliff: analysis.Finding{Kind: analysis.KindCliff, Text: "no latency cliff within the sweep (stale)"}}}}
	assertText(t, string(render(t, Text(r))), []string{"TTFT cliff at 16 VUs: p50"}, []string{"(stale)"})
}

// readTestdata reads a result file from testdata.
func readTestdata(t *testing.T, name string) *result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
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

// The drift line gives each figure's early and late level and says
// whether the process stayed flat; it is absent when nothing was judged.
func TestWriteDrift(t *testing.T) {
	fig := func(e, l float64, g bool) *result.DriftFigure {
		return &result.DriftFigure{Early: e, Late: l, ChangePercent: 100 * (l - e) / e, Growing: g}
	}
	tests := []struct {
		name string
		p    *result.Process
		want []string
	}{
		{"no process", nil, nil},
		{"too short to judge", &result.Process{}, nil},
		{"flat", &result.Process{Drift: &result.Drift{FromS: 24, ToS: 3725, RSSMB: fig(41.25, 42, false),
			HeapLiveMB: fig(9.1, 9.3, false), Goroutines: fig(612, 612, false), OpenFiles: fig(207, 207, false)}},
			[]string{"from 0:24 to 1:02:05", "RSS 41.2 → 42.0 MB (+2%)", "live heap 9.1 → 9.3 MB (+2%)", "goroutines 612 → 612 (+0%)",
				"open files 207 → 207 (+0%)", "flat within 10%"}},
		{"growing, open files unmeasured", &result.Process{Drift: &result.Drift{FromS: 60, ToS: 300, RSSMB: fig(100, 150, true),
			HeapLiveMB: fig(20, 40, true), Goroutines: fig(600, 601, false)}},
			[]string{"from 1:00 to 5:00", "RSS 100.0 → 150.0 MB (+50%)", "! GROWING: RSS, live heap"}},
		{"beside the simulator", &result.Process{WithSimulator: true, Drift: &result.Drift{FromS: 60, ToS: 300, HeapLiveMB: fig(20, 40, true)}},
			[]string{"! GROWING: live heap (the built-in simulator runs in this process"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeDrift(&b, tt.p)
			got := strings.Join(strings.Fields(b.String()), " ")
			if len(tt.want) == 0 && got != "" {
				t.Errorf("wrote %q, want nothing", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if strings.Contains(got, "open files") && tt.p.Drift.OpenFiles == nil {
				t.Errorf("%q names an unmeasured figure", got)
			}
		})
	}
}
