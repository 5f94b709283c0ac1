package run

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/servermetrics"
)

// metricsServer answers /metrics with body and counts what it was asked;
// any other path is a 404, as an API server's would be.
func metricsServer(t *testing.T, contentType, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

// vllmQueue is a vLLM exposition of its queue gauges.
func vllmQueue(running, waiting int) string {
	return fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} %d\n"+
		"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\"} %d\n", running, waiting)
}

const promText = "text/plain; version=0.0.4"

// The endpoints a run scrapes: the named ones, each checked once before
// the load, or the one found at the target's origin; discovery logs what
// it found or why not, and never fails the run.
func TestMetricsEndpoints(t *testing.T) {
	a, _ := metricsServer(t, promText, vllmQueue(1, 2))
	b, _ := metricsServer(t, promText, vllmQueue(3, 4))
	html, _ := metricsServer(t, "text/html", "<html><body>dashboard</body></html>")
	unknown, _ := metricsServer(t, promText, "# TYPE up gauge\nup 1\n")
	api := httptest.NewServer(http.NotFoundHandler()) // an API server without /metrics
	t.Cleanup(api.Close)
	hung := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hung); slow.Close() })
	tests := []struct {
		name    string
		target  plan.Target
		targets []plan.Target
		want    []servermetrics.Endpoint
		err     string
		log     string
	}{
		{"named replicas", plan.Target{BaseURL: api.URL + "/v1", MetricsURL: a.URL + "/metrics", MetricsURLs: []string{b.URL + "/metrics", a.URL + "/metrics"}},
			nil, []servermetrics.Endpoint{{URL: a.URL + "/metrics"}, {URL: b.URL + "/metrics"}}, "", ""},
		{"named, of an unknown server", plan.Target{MetricsURL: unknown.URL + "/metrics"},
			nil, []servermetrics.Endpoint{{URL: unknown.URL + "/metrics"}}, "", ""},
		{"named, an HTML page", plan.Target{MetricsURL: a.URL + "/metrics", MetricsURLs: []string{html.URL + "/metrics"}}, nil, nil,
			"--metrics-url or options.target.metrics_url: " + html.URL + "/metrics could not be read as the server's Prometheus metrics, no load sent: an HTML page", ""},
		{"named, a 404", plan.Target{MetricsURL: api.URL + "/v1/metrics"}, nil, nil, "HTTP 404 Not Found", ""},
		{"found at the origin", plan.Target{BaseURL: a.URL + "/v1", APIKey: "sk-k"}, nil,
			[]servermetrics.Endpoint{{URL: a.URL + "/metrics", Header: http.Header{"Authorization": {"Bearer sk-k"}}, Discovered: true}},
			"", "server metrics: found vLLM's at " + a.URL + "/metrics"},
		{"nothing at the origin", plan.Target{BaseURL: api.URL + "/v1"}, nil, nil, "",
			"server metrics: none scraped: " + api.URL + "/metrics: HTTP 404 Not Found; name the endpoint with --metrics-url or options.target.metrics_url"},
		{"an unknown server at the origin", plan.Target{BaseURL: unknown.URL}, nil, nil, "", "a Prometheus exposition of no server llmload knows"},
		{"a hung origin", plan.Target{BaseURL: slow.URL + "/v1"}, nil, nil, "",
			"server metrics: none scraped: " + slow.URL + "/metrics: timeout after 2s"},
		{"no look", plan.Target{BaseURL: a.URL + "/v1", NoMetrics: true}, nil, nil, "", ""},
		{"several targets", plan.Target{MetricsURL: b.URL + "/metrics"},
			[]plan.Target{{Name: "x", BaseURL: a.URL + "/v1"}, {Name: "y", BaseURL: api.URL + "/v1", MetricsURL: b.URL + "/metrics"}},
			[]servermetrics.Endpoint{{Target: "x", URL: a.URL + "/metrics", Discovered: true}, {Target: "y", URL: b.URL + "/metrics"}},
			"", "server metrics: target x: found vLLM's at " + a.URL + "/metrics"},
		{"a target's bad URL", plan.Target{}, []plan.Target{{Name: "y", MetricsURL: html.URL + "/metrics"}}, nil,
			"options.targets.y.metrics_url: " + html.URL + "/metrics could not be read", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log strings.Builder
			c := &Config{Plan: plan.Plan{Target: tt.target, Targets: tt.targets},
				Log: func(format string, a ...any) { fmt.Fprintf(&log, format+"\n", a...) }}
			got, err := c.metricsEndpoints(testContext(t))
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one with %q", err, tt.err)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case !slices.EqualFunc(got, tt.want, sameEndpoint):
				t.Errorf("endpoints %+v, want %+v", got, tt.want)
			}
			if (tt.log == "") != (log.Len() == 0) || !strings.Contains(log.String(), tt.log) {
				t.Errorf("log %q, want %q", log.String(), tt.log)
			}
		})
	}
}

