package main

import (
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
	"slices"
	"strconv"
	"strings"
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

// classicBounds are the upper bounds of a classic histogram's buckets (the
// le values of selector's _bucket series), +Inf last.
func (p *promServer) classicBounds(t *testing.T, bucketSelector string) []float64 {
	t.Helper()
	v, err := p.query("sum by (le) (" + bucketSelector + ")")
	if err != nil {
		t.Fatal(err)
	}
	var les []float64
	for _, s := range v {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil {
			t.Fatalf("le %q: %v", s.Metric["le"], err)
		}
		les = append(les, le)
	}
	slices.Sort(les)
	if len(les) == 0 {
		t.Fatalf("no buckets for %s", bucketSelector)
	}
	return les
}

// bucketOf is the bucket (lower, upper] of the upper bounds les that holds v.
func bucketOf(les []float64, v float64) (lo, hi float64) {
	lo = math.Inf(-1)
	for _, le := range les {
		if v <= le {
			return lo, le
		}
		lo = le
	}
	return lo, math.Inf(1)
}

// withinBucket reports whether PromQL's quantile got lands in the bucket
// that holds llmload's own percentile own: histogram_quantile interpolates
// within the bucket its rank falls in, and the rank is the same as
// llmload's (both count ceil(q·n) values), so the two share a bucket.
// llmload's HDR histogram keeps 3 significant digits: own may sit up to
// 0.1% across a bound, which either neighbour then holds.
func withinBucket(les []float64, own, got float64) bool {
	for _, v := range []float64{own, own * (1 - 1e-3), own * (1 + 1e-3)} {
		if lo, hi := bucketOf(les, v); got >= lo && got <= hi {
			return true
		}
	}
	return false
}

// TestPrometheusHarness checks the harness itself against a stub: a
// Prometheus scrapes a fixed text exposition, and the counts and a
// histogram's quantile come back through the API as they were served.
func TestPrometheusHarness(t *testing.T) {
	const exposition = `# TYPE llmload_requests_total counter
llmload_requests_total{run_id="h",stage="a",status="ok"} 7
llmload_requests_total{run_id="h",stage="b",status="ok"} 5
llmload_requests_total{run_id="h",stage="b",status="error"} 1
# TYPE llmload_ttft_seconds histogram
llmload_ttft_seconds_bucket{run_id="h",stage="a",le="0.1"} 2
llmload_ttft_seconds_bucket{run_id="h",stage="a",le="0.2"} 6
llmload_ttft_seconds_bucket{run_id="h",stage="a",le="0.5"} 7
llmload_ttft_seconds_bucket{run_id="h",stage="a",le="+Inf"} 7
llmload_ttft_seconds_sum{run_id="h",stage="a"} 1.1
llmload_ttft_seconds_count{run_id="h",stage="a"} 7
`
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, exposition)
	}))
	defer stub.Close()
	p := startPrometheus(t, strings.TrimPrefix(stub.URL, "http://"))

	p.waitFor(t, `sum by (stage) (llmload_requests_total{run_id="h"})`, "stage", map[string]float64{"a": 7, "b": 6})
	if got := p.scalar(t, `sum(llmload_ttft_seconds_count{run_id="h"})`); got != 7 {
		t.Errorf("TTFT count %v, want 7", got)
	}
	les := p.classicBounds(t, `llmload_ttft_seconds_bucket{run_id="h", stage="a"}`)
	if want := []float64{0.1, 0.2, 0.5, math.Inf(1)}; !slices.Equal(les, want) {
		t.Fatalf("bounds %v, want %v", les, want)
	}
	// The median of 7 values is the 4th: in (0.1, 0.2], as a stub's own
	// p50 of 0.15 would be, and not in the bucket of 0.3.
	got := p.scalar(t, `histogram_quantile(0.5, sum by (le) (llmload_ttft_seconds_bucket{run_id="h", stage="a"}))`)
	if !withinBucket(les, 0.15, got) {
		t.Errorf("p50 %v is not in 0.15's bucket of %v", got, les)
	}
	if withinBucket(les, 0.3, got) {
		t.Errorf("p50 %v is in 0.3's bucket too: the check cannot fail", got)
	}
}
