package run

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/export"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sharedPlan is n requests shared by 2 VUs: the same counts every run,
// so that two runs' results can be compared exactly.
func sharedPlan(n int) plan.Plan {
	return plan.Plan{Script: "fake.lua", Seed: 1, Target: plan.Target{Model: "m"},
		Scenarios: []plan.Scenario{{Name: "s", Executor: plan.ExecutorSharedIterations, Exec: "chat",
			VUs: 2, Iterations: n, Stages: []plan.Stage{{Name: "all", Target: 2, Duration: time.Minute}},
			GracefulStop: time.Second}}}
}

// measured is what a result measured, without the times that differ
// between two runs of one plan.
func measured(r *result.Result) string {
	var b strings.Builder
	for _, st := range r.Stages {
		fmt.Fprintf(&b, "%s/%s: %d requests, %d failed, %d output tokens, ttft %d p50 %v p99 %v, itl %d, e2e p99 %v\n",
			st.Scenario, st.Stage, st.Requests, st.Failed, st.OutputTokens, st.TTFT.Count, st.TTFT.P50, st.TTFT.P99,
			st.ITL.Count, st.E2E.P99)
	}
	fmt.Fprintf(&b, "verdict %q, complete %v, checks %v", r.Run.Verdict, r.Run.Complete, r.Checks)
	return b.String()
}

// scraper scrapes --listen until stopped, keeping the last good scrape.
type scraper struct {
	mu    sync.Mutex
	last  map[string]*dto.MetricFamily
	n     int
	stop  chan struct{}
	addrs chan string
}

func startScraper() *scraper {
	s := &scraper{stop: make(chan struct{}), addrs: make(chan string, 1)}
	go func() {
		addr := <-s.addrs
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			resp, err := http.Get("http://" + addr + export.MetricsPath)
			if err != nil {
				continue
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(resp.Body)
			resp.Body.Close()
			if err == nil {
				s.mu.Lock()
				s.last, s.n = fams, s.n+1
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// sum adds up a scraped family's counter values and histogram counts.
func (s *scraper) sum(name string) (float64, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v float64
	var n uint64
	for _, m := range s.last[name].GetMetric() {
		v += m.GetCounter().GetValue()
		n += m.GetHistogram().GetSampleCount()
	}
	return v, n
}

var listenLine = regexp.MustCompile(`serving the run's live metrics at http://([^/]+)/metrics`)

func TestExportListenMatchesResult(t *testing.T) {
	p := sharedPlan(40)
	p.Export = plan.Export{Listen: "127.0.0.1:0", RunID: "t1"}
	cfg := testConfig(t, p, &fakeRunner{})
	sc := startScraper()
	defer close(sc.stop)
	cfg.Log = func(f string, a ...any) {
		if m := listenLine.FindStringSubmatch(fmt.Sprintf(f, a...)); m != nil {
			sc.addrs <- m[1]
		}
	}
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stages[0]
	if got, _ := sc.sum(export.Requests); got != float64(st.Requests) || st.Requests != 40 {
		t.Errorf("last scrape: %v requests, result %d (want 40)", got, st.Requests)
	}
	if _, got := sc.sum(export.TTFT); got != uint64(st.TTFT.Count) {
		t.Errorf("last scrape: ttft count %d, result %d", got, st.TTFT.Count)
	}
	if got, _ := sc.sum(export.OutputTokens); got != float64(st.OutputTokens) {
		t.Errorf("last scrape: %v output tokens, result %d", got, st.OutputTokens)
	}
	if len(res.Exports) != 1 || res.Exports[0].Failures != 0 || res.Exports[0].Scrapes == 0 || res.Run.RunID != "t1" {
		t.Errorf("exports = %+v, run id %q", res.Exports, res.Run.RunID)
	}
}

func TestExportFailuresLeaveResultIdentical(t *testing.T) {
	plain, _, err := Run(testContext(t), testConfig(t, sharedPlan(30), &fakeRunner{}))
	if err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusInternalServerError)
	}))
	defer failing.Close()
	p := sharedPlan(30)
	p.Export = plan.Export{Every: 50 * time.Millisecond, Targets: []plan.ExportTarget{
		{Kind: plan.ExportPrometheusRW, URL: down.URL}, {Kind: plan.ExportOTLP, URL: failing.URL}}}
	var summary strings.Builder
	cfg := testConfig(t, p, &fakeRunner{})
	cfg.Summary = &summary
	exported, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := measured(exported), measured(plain); got != want {
		t.Errorf("with failing receivers:\n%s\nwithout:\n%s", got, want)
	}
	if len(exported.Exports) != 2 {
		t.Fatalf("exports = %+v", exported.Exports)
	}
	for _, e := range exported.Exports {
		if e.Pushes == 0 || e.Failures != e.Pushes || e.LastError == "" {
			t.Errorf("export %+v: want every push failed, and why", e)
		}
	}
	if w := strings.Join(exported.Warnings, "\n"); !strings.Contains(w, "every push failed") {
		t.Errorf("warnings = %q", w)
	}
	if !strings.Contains(summary.String(), "pushes FAILED") {
		t.Errorf("summary does not say the exports failed:\n%s", summary.String())
	}
}
