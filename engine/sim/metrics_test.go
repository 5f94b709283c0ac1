package sim

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/servermetrics"
)

func TestMetricsExposition(t *testing.T) {
	s := New(zeroCost(Config{Model: `we"ird\model`, SpecTokens: 3}))
	t0 := time.Unix(0, 0)
	for _, d := range []time.Duration{30 * time.Millisecond, 50 * time.Millisecond, 3 * time.Second} {
		s.metrics.completed(d, 2*d)
		s.metrics.phases(&completion{queued: t0, scheduled: t0.Add(d), firstToken: t0.Add(2 * d), lastToken: t0.Add(4 * d)})
	}
	d := s.spec.drafter(1, 1)
	for range 5 {
		d.step()
	}
	w := serve(s, http.MethodGet, "/metrics", "", nil)
	if got, want := w.Code, http.StatusOK; got != want {
		t.Fatalf("status %d, want %d", got, want)
	}
	if got, want := w.Header().Get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8"; got != want {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
	checkGolden(t, "metrics.golden", w.Body.String())
}

func TestMetricsRoute(t *testing.T) {
	s := New(zeroCost(Config{APIKey: "sk-test"}))
	tests := []struct {
		method string
		want   int
	}{
		{http.MethodGet, http.StatusOK}, // no key needed, as with vLLM
		{http.MethodHead, http.StatusOK},
		{http.MethodPost, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		if got := serve(s, tt.method, "/metrics", "", nil).Code; got != tt.want {
			t.Errorf("%s /metrics: status %d, want %d", tt.method, got, tt.want)
		}
	}
	if got, want := s.Stats().Requests, int64(0); got != want {
		t.Errorf("requests counted %d, want %d: a scrape is no request", got, want)
	}
}

// The simulator's /metrics, scraped by llmload's own scraper while a queue
// builds, shows the queue, the batch and the server-side TTFT.
func TestMetricsScraped(t *testing.T) {
	s := New(Config{MaxBatch: 1, DecodeBase: 10 * time.Millisecond, PrefillBase: time.Millisecond})
	base := startServer(t, s)
	sc := servermetrics.Start(strings.TrimSuffix(base, "/v1")+"/metrics", servermetrics.MinEvery, time.Now())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			body := chatBody(t, "hello "+strings.Repeat("x", i), map[string]any{"max_tokens": 40, "stream": true})
			resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		})
	}
	wg.Wait()
	res := sc.Stop()
	if res.Failures != 0 {
		t.Fatalf("failures %d: %v", res.Failures, res.Errors)
	}
	for _, tt := range []struct {
		name    string
		atLeast float64 // the largest value seen
	}{
		{"vllm:num_requests_running", 1},
		{"vllm:num_requests_waiting", 1},
		{"vllm:kv_cache_usage_perc", 0},
		{"vllm:time_to_first_token_seconds:p50", 0},
		{"vllm:e2e_request_latency_seconds:p99", 100}, // 40 tokens of ≥ 10 ms
	} {
		ser := res.Lookup(tt.name)
		if ser == nil {
			t.Errorf("%s: missing from %d scrapes", tt.name, res.Scrapes)
			continue
		}
		if got := maxOf(ser.V); got < tt.atLeast {
			t.Errorf("%s: largest value %v, want ≥ %v", tt.name, got, tt.atLeast)
		}
	}
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}
