package export

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// ms is n milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// okSample is a successful clean streamed request of stage.
func okSample(stage, prompt string) engine.Sample {
	return engine.Sample{Scenario: "sweep", Stage: stage, Tags: map[string]string{"prompt": prompt, "id": "x"},
		Result: engine.Result{API: engine.EndpointChat, Status: 200, TTFT: ms(10), TTFC: ms(12), TPOT: ms(5),
			E2E: ms(100), ITL: []time.Duration{ms(5), ms(6), 0}, InputTokens: 10, OutputTokens: 4, Streamed: true}}
}

// feed sends a small run's events: stage c1 has 3 successes and a 500,
// c2 2 successes and a handled dirty request, the open scenario one late
// iteration and 2 drops; a warmup request and checks (2 pass, 1 fail).
func feed(s engine.Sink) {
	s.StageStarted(engine.StageMark{Scenario: "sweep", Stage: "c1", Target: 4})
	s.StageStarted(engine.StageMark{Scenario: "open", Stage: "r5", Rate: 5})
	s.Sample(engine.Sample{Scenario: "sweep", Stage: "warmup", Warmup: true, Result: engine.Result{TTFT: ms(1)}})
	for range 3 {
		s.Sample(okSample("c1", "short"))
	}
	s.Sample(engine.Sample{Scenario: "sweep", Stage: "c1", Result: engine.Result{API: engine.EndpointChat, Status: 500,
		Err: &engine.Error{Class: engine.HTTPErrorClass(500), Message: "boom"}, TTFB: ms(3)}})
	s.StageEnded(engine.StageMark{Scenario: "sweep", Stage: "c1", Target: 4})
	s.StageStarted(engine.StageMark{Scenario: "sweep", Stage: "c2", Target: 8})
	s.Sample(okSample("c2", "long"))
	s.Sample(okSample("c2", "short"))
	s.Sample(engine.Sample{Scenario: "sweep", Stage: "c2", Dirty: "empty", Result: engine.Result{API: engine.EndpointChat,
		Status: 400, Err: &engine.Error{Class: engine.HTTPErrorClass(400), Message: "empty messages"}}})
	now := time.Now()
	s.IterationStarted(engine.IterationMark{Scenario: "open", Stage: "r5", Scheduled: now.Add(-ms(2)), Started: now})
	s.IterationStarted(engine.IterationMark{Scenario: "sweep", Stage: "c2", Started: now})
	s.Dropped(engine.DropMark{Scenario: "open", Stage: "r5", Scheduled: now})
	s.Dropped(engine.DropMark{Scenario: "open", Stage: "r5", Scheduled: now})
	for _, v := range []float64{1, 1, 0} {
		s.Metric(engine.MetricSample{Name: "checks", Kind: engine.MetricRate, Value: v, Scenario: "sweep", Stage: "c2",
			Tags: map[string]string{"check": "status 200"}})
	}
	s.Metric(engine.MetricSample{Name: "checks", Warmup: true, Value: 1, Tags: map[string]string{"check": "status 200"}})
}

// testConfig exports e with a fixed run id; pushes only at Close unless
// the test sets Every.
func testConfig(e plan.Export) Config {
	if e.Every == 0 {
		e.Every = time.Hour
	}
	if e.Tags == nil {
		e.Tags = []string{"prompt"}
	}
	return Config{Export: e, RunID: "r1", Start: time.Now(), Open: map[string]bool{"open": true},
		Load:    func() []Load { return []Load{{Scenario: "sweep", InFlight: 3, ActiveVUs: 8}} },
		Timeout: 2 * time.Second, ScrapeWait: 2 * time.Second}
}

func newTest(t *testing.T, cfg Config) *Exporter {
	t.Helper()
	x, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x.Start()
	t.Cleanup(func() { x.Close() })
	return x
}

