package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/servermetrics"
)

// replicaScenario keeps a few VUs busy on the target for two seconds while
// its metrics are scraped four times a second.
const replicaScenario = `local llm = require("llmload")
options = { target = { metrics_every = "250ms" },
            scenarios = { s = { executor = "constant-vus", vus = 4, duration = "2s", exec = "chat" } } }
function chat(vu)
  llm.chat { messages = { { role = "user", content = "hello" } }, max_tokens = 40 }
end
`

// startReplica starts an llmload mock of two decode slots, so that the
// scenario's four VUs keep it running and queueing, and returns its API's
// base URL.
func startReplica(t *testing.T) string {
	t.Helper()
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--max-batch", "2")
	url := mock.mockURL(t)
	return url
}

// TestE2EMetricsOfTwoReplicas runs against one mock while reading the
// metrics of two: the result keeps each replica's series and sums their
// queue, the idle replica adding nothing to the busy one's.
func TestE2EMetricsOfTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	busy, idle := startReplica(t), startReplica(t)
	busyMetrics, idleMetrics := strings.TrimSuffix(busy, "/v1")+"/metrics", strings.TrimSuffix(idle, "/v1")+"/metrics"
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runBinary(t, nil, "run", writeScenario(t, replicaScenario), "--target", busy,
		"--metrics-url", busyMetrics, "--metrics-url", idleMetrics, "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sm := loadResult(t, out).ServerMetrics
	if sm == nil || len(sm.Endpoints) != 2 || sm.Endpoints[0].URL != busyMetrics || sm.Endpoints[1].URL != idleMetrics {
		t.Fatalf("server metrics %+v, want the two endpoints in order", sm)
	}
	for _, e := range sm.Endpoints {
		if e.Server != servermetrics.ServerVLLM || e.Failures != 0 || e.ByRole(servermetrics.RoleRunning) == nil {
			t.Errorf("%s: server %q, %d failures, series %d; want the simulator's vLLM gauges", e.URL, e.Server, e.Failures, len(e.Series))
		}
	}
	if idle := sm.Endpoints[1].ByRole(servermetrics.RoleRunning); idle != nil && slices.ContainsFunc(idle.V, func(v float64) bool { return v != 0 }) {
		t.Fatalf("the idle replica ran requests: %v", idle.V)
	}
	if busy := sm.Endpoints[0].ByRole(servermetrics.RoleRunning); busy == nil || !slices.Contains(busy.V, 2) {
		t.Fatalf("the busy replica never ran its two slots: %+v", busy)
	}
	for _, role := range []servermetrics.Role{servermetrics.RoleRunning, servermetrics.RoleWaiting} {
		checkSum(t, sm, role)
	}
	for _, want := range []string{"server metrics: 2 endpoints", "#1 ", busyMetrics, "#2 ", idleMetrics, "sum of 2 vLLM servers"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// checkSum holds the sum of role's series to the busy replica's: each
// summed point is at one of the replicas' scrape times and, the other
// replica idle, has the busy one's value of the same scrape.
func checkSum(t *testing.T, sm *servermetrics.Result, role servermetrics.Role) {
	t.Helper()
	sum, busy, idle := sm.ByRole(role), sm.Endpoints[0].ByRole(role), sm.Endpoints[1].ByRole(role)
	if sum == nil || busy == nil || idle == nil || !strings.HasPrefix(sum.Name, "sum(") || len(sum.T) < 4 {
		t.Fatalf("%s: sum %+v of %+v and %+v; want one with a point per scrape", role, sum, busy, idle)
	}
	for i, at := range sum.T {
		if !slices.Contains(busy.T, at) && !slices.Contains(idle.T, at) {
			t.Errorf("%s: summed point at %v is no replica's scrape (%v, %v)", role, at, busy.T, idle.T)
			continue
		}
		j := len(busy.T) - 1
		for j > 0 && busy.T[j] > at {
			j--
		}
		if got, want := sum.V[i], busy.V[j]; got != want {
			t.Errorf("%s at %v: sum %v, want the busy replica's %v", role, at, got, want)
		}
	}
}

// TestE2EMetricsFoundAtTheOrigin: with no metrics URL, the run finds the
// mock's own /metrics at the target's origin, says so, and scrapes it.
func TestE2EMetricsFoundAtTheOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	base := startReplica(t)
	metricsURL := strings.TrimSuffix(base, "/v1") + "/metrics"
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runBinary(t, nil, "run", writeScenario(t, replicaScenario), "--target", base, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if want := "server metrics: found vLLM's at " + metricsURL; !strings.Contains(stderr, want) {
		t.Errorf("the log lacks %q:\n%s", want, stderr)
	}
	if want := "server metrics: found vLLM's at " + metricsURL + ":"; !strings.Contains(stdout, want) {
		t.Errorf("the summary lacks %q:\n%s", want, stdout)
	}
	sm := loadResult(t, out).ServerMetrics
	if sm == nil || !sm.Discovered || sm.URL != metricsURL || sm.ByRole(servermetrics.RoleRunning) == nil {
		t.Errorf("server metrics %+v, want the origin's, marked discovered", sm)
	}
}

// Bad metrics URLs stop the run before any load, naming where they came
// from; a target whose origin has no metrics runs without them.
func TestMetricsURLErrors(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Grafana</body></html>")
	}))
	defer page.Close()
	exposition := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n")
	}))
	defer exposition.Close()
	ok := writeScript(t, okScript)
	inScript := writeScript(t, strings.Replace(okScript, "options = {", fmt.Sprintf(`options = { target = { metrics_url = %q },`, page.URL+"/metrics"), 1))
	runExitCases(t, []exitCase{
		{"not a URL", []string{"run", "--metrics-url", "localhost:8000/metrics", ok}, exitUsage, `--metrics-url "localhost:8000/metrics" is not an http(s) URL`},
		{"empty", []string{"run", "--metrics-url", "", ok}, exitUsage, "--metrics-url"},
		{"twice", []string{"run", "--metrics-url", "http://a/metrics", "--metrics-url", "http://a/metrics", ok}, exitUsage, "--metrics-url http://a/metrics is given twice"},
		{"credentials hidden", []string{"run", "--metrics-url", "http://u:pw@[::1/metrics", ok}, exitUsage, "http://[::1/metrics"},
		{"an HTML page", []string{"run", "--metrics-url", page.URL + "/metrics", ok}, exitError,
			"--metrics-url or options.target.metrics_url: " + page.URL + "/metrics could not be read as the server's Prometheus metrics, no load sent: an HTML page"},
		{"the script's HTML page", []string{"run", inScript}, exitError, page.URL + "/metrics could not be read"},
		{"the flag wins", []string{"run", "--metrics-url", exposition.URL + "/metrics", inScript}, exitOK, "server metrics: 1 series from " + exposition.URL},
	})
}
