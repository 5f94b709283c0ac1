package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The Prometheus tests run a real Prometheus (Debian's package, which
// .ci/run installs and names in LLMLOAD_PROMETHEUS) on a free loopback
// port, with a config and data directory of their own, and read back
// through its HTTP API what llmload exported to it. Outside CI they skip,
// saying how to get it, when it is absent.

// prometheusBin is the Prometheus server binary, or skips the test.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real Prometheus")
	}
	bin := os.Getenv("LLMLOAD_PROMETHEUS")
	if bin == "" {
		bin, _ = exec.LookPath("prometheus")
	}
	if bin != "" {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no Prometheus (LLMLOAD_PROMETHEUS=%q, none on PATH): .ci/run installs Debian's prometheus package", os.Getenv("LLMLOAD_PROMETHEUS"))
	}
	t.Skip("no Prometheus: apt-get install prometheus (Debian's package; its service need not run), or set LLMLOAD_PROMETHEUS to a prometheus binary")
	return ""
}

// promServer is a Prometheus started for one test.
type promServer struct {
	base string // http://127.0.0.1:P
	proc *started
}

// promScrapeEvery is the scrape interval: short, so a test waits a second
// or two for a scrape rather than Prometheus' default minute.
const promScrapeEvery = "1s"

// startPrometheus starts Prometheus with its remote-write receiver and
// native histograms on, scraping each of targets (host:port, /metrics)
// every second, and waits until it is ready. It is stopped at the test's
// end.
func startPrometheus(t *testing.T, targets ...string) *promServer {
	t.Helper()
	bin := prometheusBin(t)
	dir := t.TempDir()
	config := "global:\n  scrape_interval: " + promScrapeEvery + "\n  scrape_timeout: " + promScrapeEvery + "\nscrape_configs:\n"
	for i, target := range targets {
		config += fmt.Sprintf("  - job_name: job%d\n    static_configs:\n      - targets: [%q]\n", i, target)
	}
	if len(targets) == 0 {
		config += "  []\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := &promServer{base: "http://" + addr}
	p.proc = startCommand(t, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--web.enable-remote-write-receiver",
		// 2.42 takes native histograms (remote-written or scraped in the
		// protobuf format) only behind this flag.
		"--enable-feature=native-histograms",
		"--log.level=warn")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-p.proc.exited:
			t.Fatalf("prometheus exited (code %d):\n%s", p.proc.code, p.proc.stderr.String())
		default:
		}
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within a minute:\n%s", p.proc.stderr.String())
		}
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promSample is one element of an instant vector: its labels, and a value
// or a native histogram.
type promSample struct {
	Metric    map[string]string
	Value     float64
	Histogram *promHistogram
}

// promHistogram is a native histogram as the HTTP API gives it.
type promHistogram struct {
	Count, Sum float64
	Buckets    []promBucket
}

// promBucket is one bucket of a native histogram: (Lower, Upper] for the
// positive buckets Prometheus' API writes with boundary rule 0.
type promBucket struct{ Lower, Upper, Count float64 }