// counts are what feed must show in every output: series, labels, value.
var counts = []struct {
	name   string
	labels map[string]string
	want   float64
}{
	{Requests, map[string]string{"run_id": "r1", "stage": "c1", "status": "ok", "prompt": "short", "api": "chat"}, 3},
	{Requests, map[string]string{"stage": "c1", "status": "error", "error_class": "http_5xx:500"}, 1},
	{Requests, map[string]string{"stage": "c2", "dirty": ""}, 2},
	{Requests, map[string]string{"stage": "c2", "prompt": "long"}, 1},
	{Requests, map[string]string{"stage": "c2", "dirty": "empty", "status": "error"}, 1},
	{Requests, map[string]string{"stage": "warmup"}, 0},
	{DirtyRequests, map[string]string{"stage": "c2", "kind": "empty", "verdict": "handled"}, 1},
	{OutputTokens, map[string]string{"stage": "c1"}, 12},
	{InputTokens, map[string]string{"stage": "c2"}, 20},
	{Dropped, map[string]string{"scenario": "open", "stage": "r5"}, 2},
	{Checks, map[string]string{"stage": "c2", "check": "status 200", "result": "pass"}, 2},
	{Checks, map[string]string{"check": "status 200", "result": "fail"}, 1},
	{InFlight, map[string]string{"scenario": "sweep"}, 3},
	{ActiveVUs, map[string]string{"scenario": "sweep"}, 8},
	{StageTarget, map[string]string{"stage": "c2", "unit": "vus"}, 8},
	{StageTarget, map[string]string{"stage": "c1"}, 0},
	{StageTarget, map[string]string{"scenario": "open", "unit": "rate"}, 5},
}

// hists are the histogram counts feed must show.
var hists = []struct {
	name   string
	labels map[string]string
	want   uint64
}{
	{TTFT, map[string]string{"stage": "c1", "prompt": "short"}, 3},
	{TTFT, map[string]string{"stage": "c2"}, 2},
	{ITL, map[string]string{"stage": "c1"}, 9},
	{E2E, map[string]string{"stage": "c1"}, 3},
	{ScheduleLag, map[string]string{"scenario": "open"}, 1},
}

func TestRemoteWriteFinalFlush(t *testing.T) {
	rw := newRWReceiver(t)
	x := newTest(t, testConfig(plan.Export{Targets: []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: rw.URL}}}))
	feed(x)
	health := x.Close()
	pushes, series := rw.snapshot()
	if pushes != 1 {
		t.Fatalf("pushes = %d, want 1 (the final flush)", pushes)
	}
	for _, c := range counts {
		if got, _ := find(series, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, h := range hists {
		if got, _ := find(series, h.name+"_count", h.labels); got != float64(h.want) {
			t.Errorf("%s_count%v = %v, want %d", h.name, h.labels, got, h.want)
		}
	}
	le := map[string]string{"stage": "c1", "le": "0.01"}
	if got, _ := find(series, TTFT+"_bucket", le); got != 3 {
		t.Errorf("ttft bucket le=0.01 = %v, want 3 (10 ms is in it)", got)
	}
	if got, want := health, []Health{{Kind: plan.ExportPrometheusRW, Target: rw.URL, Pushes: 1}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("health = %+v, want %+v", got, want)
	}
	if rw.headers.Get("X-Prometheus-Remote-Write-Version") != "0.1.0" || rw.headers.Get("Content-Encoding") != "snappy" {
		t.Errorf("headers = %v, want remote-write 0.1.0 and snappy", rw.headers)
	}
}

func TestRemoteWriteNative(t *testing.T) {
	rw := newRWReceiver(t)
	x := newTest(t, testConfig(plan.Export{Targets: []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: rw.URL, Native: true}}}))
	feed(x)
	x.Close()
	_, series := rw.snapshot()
	for _, h := range hists {
		var got uint64
		for _, s := range series {
			if s.labels["__name__"] == h.name && matches(s.labels, h.labels) && s.hist != nil {
				got += s.hist.count
				if s.hist.buckets+s.hist.zero != s.hist.count {
					t.Errorf("%s: buckets add up to %d, count %d", h.name, s.hist.buckets+s.hist.zero, s.hist.count)
				}
				if s.hist.schema != 3 {
					t.Errorf("%s: schema %d, want 3", h.name, s.hist.schema)
				}
			}
		}
		if got != h.want {
			t.Errorf("native %s%v count = %d, want %d", h.name, h.labels, got, h.want)
		}
	}
	if _, n := find(series, TTFT+"_bucket", nil); n != 0 {
		t.Errorf("%d classic bucket series sent with native histograms", n)
	}
}