func sameEndpoint(a, b servermetrics.Endpoint) bool {
	return a.Target == b.Target && a.URL == b.URL && a.Discovered == b.Discovered && fmt.Sprint(a.Header) == fmt.Sprint(b.Header)
}

// With metrics_url = false the origin is not even asked.
func TestNoMetricsAsksNothing(t *testing.T) {
	srv, asked := metricsServer(t, promText, vllmQueue(0, 0))
	c := &Config{Plan: plan.Plan{Target: plan.Target{BaseURL: srv.URL + "/v1", NoMetrics: true}}}
	if eps, err := c.metricsEndpoints(testContext(t)); len(eps) != 0 || err != nil || asked.Load() != 0 {
		t.Errorf("endpoints %v, error %v, %d requests; want none", eps, err, asked.Load())
	}
}

// The look at the origin carries the key as the target's requests do,
// and the target's own headers.
func TestOriginHeader(t *testing.T) {
	tests := []struct {
		target plan.Target
		want   http.Header
	}{
		{plan.Target{}, nil},
		{plan.Target{APIKey: "k"}, http.Header{"Authorization": {"Bearer k"}}},
		{plan.Target{APIKey: "k", Auth: plan.AuthBearer}, http.Header{"Authorization": {"Bearer k"}}},
		{plan.Target{APIKey: "k", Auth: plan.AuthAPIKey}, http.Header{"Api-Key": {"k"}}},
		{plan.Target{APIKey: "k", Auth: plan.AuthXAPIKey}, http.Header{"X-Api-Key": {"k"}}},
		{plan.Target{APIKey: "k", Auth: plan.AuthXAPIKey, AuthHeader: "x-gateway-key"}, http.Header{"X-Gateway-Key": {"k"}}},
		{plan.Target{APIKey: "k", AuthHeader: "x-gateway-key"}, http.Header{"X-Gateway-Key": {"Bearer k"}}},
		{plan.Target{APIKey: "k", Auth: plan.AuthNone}, nil},
		{plan.Target{Headers: []plan.Header{{Name: "X-Tenant", Value: "a"}}, APIKey: "k"},
			http.Header{"Authorization": {"Bearer k"}, "X-Tenant": {"a"}}},
	}
	for _, tt := range tests {
		if got := originHeader(tt.target); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%+v: %v, want %v", tt.target, got, tt.want)
		}
	}
}

// A run with two replicas' metrics keeps each one's series and sums their
// queue in the result.
func TestRunScrapesEveryReplica(t *testing.T) {
	a, _ := metricsServer(t, promText, vllmQueue(1, 2))
	b, _ := metricsServer(t, promText, vllmQueue(3, 4))
	p := testPlan(600 * time.Millisecond)
	p.Target.MetricsURL, p.Target.MetricsURLs = a.URL+"/metrics", []string{b.URL + "/metrics"}
	p.Target.MetricsEvery = servermetrics.MinEvery
	cfg := testConfig(t, p, &fakeRunner{})
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	sm := readBack(t, cfg.Outputs.Out).ServerMetrics
	if sm == nil || len(sm.Endpoints) != 2 || sm.Endpoints[0].URL != a.URL+"/metrics" || sm.Endpoints[1].URL != b.URL+"/metrics" {
		t.Fatalf("server metrics %+v, want both endpoints", sm)
	}
	for role, want := range map[servermetrics.Role]float64{servermetrics.RoleRunning: 4, servermetrics.RoleWaiting: 6} {
		s := sm.ByRole(role)
		if s == nil || len(s.V) == 0 || slices.ContainsFunc(s.V, func(v float64) bool { return v != want }) {
			t.Errorf("%s: %+v, want the sum %v at every point", role, s, want)
		}
	}
}

// A target behind TLS with a private CA has its metrics found and
// scraped as its requests reach it: with that CA and its headers.
func TestMetricsOverTargetTLS(t *testing.T) {
	var tenant atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant.Store(r.Header.Get("X-Tenant"))
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", promText)
		fmt.Fprint(w, vllmQueue(1, 2))
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testPlan(300 * time.Millisecond)
	p.Target.BaseURL, p.Target.TLS = srv.URL+"/v1", plan.TLS{CACert: ca}
	p.Target.Headers = []plan.Header{{Name: "X-Tenant", Value: "a"}}
	cfg := testConfig(t, p, &fakeRunner{})
	var logs []string
	cfg.Log = func(format string, a ...any) { logs = append(logs, fmt.Sprintf(format, a...)) }
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerMetrics == nil || res.ServerMetrics.Scrapes == 0 {
		t.Fatalf("no scrape of the TLS target's metrics; logs:\n%s", strings.Join(logs, "\n"))
	}
	if got, _ := tenant.Load().(string); got != "a" {
		t.Errorf("the metrics request carried X-Tenant %q, want the target's a", got)
	}
}