// query runs an instant PromQL query now and returns its vector.
func (p *promServer) query(expr string) ([]promSample, error) {
	resp, err := http.Get(p.base + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric    map[string]string `json:"metric"`
				Value     []any             `json:"value"`
				Histogram []json.RawMessage `json:"histogram"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: a %s, want a vector", expr, body.Data.ResultType)
	}
	var out []promSample
	for _, r := range body.Data.Result {
		s := promSample{Metric: r.Metric}
		switch {
		case len(r.Value) == 2:
			str, _ := r.Value[1].(string)
			if s.Value, err = strconv.ParseFloat(str, 64); err != nil {
				return nil, fmt.Errorf("%s: value %v", expr, r.Value[1])
			}
		case len(r.Histogram) == 2:
			if s.Histogram, err = parseHistogram(r.Histogram[1]); err != nil {
				return nil, fmt.Errorf("%s: %w", expr, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// parseHistogram reads {"count": "n", "sum": "s", "buckets": [[rule,
// "lo", "hi", "n"], ...]}, every number a string.
func parseHistogram(raw json.RawMessage) (*promHistogram, error) {
	var h struct {
		Count, Sum string
		Buckets    [][4]any
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, err
	}
	num := func(v any) float64 {
		s, _ := v.(string)
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	out := &promHistogram{Count: num(h.Count), Sum: num(h.Sum)}
	for _, b := range h.Buckets {
		out.Buckets = append(out.Buckets, promBucket{Lower: num(b[1]), Upper: num(b[2]), Count: num(b[3])})
	}
	return out, nil
}

// byLabel is a vector's values keyed by one label's value.
func byLabel(v []promSample, label string) map[string]float64 {
	m := map[string]float64{}
	for _, s := range v {
		m[s.Metric[label]] = s.Value
	}
	return m
}

// waitFor polls expr until its values by label equal want exactly (a
// scrape, or a push, may still be on its way) and fails after a minute
// with what it saw last.
func (p *promServer) waitFor(t *testing.T, expr, label string, want map[string]float64) {
	t.Helper()
	var got map[string]float64
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		v, err := p.query(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got = byLabel(v, label); equalCounts(got, want) {
			return
		}
	}
	t.Fatalf("%s by %s: Prometheus has %v, want %v", expr, label, got, want)
}

func equalCounts(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// scalar runs expr and returns its only value, failing otherwise.
func (p *promServer) scalar(t *testing.T, expr string) float64 {
	t.Helper()
	v, err := p.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 {
		t.Fatalf("%s: %d samples, want 1: %+v", expr, len(v), v)
	}
	return v[0].Value
}

// TestInPromBucket: the bucket check passes a PromQL quantile in the
// bucket of llmload's own percentile (or the next one when the two
// quantiles' ranks straddle a bound) and fails any other.
func TestInPromBucket(t *testing.T) {
	seven := []promBucket{{0, 0.1, 2}, {0.1, 0.2, 4}, {0.2, 0.5, 1}, {0.5, math.Inf(1), 0}}
	// 0.6·7 = 4.2: llmload takes the 4th value, in (0.1, 0.2]; Prometheus
	// the bucket of the 5th, (0.2, 0.5].
	straddle := []promBucket{{0, 0.1, 2}, {0.1, 0.2, 2}, {0.2, 0.5, 3}, {0.5, math.Inf(1), 0}}
	for _, tc := range []struct {
		name     string
		bs       []promBucket
		q        float64
		own, got float64
		ok       bool
	}{
		{"same bucket", seven, 0.5, 0.15, 0.1375, true},
		{"own elsewhere", seven, 0.5, 0.3, 0.1375, false},
		{"PromQL elsewhere", seven, 0.5, 0.15, 0.25, false},
		{"own on a bound within HDR's precision", seven, 0.5, 0.2002, 0.1375, true},
		{"own beyond HDR's precision", seven, 0.5, 0.201, 0.1375, false},
		{"ranks straddle a bound", straddle, 0.6, 0.18, 0.22, true},
		{"beyond the next bucket", straddle, 0.6, 0.18, 0.6, false},
		{"p99 in the last finite bucket", seven, 0.99, 0.4, 0.47, true},
	} {
		if err := inPromBucket(tc.bs, tc.q, tc.own, tc.got); (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// exportScenario runs two closed-model stages of a few seconds on the
// built-in simulator, a share of them dirty and every answer checked, so
// that every series but the open models' has values.
const exportScenario = `local llm = require("llmload")
options = {
  export = { every = "1s" },
  dirty = { ratio = 0.2, kinds = { empty = 1 } },
  scenarios = {
    sweep = { executor = "ramping-vus", exec = "chat",
              stages = { { name = "s1", target = 2, duration = "3s" },
                         { name = "s2", target = 4, duration = "3s" } } },
  },
}
function chat(vu)
  local res = llm.chat { messages = { { role = "user", content = ("[req_%d] hello"):format(vu.request_id) } }, max_tokens = 20 }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
`

// exportResult is what the export tests read of a result file.
type exportResult struct {
	Run struct {
		RunID string `json:"run_id"`
	} `json:"run"`
	Stages []struct {
		Stage         string `json:"stage"`
		Requests      int64  `json:"requests"`
		OK            int64  `json:"ok"`
		Failed        int64  `json:"failed"`
		DirtyRequests int64  `json:"dirty_requests"`
		Iterations    int64  `json:"iterations"`
		TTFT          struct {
			Count    int64   `json:"count"`
			P50, P99 float64 // ms
		} `json:"ttft"`
	} `json:"stages"`
	Exports []struct {
		Kind      string `json:"kind"`
		Target    string `json:"target"`
		Pushes    int64  `json:"pushes"`
		Failures  int64  `json:"failures"`
		Scrapes   int64  `json:"scrapes"`
		LastError string `json:"last_error"`
	} `json:"exports"`
}

func readExportResult(t *testing.T, path string) exportResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r exportResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestE2EPrometheus runs one scenario that both remote-writes to a real
// Prometheus and serves --listen for it to scrape, then reads both copies
// back: the remote-written series carry no job label, the scraped ones
// the scrape job's. Each must hold the result file's counts exactly, and
// PromQL's quantiles must fall in the bucket of llmload's own. It runs
// twice: with classic buckets, and with native histograms (,native on
// both flags), which Prometheus 2.x then keeps instead of the buckets.
func TestE2EPrometheus(t *testing.T) {
	listen := freeAddr(t)
	p := startPrometheus(t, listen)
	for _, native := range []bool{false, true} {
		name, suffix := "classic", ""
		if native {
			name, suffix = "native", ",native"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			stdout, stderr, code := runBinary(t, nil, "run", writeScenario(t, exportScenario), "--seed", "7", "--out", out, "-q",
				"--export", "prometheus-rw="+p.base+"/api/v1/write"+suffix, "--listen", listen+suffix)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			res := readExportResult(t, out)
			if res.Run.RunID == "" {
				t.Fatal("no run id in the result")
			}
			if len(res.Stages) != 2 {
				t.Fatalf("%d stages, want 2", len(res.Stages))
			}
			if len(res.Exports) != 2 {
				t.Errorf("exports %+v, want remote-write and listen", res.Exports)
			}
			for _, e := range res.Exports {
				if e.Failures != 0 {
					t.Errorf("export %s %s: %d failures (%s)", e.Kind, e.Target, e.Failures, e.LastError)
				}
			}
			if native {
				// Prometheus 2.x keeps a histogram's native form only, so the
				// dashboard's fallback from the buckets is what shows it.
				if v, err := p.query(fmt.Sprintf(`llmload_ttft_seconds_bucket{run_id=%q}`, res.Run.RunID)); err != nil || len(v) > 0 {
					t.Errorf("classic buckets beside the native histograms: %d series (%v)", len(v), err)
				}
			}
			for _, path := range []struct{ name, job string }{{"remote-write", ""}, {"scrape", "job0"}} {
				t.Run(path.name, func(t *testing.T) {
					h := histogramQueries{sel: fmt.Sprintf(`run_id=%q, job=%q`, res.Run.RunID, path.job), native: native}
					checkCounts(t, p, h, res)
					checkQuantiles(t, p, h, res)
				})
			}
			t.Run("dashboard", func(t *testing.T) { checkDashboard(t, p, res) })
		})
	}
}

// histogramQueries are the PromQL of one copy of a run's TTFT histogram:
// classic buckets or a native histogram, under a selector of run and job.
type histogramQueries struct {
	sel    string
	native bool
}

// countByStage counts the TTFT observations of each stage.
func (h histogramQueries) countByStage() string {
	if h.native {
		return `histogram_count(sum by (stage) (llmload_ttft_seconds{` + h.sel + `}))`
	}
	return `sum by (stage) (llmload_ttft_seconds_count{` + h.sel + `})`
}

// quantile is the TTFT q-quantile of one stage.
func (h histogramQueries) quantile(q float64, stage string) string {
	if h.native {
		return fmt.Sprintf(`histogram_quantile(%g, sum(llmload_ttft_seconds{%s, stage=%q}))`, q, h.sel, stage)
	}
	return fmt.Sprintf(`histogram_quantile(%g, sum by (le) (llmload_ttft_seconds_bucket{%s, stage=%q}))`, q, h.sel, stage)
}

// buckets are one stage's TTFT buckets.
func (h histogramQueries) buckets(t *testing.T, p *promServer, stage string) []promBucket {
	if h.native {
		return p.nativeBuckets(t, fmt.Sprintf(`sum(llmload_ttft_seconds{%s, stage=%q})`, h.sel, stage))
	}
	return p.classicBuckets(t, fmt.Sprintf(`llmload_ttft_seconds_bucket{%s, stage=%q}`, h.sel, stage))
}

// checkCounts compares the per-stage counts in Prometheus with the result's.
func checkCounts(t *testing.T, p *promServer, h histogramQueries, res exportResult) {
	sel := h.sel
	requests, ok, dirty, streamed := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, s := range res.Stages {
		requests[s.Stage], ok[s.Stage], dirty[s.Stage] = float64(s.Requests), float64(s.OK), float64(s.DirtyRequests)
		streamed[s.Stage] = float64(s.TTFT.Count)
	}
	// The final counts arrive with the last push, or the last scrape: wait
	// for them, then every other count must be final too.
	p.waitFor(t, `sum by (stage) (llmload_requests_total{`+sel+`, dirty=""})`, "stage", requests)
	t.Logf("requests by stage %v, ok %v, dirty %v, streamed %v", requests, ok, dirty, streamed)
	for expr, want := range map[string]map[string]float64{
		`sum by (stage) (llmload_requests_total{` + sel + `, dirty="", status="ok"})`: ok,
		`sum by (stage) (llmload_requests_total{` + sel + `, dirty!=""})`:             dirty,
		`sum by (stage) (llmload_dirty_requests_total{` + sel + `})`:                  dirty,
		h.countByStage(): streamed,
	} {
		v, err := p.query(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := byLabel(v, "stage"); !equalCounts(got, want) {
			t.Errorf("%s: Prometheus has %v, the result %v", expr, got, want)
		}
	}
}

// checkQuantiles checks PromQL's TTFT p50 and p99 of each stage against
// llmload's own, bucket by bucket.
func checkQuantiles(t *testing.T, p *promServer, h histogramQueries, res exportResult) {
	for _, s := range res.Stages {
		bs := h.buckets(t, p, s.Stage)
		for _, q := range []struct {
			q   float64
			own float64 // s
		}{{0.5, s.TTFT.P50 / 1000}, {0.99, s.TTFT.P99 / 1000}} {
			got := p.scalar(t, h.quantile(q.q, s.Stage))
			t.Logf("stage %s TTFT p%g: llmload %.4f s, PromQL %.4f s", s.Stage, q.q*100, q.own, got)
			if err := inPromBucket(bs, q.q, q.own, got); err != nil {
				t.Errorf("stage %s TTFT p%g: %v", s.Stage, q.q*100, err)
			}
		}
	}
}

// inPromBucket checks PromQL's quantile got against llmload's percentile
// own (both in seconds), given a histogram's buckets in order. llmload's
// HDR histogram gives the value of rank ⌊q·n+0.5⌋; Prometheus
// interpolates within the bucket where rank q·n falls, which is the same
// bucket or, when the two ranks straddle a bound, the next. So own must
// lie in the bucket of its rank (the exported buckets hold the values
// llmload measured, to its 3 significant digits), and got between that
// bucket's lower bound and the upper bound of Prometheus' bucket.
func inPromBucket(bs []promBucket, q, own, got float64) error {
	var n float64
	for _, b := range bs {
		n += b.Count
	}
	at := func(rank float64) promBucket {
		var cum float64
		for _, b := range bs {
			if cum += b.Count; cum >= rank {
				return b
			}
		}
		return bs[len(bs)-1]
	}
	ob, pb := at(max(math.Floor(q*n+0.5), 1)), at(q*n)
	const hdr = 1e-3
	if own < ob.Lower*(1-hdr) || own > ob.Upper*(1+hdr) {
		return fmt.Errorf("llmload's %v is not in (%v, %v], the bucket of its rank among the %v exported values", own, ob.Lower, ob.Upper, n)
	}
	hi := pb.Upper
	if math.IsInf(hi, 1) {
		hi = pb.Lower // what histogram_quantile answers in the +Inf bucket
	}
	if got < ob.Lower || got > hi {
		return fmt.Errorf("PromQL's %v is outside [%v, %v], llmload's %v's bucket", got, ob.Lower, hi, own)
	}
	return nil
}

// classicBuckets are a classic histogram's buckets (from the le values of
// bucketSelector and their cumulative counts), in order, the first from 0
// as histogram_quantile takes it, +Inf last.
func (p *promServer) classicBuckets(t *testing.T, bucketSelector string) []promBucket {
	t.Helper()
	v, err := p.query("sum by (le) (" + bucketSelector + ")")
	if err != nil {
		t.Fatal(err)
	}
	var bs []promBucket
	for _, s := range v {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil {
			t.Fatalf("le %q: %v", s.Metric["le"], err)
		}
		bs = append(bs, promBucket{Upper: le, Count: s.Value})
	}
	if len(bs) == 0 {
		t.Fatalf("no buckets for %s", bucketSelector)
	}
	slices.SortFunc(bs, func(a, b promBucket) int { return cmp.Compare(a.Upper, b.Upper) })
	for i := len(bs) - 1; i > 0; i-- {
		bs[i].Lower, bs[i].Count = bs[i-1].Upper, bs[i].Count-bs[i-1].Count
	}
	return bs
}

// nativeBuckets are the buckets of the one native histogram expr gives,
// in order (empty ones left out, as the API leaves them).
func (p *promServer) nativeBuckets(t *testing.T, expr string) []promBucket {
	t.Helper()
	v, err := p.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 || v[0].Histogram == nil || len(v[0].Histogram.Buckets) == 0 {
		t.Fatalf("%s: %+v, want one native histogram", expr, v)
	}
	bs := slices.Clone(v[0].Histogram.Buckets)
	slices.SortFunc(bs, func(a, b promBucket) int { return cmp.Compare(a.Upper, b.Upper) })
	return bs
}

// dashboardPanel is what checkDashboard reads of the dashboard's panels.
type dashboardPanel struct {
	Title   string
	Targets []struct {
		Expr string
	}
	Panels []dashboardPanel
}

// checkDashboard runs every query of deploy/grafana/llmload.json on the
// real Prometheus, with the run's id for $run_id: each must parse, each
// of llmload's must show data (but those of open models, errors and
// rates, which this run has none of), and the per-stage table must count
// each stage's requests. Here every request is counted twice, pushed and
// scraped, since the dashboard does not tell the two apart.
func checkDashboard(t *testing.T, p *promServer, res exportResult) {
	data, err := os.ReadFile("../../deploy/grafana/llmload.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Panels []dashboardPanel }
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	// $run_id stands in a regex match inside a PromQL string, as Grafana
	// puts it: the regex's backslashes are the string's escapes.
	runID := strings.ReplaceAll(regexp.QuoteMeta(res.Run.RunID), `\`, `\\`)
	vars := strings.NewReplacer("$run_id", runID, "$scenario", ".*", "$stage", ".*",
		"$server_job", ".*", "$__rate_interval", "1m", "$__range", "10m")
	twice := map[string]float64{}
	for _, s := range res.Stages {
		twice[s.Stage] = 2 * float64(s.Requests)
	}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, panel := range ps {
			walk(panel.Panels)
			for i, tg := range panel.Targets {
				v, err := p.query(vars.Replace(tg.Expr))
				if err != nil {
					t.Errorf("panel %q: %v", panel.Title, err)
					continue
				}
				if len(v) == 0 && strings.Contains(tg.Expr, "llmload_") && !emptyHere(tg.Expr) {
					t.Errorf("panel %q, query %d shows no data for a run that has its series: %s", panel.Title, i+1, tg.Expr)
				}
				if strings.Contains(tg.Expr, "last_over_time(llmload_requests_total{") && !strings.Contains(tg.Expr, "status=") {
					if got := byLabel(v, "stage"); !equalCounts(got, twice) {
						t.Errorf("panel %q: requests by stage %v, want %v", panel.Title, got, twice)
					}
				}
			}
		}
	}
	walk(d.Panels)
}

// emptyHere reports whether a query asks for what the export scenario
// has none of: open-model series, failed clean requests, rate targets.
func emptyHere(expr string) bool {
	for _, s := range []string{"llmload_schedule_lag_seconds", "llmload_dropped_iterations_total", `status="error"`, `unit="rate"`} {
		if strings.Contains(expr, s) {
			return true
		}
	}
	return false
}

// TestE2EPrometheusReceiverFailing: a remote-write receiver that is down,
// or answers 500, leaves the run's result as a run without it (the same
// requests, stage by stage, and the same exit code), and the result's
// exports count the failed pushes.
func TestE2EPrometheusReceiverFailing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary three times")
	}
	var received atomic.Int64
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		http.Error(w, "receiver broken", http.StatusInternalServerError)
	}))
	defer failing.Close()
	// An iterations executor sends the same requests however fast the run
	// goes, so the three runs can be compared count for count; pushes
	// every 500 ms fail while the load runs, not only at its end.
	const scenario = `local llm = require("llmload")
options = {
  export = { every = "500ms" },
  scenarios = { s = { executor = "shared-iterations", vus = 2, iterations = 40, exec = "chat" } },
}
function chat(vu)
  llm.chat { messages = { { role = "user", content = ("[req_%d] hello"):format(vu.request_id) } }, max_tokens = 10 }
  llm.sleep("100ms")
end
`
	script := writeScenario(t, scenario)
	run := func(name string, args ...string) (exportResult, int) {
		out := filepath.Join(t.TempDir(), name+".json")
		stdout, stderr, code := runBinary(t, nil, append([]string{"run", script, "--seed", "7", "--out", out, "-q"}, args...)...)
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
		}
		return readExportResult(t, out), code
	}
	base, baseCode := run("none")
	for name, url := range map[string]string{
		"down": "http://" + freeAddr(t) + "/api/v1/write",
		"500":  failing.URL + "/api/v1/write",
	} {
		t.Run(name, func(t *testing.T) {
			got, code := run(name, "--export", "prometheus-rw="+url)
			if code != baseCode {
				t.Errorf("exit %d, without the export %d", code, baseCode)
			}
			if len(got.Stages) != len(base.Stages) {
				t.Fatalf("%d stages, without the export %d", len(got.Stages), len(base.Stages))
			}
			for i, s := range got.Stages {
				b := base.Stages[i]
				if s.Stage != b.Stage || s.Requests != b.Requests || s.OK != b.OK || s.Failed != b.Failed || s.Iterations != b.Iterations {
					t.Errorf("stage %s: %d requests (%d ok, %d failed, %d iterations); without the export %s: %d (%d, %d, %d)",
						s.Stage, s.Requests, s.OK, s.Failed, s.Iterations, b.Stage, b.Requests, b.OK, b.Failed, b.Iterations)
				}
			}
			if len(got.Exports) != 1 {
				t.Fatalf("exports %+v, want the one remote-write", got.Exports)
			}
			t.Logf("exit %d, %d stages, exports %+v", code, len(got.Stages), got.Exports[0])
			if e := got.Exports[0]; e.Pushes < 2 || e.Failures != e.Pushes || e.LastError == "" {
				t.Errorf("exports %+v: want pushes during the run and the final one, each counted as failed, with its error", e)
			}
		})
	}
	if received.Load() == 0 {
		t.Error("the failing receiver was never asked")
	}
}

// TestE2EDashboardLlamaCppRow checks the dashboard's llama.cpp row, and
// its queue panel, on a real llama-server's metrics: Prometheus scrapes
// the server while llmload loads it, and each of those panels' queries
// must then show data (the server row's names are engine/servermetrics', which
// TestDashboard checks; this checks them against the server itself).
func TestE2EDashboardLlamaCppRow(t *testing.T) {
	base := llamaServer(t)
	p := startPrometheus(t, strings.TrimPrefix(base, "http://"))
	const scenario = `local llm = require("llmload")
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "4s", exec = "chat" } } }
function chat(vu)
  llm.chat { messages = { { role = "user", content = ("[req_%d] Once upon a time"):format(vu.request_id) } }, max_tokens = 16 }