func TestRemoteWritePeriodic(t *testing.T) {
	rw := newRWReceiver(t)
	cfg := testConfig(plan.Export{Every: 10 * time.Millisecond,
		Targets: []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: rw.URL}}})
	x := newTest(t, cfg)
	x.Sample(okSample("c1", "short"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, series := rw.snapshot(); series != nil {
			// The receiver keeps a push before it answers: wait for the
			// answer too, so that the push is booked.
			if got, _ := find(series, Requests, nil); got == 1 && x.outputs[0].health().Pushes >= 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no periodic push with the first request")
		}
		time.Sleep(5 * time.Millisecond)
	}
	x.Sample(okSample("c1", "short"))
	h := x.Close()
	_, series := rw.snapshot()
	if got, _ := find(series, Requests, nil); got != 2 {
		t.Errorf("final push has %v requests, want 2", got)
	}
	if h[0].Pushes < 2 || h[0].Failures != 0 {
		t.Errorf("health = %+v, want 2 pushes or more and no failure", h[0])
	}
}

func TestFailingReceiversAreCounted(t *testing.T) {
	down := newRWReceiver(t)
	down.Close() // nothing listens there any more
	failing := newRWReceiver(t)
	failing.status = http.StatusInternalServerError
	headers := map[string]string{"Authorization": "Bearer s3cr3t-token"}
	cfg := testConfig(plan.Export{Headers: headers, Targets: []plan.ExportTarget{
		{Kind: plan.ExportPrometheusRW, URL: strings.Replace(down.URL, "://", "://user:hunter22@", 1)},
		{Kind: plan.ExportOTLP, URL: failing.URL}}})
	var logged []string
	cfg.Log = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	x := newTest(t, cfg)
	feed(x)
	start := time.Now()
	health := x.Close()
	if d := time.Since(start); d > 2*cfg.Timeout {
		t.Errorf("Close took %v with failing receivers, want within the push timeout", d)
	}
	for _, h := range health {
		if h.Pushes != 1 || h.Failures != 1 || h.LastError == "" {
			t.Errorf("health = %+v, want 1 push, 1 failure and its error", h)
		}
	}
	warnings := strings.Join(x.Warnings(), "\n")
	all := warnings + strings.Join(logged, "\n") + fmt.Sprint(health)
	for _, secret := range []string{"hunter22", "s3cr3t-token"} {
		if strings.Contains(all, secret) {
			t.Errorf("a secret shows: %s", all)
		}
	}
	if !strings.Contains(warnings, "every push failed") || len(logged) != 2 {
		t.Errorf("warnings = %q, logged %q", warnings, logged)
	}
	if failing.headers.Get("Authorization") != headers["Authorization"] {
		t.Errorf("the Authorization header was not sent: %v", failing.headers)
	}
}

func TestOTLP(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprint("native=", native), func(t *testing.T) {
			r := newOTLPReceiver(t)
			x := newTest(t, testConfig(plan.Export{Targets: []plan.ExportTarget{{Kind: plan.ExportOTLP, URL: r.URL, Native: native}}}))
			feed(x)
			h := x.Close()
			if h[0].Failures != 0 || r.pushes != 1 {
				t.Fatalf("health = %+v, %d pushes", h, r.pushes)
			}
			for _, c := range counts {
				if got := otlpValue(r.metric(c.name), c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			for _, hc := range hists {
				if got := otlpCount(r.metric(hc.name), hc.labels, native); got != hc.want {
					t.Errorf("%s%v count = %d, want %d", hc.name, hc.labels, got, hc.want)
				}
			}
			if m := r.metric(Requests); m.GetSum().GetAggregationTemporality() != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE {
				t.Errorf("requests temporality = %v, want cumulative", m.GetSum().GetAggregationTemporality())
			}
		})
	}
}

