package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/threshold"
)

// sweepStages is a closed-model sweep whose throughput flattens after 8
// VUs while TTFT breaks away: a knee at c8.
func sweepStages() []metrics.StageSummary {
	levels := []struct {
		vus             int
		rps, ttft, e2e  float64
		shortMS, longMS float64
	}{
		{1, 0.9, 30, 1000, 20, 60}, {2, 1.8, 31, 1000, 20, 62}, {4, 3.5, 33, 1000, 21, 66},
		{8, 6.8, 40, 1050, 25, 90}, {16, 7.2, 900, 1900, 700, 1500},
	}
	var out []metrics.StageSummary
	for i, l := range levels {
		ok := int64(l.rps * 60)
		s := stage("sweep", fmt.Sprintf("c%d", l.vus), i, l.vus, 60*float64(i), 60, ok, 0, l.ttft)
		s.PlannedS = 60
		switch l.vus {
		case 8: // woken late by a busy machine
			s.DurationS = 61.5
		case 16:
			s.Client = &engine.ClientCheck{CPUPercent: 7, Cores: 2, SchedLatencyP99MS: 4.1, GCPauseP99MS: 0.08,
				MachineMeasured: true, MachineCores: 2, MachineCPUPercent: 97, OwnSharePercent: 3.6, RunQueue: 5.2,
				SaturatedSamples: 41, Samples: 60, MachineBusy: true, MachineReasons: []string{
					"the machine's CPU was over 90% busy in 41 of 60 samples (highest 97%), llmload's share of the busy CPU 4%: other processes took the cores"}}
		}
		s.E2E = histDist(ok, l.e2e, l.e2e)
		s.TTFT = histDist(ok, l.ttft, l.shortMS, l.longMS)
		s.ByTag = map[string]map[string]metrics.TagSummary{
			"prompt": {
				"short":    {Requests: ok / 2, OK: ok / 2, TTFT: histDist(ok/2, l.shortMS, l.shortMS), E2E: histDist(ok/2, l.e2e*0.7, l.e2e*0.7)},
				"<script>": {Requests: ok - ok/2, OK: ok - ok/2, TTFT: histDist(ok-ok/2, l.longMS, l.longMS), E2E: histDist(ok-ok/2, l.e2e*1.3, l.e2e*1.3)},
			},
		}
		out = append(out, s)
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// richResult is the full fixture plus a sweep, a long time series and
// thresholds: every section of the HTML report.
func richResult() *result.Result {
	meta, sum := fullFixture()
	sum.Stages = append(sum.Stages, sweepStages()...)
	sum.TimeSeries = nil
	for t := int64(0); t < 300; t++ {
		load := float64(t/60 + 1)
		sum.TimeSeries = append(sum.TimeSeries, metrics.Point{T: t, Starts: int64(load), Completions: int64(load),
			Errors: t % 97 / 96, InFlight: int64(min(load*2, 16)), OutputTokPerSec: 150 * min(load, 5),
			TTFTP50: ptr(30 * load), TTFTP99: ptr(90 * load * load)})
	}
	r := result.New(meta, sum)
	r.ServerMetrics = &servermetrics.Result{URL: "http://127.0.0.1:8000/metrics", EveryS: 5, Scrapes: 60, Failures: 1,
		Errors: []string{"HTTP 503 (1×)"}, Series: []servermetrics.Series{
			{Name: "vllm:num_requests_waiting", Unit: servermetrics.UnitRequests, T: []float64{0, 100, 200, 300}, V: []float64{0, 0, 3, 9}},
			{Name: "vllm:gpu_cache_usage_perc", Help: "KV-cache usage", Unit: servermetrics.UnitFraction,
				T: []float64{0, 100, 200, 300}, V: []float64{0.1, 0.4, 0.9, 0.98}},
		}}
	r.Thresholds = fullThresholds()
	r.Thresholds = append(r.Thresholds, threshold.Result{Expr: "errors.rate", Kind: "rate", Passed: true,
		Outcomes: []threshold.Outcome{{Condition: "rate<0.05", Agg: "rate", Observed: 0.01, Samples: 900, Passed: true}}})
	return r
}

// TestRichTextGolden: the text of a sweep whose knee and cliff come from a
// slipped window and a machine-busy stage.
func TestRichTextGolden(t *testing.T) {
	r := richResult()
	golden(t, "rich.txt.golden", render(t, Text(r)))
}

func TestHTMLGolden(t *testing.T) {
	golden(t, "rich.html.golden", render(t, HTML(richResult())))
}

func TestHTMLDeterministic(t *testing.T) {
	first := render(t, HTML(richResult()))
	for range 3 {
		if got := render(t, HTML(richResult())); !bytes.Equal(got, first) {
			t.Fatal("two renderings of one result differ")
		}
	}
}

// wantCharts are the data-chart names the rich fixture must draw.
var wantCharts = []string{
	"sweep-0-throughput", "sweep-0-tokens", "sweep-0-latency", "sweep-0-server",
	"ts-inflight", "ts-tokens", "ts-errors", "ts-ttft",
	"hist-0-ttft", "hist-0-e2e", "hist-3-ttft-by-0", "hist-7-e2e-by-0", "server-0", "server-1",
}

func TestHTMLContent(t *testing.T) {
	page := string(render(t, HTML(richResult())))
	for _, name := range wantCharts {
		if !strings.Contains(page, `data-chart="`+name+`"`) {
			t.Errorf("no chart %q", name)
		}
	}
	for _, want := range []string{
		"<title>llmload report: scenarios/mixed.lua</title>",
		"Run incomplete", "knee c8", "throughput knee at 8 VUs", "knee rule:",
		"✗", "✓", "conn_refused", "overlong", "goodput", "&lt;script&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>", "hunter2", "sk-live-123", "ZgotmplZ", "NaN", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

// TestHTMLSweepLines: the latency chart draws the p90 the cliff rule reads
// and each tag value's curve where its cliff was found, with the rules
// written under the charts.
func TestHTMLSweepLines(t *testing.T) {
	page := string(render(t, HTML(readTestdata(t, "llamacpp-sweep-4slots.json"))))
	latency := regexp.MustCompile(`(?s)data-chart="sweep-0-latency".*?</figure>`).FindString(page)
	for _, want := range []string{">TTFT p90<", ">E2E p90<", ">prompt=medium TTFT p99<", ">prompt=short TTFT p99<"} {
		if !strings.Contains(latency, want) {
			t.Errorf("latency chart lacks the line %q", want)
		}
	}
	if strings.Contains(latency, "prompt=long") {
		t.Error("latency chart draws prompt=long, which has no cliff")
	}
	for _, want := range []string{"<li>knee rule: the last load level", "<li>cliff rule: the first load level",
		"<li>tag cliff rule: the cliff rule; on a tag value&#39;s curve"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `data-chart="sweep-0-server"`) {
		t.Error("a server chart without the server's queue gauges")
	}
}

// TestHTMLOpenSweep: an open-model sweep draws the achieved rate the knee
// rule read against the offered one.
func TestHTMLOpenSweep(t *testing.T) {
	var stages []metrics.StageSummary
	for i, rate := range []float64{10, 20, 40} {
		stages = append(stages, metrics.StageSummary{Scenario: "open", Stage: fmt.Sprintf("r%g", rate), Index: i,
			TargetRate: rate, AchievedRate: []float64{10, 20, 30}[i], ReqPerSec: []float64{10, 20, 30}[i], DurationS: 60})
	}
	page := string(render(t, HTML(result.New(result.Meta{Complete: true}, &metrics.Summary{Stages: stages}))))
	chart := regexp.MustCompile(`(?s)data-chart="sweep-0-throughput".*?</figure>`).FindString(page)
	for _, want := range []string{">achieved iterations/s (knee rule)<", ">offered<"} {
		if !strings.Contains(chart, want) {
			t.Errorf("throughput chart lacks the line %q", want)
		}
	}
	if !strings.Contains(page, "<li>knee rule: open model:") {
		t.Error("page lacks the open-model knee rule")
	}
}

func TestHTMLRendersWhatExists(t *testing.T) {
	meta, sum := singleFixture()
	for name, r := range map[string]*result.Result{
		"empty":   result.New(result.Meta{}, nil),
		"single":  result.New(meta, sum),
		"no hist": result.New(meta, &metrics.Summary{Stages: []metrics.StageSummary{{Scenario: "s", Stage: "x"}}}),
	} {
		page := string(render(t, HTML(r)))
		if !strings.Contains(page, "</html>") {
			t.Errorf("%s: page does not end", name)
		}
		if got, want := strings.Contains(page, "Run incomplete"), !r.Run.Complete; got != want {
			t.Errorf("%s: incomplete banner %v, want %v", name, got, want)
		}
	}
}

func TestHTMLFromEarlyFile(t *testing.T) {
	r := readTestdata(t, "v1_early.json")
	if got, want := len(r.Stages), 4; got != want {
		t.Fatalf("stages = %d, want %d", got, want)
	}
	page := string(render(t, HTML(r)))
	for _, name := range []string{"sweep-0-latency", "ts-ttft", "hist-0-ttft"} {
		if !strings.Contains(page, `data-chart="`+name+`"`) {
			t.Errorf("no chart %q", name)
		}
	}
	if text := render(t, Text(r)); !bytes.Contains(text, []byte("latency ms")) {
		t.Errorf("text summary lacks the latency table:\n%s", text)
	}
	if csv := render(t, StagesCSV(r)); bytes.Count(csv, []byte("\n")) != 5 {
		t.Errorf("CSV has %d lines, want 5", bytes.Count(csv, []byte("\n")))
	}
}

// chromium finds a headless-capable browser, or "".
func chromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium not installed: apt-get install chromium")
	}
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.png")
	if err := os.WriteFile(page, render(t, HTML(richResult())), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, dir, "--dump-dom", "file://"+page)
	for _, name := range wantCharts {
		re := regexp.MustCompile(`(?s)<svg[^>]*data-chart="` + name + `".*?</svg>`)
		svg := re.FindString(dom)
		if svg == "" {
			t.Errorf("rendered DOM has no chart %q", name)
			continue
		}
		if !strings.Contains(svg, "<path") && !strings.Contains(svg, `class="bar"`) {
			t.Errorf("chart %q has no path or bar", name)
		}
	}
	for _, want := range []string{"knee c8", "&lt;script&gt;"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	runChromium(t, bin, dir, "--screenshot="+shot, "--window-size=1400,4000", "file://"+page)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 50_000 {
		t.Errorf("screenshot missing or nearly empty: %v", err)
	}
	if out := os.Getenv("LLMLOAD_HTML_SHOT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
}

// runChromium runs the browser headless, offline and without a profile,
// and returns its standard output.
func runChromium(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

// TestTimeSeriesGaps: seconds without a TTFT — null in new files, 0 in
// older ones — are gaps in the TTFT line, never points at 0 ms.
func TestTimeSeriesGaps(t *testing.T) {
	meta, sum := fullFixture()
	sum.TimeSeries = []metrics.Point{
		{T: 0, Starts: 2, TTFTP50: ptr(40), TTFTP99: ptr(90)},
		{T: 1},                                   // null: nothing started
		{T: 2, TTFTP50: ptr(0), TTFTP99: ptr(0)}, // an older file's 0
		{T: 3, Starts: 1, TTFTP50: ptr(50), TTFTP99: ptr(80)},
		{T: 4, Starts: 1, TTFTP50: ptr(45), TTFTP99: ptr(70)},
	}
	charts := timeSeriesCharts(result.New(meta, sum), stageLabels(sum.Stages))
	ttft := string(charts[len(charts)-1].SVG)
	if strings.Contains(ttft, "NaN") {
		t.Fatal("the TTFT chart holds NaN")
	}
	// p50 and p99 each: one lone point (t = 0, not drawn) and one line
	// from t = 3 to 4; no line crosses the gap.
	if got, want := strings.Count(ttft, `class="series"`), 2; got != want {
		t.Errorf("%d TTFT lines, want %d:\n%s", got, want, ttft)
	}
}