end
`
	stdout, stderr, code := runBinary(t, nil, "run", writeScenario(t, scenario), "--target", base+"/v1", "--seed", "7", "-q")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Rates need two scrapes of the moving counters.
	p.waitFor(t, `count(count_over_time(llamacpp:tokens_predicted_total[1m]) >= 2)`, "", map[string]float64{"": 1})

	data, err := os.ReadFile("../../deploy/grafana/llmload.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			dashboardPanel
			Type string
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$server_job", "job0", "$__rate_interval", "1m", "$__range", "10m")
	var checked []string
	for _, top := range d.Panels {
		panels := []dashboardPanel{top.dashboardPanel}
		if top.Type == "row" {
			if top.Title != "llama.cpp" {
				continue
			}
			panels = top.Panels
		} else if !strings.Contains(top.Title, "Server:") {
			continue
		}
		for _, panel := range panels {
			for i, tg := range panel.Targets {
				v, err := p.query(vars.Replace(tg.Expr))
				if err != nil {
					t.Fatalf("panel %q: %v", panel.Title, err)
				}
				// Newer servers dropped the KV-cache gauge (testdata/llamacpp_real_*).
				if len(v) == 0 && !strings.Contains(tg.Expr, "llamacpp:kv_cache_usage_ratio") {
					t.Errorf("panel %q, query %d shows nothing of a real llama-server: %s", panel.Title, i+1, tg.Expr)
				}
			}
			checked = append(checked, panel.Title)
		}
	}
	if len(checked) < 4 {
		t.Errorf("checked %q: the dashboard has no llama.cpp row and queue panel", checked)
	}
}