// otlpValue sums the points of a sum or gauge whose attributes include want.
func otlpValue(m *metricspb.Metric, want map[string]string) float64 {
	var sum float64
	for _, p := range m.GetSum().GetDataPoints() {
		if attrsMatch(p, want) {
			sum += float64(p.GetAsInt())
		}
	}
	for _, p := range m.GetGauge().GetDataPoints() {
		if attrsMatch(p, want) {
			sum += p.GetAsDouble()
		}
	}
	return sum
}

// otlpCount sums the counts of a histogram's matching points, checking
// that their buckets add up.
func otlpCount(m *metricspb.Metric, want map[string]string, native bool) uint64 {
	var n uint64
	if native {
		for _, p := range m.GetExponentialHistogram().GetDataPoints() {
			if attrsMatch(p, want) {
				n += p.GetCount()
				var b uint64
				for _, c := range p.GetPositive().GetBucketCounts() {
					b += c
				}
				if b+p.GetZeroCount() != p.GetCount() {
					return 1 << 62 // buckets that do not add up fail the check
				}
			}
		}
		return n
	}
	for _, p := range m.GetHistogram().GetDataPoints() {
		if attrsMatch(p, want) {
			n += p.GetCount()
			var b uint64
			for _, c := range p.GetBucketCounts() {
				b += c
			}
			if b != p.GetCount() || len(p.GetBucketCounts()) != len(p.GetExplicitBounds())+1 {
				return 1 << 62
			}
		}
	}
	return n
}

// scrape reads the text format from a --listen address.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// promValue sums the matching series of a scraped family.
func promValue(f *dto.MetricFamily, want map[string]string) (float64, uint64) {
	var v float64
	var n uint64
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if !matches(got, want) {
			continue
		}
		v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		n += m.GetHistogram().GetSampleCount()
	}
	return v, n
}

func TestListen(t *testing.T) {
	x := newTest(t, testConfig(plan.Export{Listen: "127.0.0.1:0"}))
	feed(x)
	fams := scrape(t, x.ListenAddr())
	for _, c := range counts {
		if got, _ := promValue(fams[c.name], c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, h := range hists {
		if _, got := promValue(fams[h.name], h.labels); got != h.want {
			t.Errorf("%s%v count = %d, want %d", h.name, h.labels, got, h.want)
		}
	}
	// The run ends: Close serves until a scrape reads the final counts.
	done := make(chan []Health)
	go func() { done <- x.Close() }()
	deadline := time.Now().Add(5 * time.Second)
	for x.listen.final.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	x.Sample(okSample("c1", "short")) // after the end: left out
	if got, _ := promValue(scrape(t, x.ListenAddr())[Requests], map[string]string{"stage": "c1", "status": "ok"}); got != 3 {
		t.Errorf("final scrape: %v requests, want 3", got)
	}
	h := <-done
	if len(h) != 1 || h[0].Kind != plan.ExportListen || h[0].Scrapes != 2 || h[0].Failures != 0 {
		t.Errorf("health = %+v, want 2 scrapes and no failure", h)
	}
}

func TestListenNoFinalScrape(t *testing.T) {
	cfg := testConfig(plan.Export{Listen: "127.0.0.1:0"})
	cfg.ScrapeWait = 20 * time.Millisecond
	x := newTest(t, cfg)
	h := x.Close()
	if h[0].Failures != 1 || !strings.Contains(h[0].Warning(), "no scrape read the final counts") {
		t.Errorf("health = %+v, warning %q", h[0], h[0].Warning())
	}
}

func TestListenAddressInUse(t *testing.T) {
	x := newTest(t, testConfig(plan.Export{Listen: "127.0.0.1:0"}))
	_, err := New(testConfig(plan.Export{Listen: x.ListenAddr()}))
	if err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Errorf("second listener on %s: err = %v, want a --listen error", x.ListenAddr(), err)
	}
}

func TestTagValuesBounded(t *testing.T) {
	rw := newRWReceiver(t)
	cfg := testConfig(plan.Export{Tags: []string{"id", "prompt"}, Targets: []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: rw.URL}}})
	x := newTest(t, cfg)
	const n = MaxTagValues + 50
	for i := range n {
		s := okSample("c1", "short")
		s.Tags = map[string]string{"id": fmt.Sprint(i), "prompt": "short"}
		x.Sample(s)
	}
	x.Close()
	_, series := rw.snapshot()
	total, nseries := find(series, Requests, nil)
	if total != n || nseries != MaxTagValues+1 {
		t.Errorf("%v requests in %d series, want %d in %d (the overflow one included)", total, nseries, n, MaxTagValues+1)
	}
	if got, _ := find(series, Requests, map[string]string{"id": Overflow}); got != 50 {
		t.Errorf("overflow series has %v requests, want 50", got)
	}
	refs := x.Refusals()
	if len(refs) != 1 || refs[0].Tag != "id" || refs[0].Refused != 50 || len(refs[0].Examples) != refusedExamples {
		t.Fatalf("refusals = %+v", refs)
	}
	if w := refs[0].String(); !strings.Contains(w, `"100", "101", "102"`) || !strings.Contains(w, `tag "id"`) {
		t.Errorf("refusal = %q, want it to name the tag and values", w)
	}
	if len(x.lats) > MaxTagValues+1 || len(x.reqs) > MaxTagValues+1 {
		t.Errorf("caches grew to %d and %d entries", len(x.lats), len(x.reqs))
	}
}

func TestCheckTags(t *testing.T) {
	for _, tc := range []struct {
		tags []string
		want string
	}{
		{[]string{"prompt", "turn"}, ""},
		{[]string{"stage"}, "llmload sets itself"},
		{[]string{"bad-name"}, "not a valid label name"},
		{[]string{"a", "a"}, "listed twice"},
		{[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "at most 8"},
	} {
		err := CheckTags(tc.tags)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckTags(%q) = %v, want %q", tc.tags, err, tc.want)
		}
	}
}

func TestBadTargets(t *testing.T) {
	for _, tc := range []struct {
		target plan.ExportTarget
		want   string
	}{
		{plan.ExportTarget{Kind: plan.ExportPrometheusRW, URL: "ftp://h/x"}, "http:// or https://"},
		{plan.ExportTarget{Kind: plan.ExportOTLP, URL: "http://"}, "no host"},
		{plan.ExportTarget{Kind: "influx", URL: "http://h"}, "unknown kind"},
		{plan.ExportTarget{Kind: plan.ExportPrometheusRW, URL: "http://u:pw@h:1/x"}, "export prometheus-rw=http://h:1/x"},
	} {
		_, err := New(testConfig(plan.Export{Targets: []plan.ExportTarget{tc.target}}))
		if tc.want == "export prometheus-rw=http://h:1/x" {
			if err != nil {
				t.Errorf("%v: %v", tc.target, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("%v: err = %v, want %q", tc.target, err, tc.want)
		}
	}
}

func TestSampleAllocatesNothing(t *testing.T) {
	x, err := New(testConfig(plan.Export{}))
	if err != nil {
		t.Fatal(err)
	}
	s := okSample("c1", "short")
	x.Sample(s)
	if n := testing.AllocsPerRun(100, func() { x.Sample(s) }); n != 0 {
		t.Errorf("Sample allocates %v times, want 0", n)
	}
}

// BenchmarkSample is the exporter's cost on each request's completion: a
// successful streamed request with three gaps and a tag.
func BenchmarkSample(b *testing.B) {
	for _, native := range []bool{false, true} {
		b.Run(fmt.Sprint("native=", native), func(b *testing.B) {
			x, err := New(testConfig(plan.Export{ListenNative: native}))
			if err != nil {
				b.Fatal(err)
			}
			s := okSample("c1", "short")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					x.Sample(s)
				}
			})
		})
	}
}

// BenchmarkSampleSerial is BenchmarkSample on one goroutine: the cost
// without contention on the same series.
func BenchmarkSampleSerial(b *testing.B) {
	x, err := New(testConfig(plan.Export{}))
	if err != nil {
		b.Fatal(err)
	}
	s := okSample("c1", "short")
	b.ReportAllocs()
	for b.Loop() {
		x.Sample(s)
	}
}
