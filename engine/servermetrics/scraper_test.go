package servermetrics

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exposition serves bodies in turn, the last one from then on, and counts
// the scrapes it answered.
type exposition struct {
	mu     sync.Mutex
	bodies []string
	served atomic.Int64
}

func (e *exposition) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	body := e.bodies[0]
	if len(e.bodies) > 1 {
		e.bodies = e.bodies[1:]
	}
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(body))
	e.served.Add(1)
}

// serve starts a loopback server for h.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Start() // httptest listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestScraperSeries(t *testing.T) {
	tests := map[string]struct {
		files []string
		gauge string
		want  []float64 // the gauge's first points
		p50   string
		p50V  float64
	}{
		"vllm":   {[]string{"vllm_1.txt", "vllm_2.txt"}, "vllm:num_requests_waiting", []float64{1, 7}, "vllm:time_to_first_token_seconds:p50", 60},
		"sglang": {[]string{"sglang_1.txt", "sglang_2.txt"}, "sglang:num_queue_reqs", []float64{0, 4}, "sglang:time_to_first_token_seconds:p50", 200},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			e := &exposition{}
			for _, f := range tt.files {
				e.bodies = append(e.bodies, fixture(t, f))
			}
			srv := serve(t, e)
			sc := Start(srv.URL+"/metrics", MinEvery, time.Now())
			waitFor(t, "three scrapes", func() bool { return e.served.Load() >= 3 })
			res := sc.Stop()
			if res.Failures != 0 || res.Scrapes < 3 {
				t.Fatalf("scrapes %d, failures %d (%v)", res.Scrapes, res.Failures, res.Errors)
			}
			g := res.Lookup(tt.gauge)
			if g == nil || len(g.V) < 2 || g.V[0] != tt.want[0] || g.V[1] != tt.want[1] {
				t.Errorf("%s = %+v, want first values %v", tt.gauge, g, tt.want)
			}
			// Later scrapes repeat the second body: no new observations, no new points.
			if p := res.Lookup(tt.p50); p == nil || len(p.V) != 1 || p.V[0] != tt.p50V {
				t.Errorf("%s = %+v, want one point %v", tt.p50, p, tt.p50V)
			}
			for i := 1; i < len(g.T); i++ {
				if g.T[i] < g.T[i-1] {
					t.Errorf("times go back: %v", g.T)
				}
			}
		})
	}
}

func TestScraperFailures(t *testing.T) {
	tests := map[string]struct {
		handler http.HandlerFunc
		want    string
	}{
		"html": {func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<!DOCTYPE html><html><body>Not here</body></html>"))
		}, "not the Prometheus text format"},
		"truncated": {func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(fixture(t, "vllm_1.txt")[:700]))
		}, "not the Prometheus text format"},
		"json": {func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"error":"nope"}`))
		}, "not the Prometheus text format"},
		"empty": {func(w http.ResponseWriter, _ *http.Request) {}, "no metrics"},
		"500": {func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "HTTP 500 Internal Server Error"},
		"404": {http.NotFound, "HTTP 404 Not Found"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int64
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tt.handler(w, r)
				n.Add(1)
			}))
			sc := Start(srv.URL+"/metrics", MinEvery, time.Now())
			waitFor(t, "two scrapes", func() bool { return n.Load() >= 2 })
			res := sc.Stop()
			if got, want := res.Failures, res.Scrapes; got != want || got < 2 {
				t.Errorf("failures %d of %d scrapes, want all of at least 2", got, want)
			}
			if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tt.want) {
				t.Errorf("errors %q, want one containing %q", res.Errors, tt.want)
			}
			if len(res.Series) != 0 {
				t.Errorf("series %v, want none", names(res))
			}
		})
	}
}

// A failing scrape is recorded and the next one goes on.
func TestScraperRecovers(t *testing.T) {
	e := &exposition{bodies: []string{"<html>oops</html>", fixture(t, "vllm_1.txt")}}
	srv := serve(t, e)
	sc := Start(srv.URL+"/metrics", MinEvery, time.Now())
	waitFor(t, "three scrapes", func() bool { return e.served.Load() >= 3 })
	res := sc.Stop()
	if got, want := res.Failures, 1; got != want {
		t.Errorf("failures %d, want %d", got, want)
	}
	if s := res.Lookup("vllm:num_requests_running"); s == nil || len(s.V) < 2 {
		t.Errorf("running series %+v, want points after the failure", s)
	}
}

func TestScraperTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	began := time.Now()
	sc := startAll([]Endpoint{{URL: srv.URL}}, MinEvery, time.Now(), 200*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	res := sc.Stop()
	if res.Failures == 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "timeout after 200ms") {
		t.Errorf("failures %d, errors %q; want timeouts", res.Failures, res.Errors)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Stop took %v with a hung server", d)
	}
}

func TestScraperBadTargets(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	closed := srv.URL
	srv.Close()
	tests := map[string]struct {
		url  string
		want string
	}{
		"refused":   {closed + "/metrics", "refused"},
		"bad url":   {"http://[::1/metrics", "invalid metrics URL"},
		"no scheme": {"localhost/metrics", "unsupported protocol scheme"},
	}
	for name, tt := range tests {
		res := Start(tt.url, MinEvery, time.Now()).Stop()
		if res.Scrapes == 0 || res.Failures != res.Scrapes || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], tt.want) {
			t.Errorf("%s: scrapes %d failures %d errors %q; want failures with %q", name, res.Scrapes, res.Failures, res.Errors, tt.want)
		}
	}
}

func TestScraperHidesCredentials(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	u := strings.Replace(srv.URL, "http://", "http://admin:s3cretpw@", 1) + "/metrics?token=t0psecret"
	res := Start(u, MinEvery, time.Now()).Stop()
	for _, s := range append([]string{res.URL}, res.Errors...) {
		if strings.Contains(s, "s3cretpw") || strings.Contains(s, "t0psecret") {
			t.Errorf("secret in %q", s)
		}
	}
	if got, want := res.URL, strings.TrimPrefix(srv.URL, "")+"/metrics?token=REDACTED"; got != want {
		t.Errorf("URL %q, want %q", got, want)
	}
}

func TestStop(t *testing.T) {
	var nilScraper *Scraper
	if nilScraper.Stop() != nil {
		t.Error("nil Scraper: Stop returned a result")
	}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(fixture(t, "vllm_1.txt")))
	}))
	sc := Start(srv.URL, time.Hour, time.Now())
	first, second := sc.Stop(), sc.Stop()
	if first != second {
		t.Error("second Stop returned another result")
	}
	if got, want := first.EveryS, 3600.0; got != want {
		t.Errorf("every_s %v, want %v", got, want)
	}
}

func TestErrorLogCap(t *testing.T) {
	var l errorLog
	for i := range MaxErrors + 5 {
		l.add(strings.Repeat("x", i+1))
	}
	l.add("x")
	lines := l.lines()
	if got, want := len(lines), MaxErrors+1; got != want {
		t.Fatalf("%d lines, want %d: %q", got, want, lines)
	}
	if got, want := lines[0], "x (2×)"; got != want {
		t.Errorf("first line %q, want %q", got, want)
	}
	if got, want := lines[MaxErrors], "other errors (5×)"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
}

func TestScraperFormats(t *testing.T) {
	tests := map[string]struct {
		contentType, body string
		wantFailure       string // "" for a good scrape
	}{
		"openmetrics": {"application/openmetrics-text; version=1.0.0; charset=utf-8",
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n# EOF\n", ""},
		"no content type": {"", "vllm:num_requests_running 3\n", ""},
		"openmetrics without EOF": {"application/openmetrics-text; version=1.0.0",
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n", "bad metrics exposition"},
		"too big": {"text/plain", "vllm:num_requests_running 3\n# " + strings.Repeat("x", MaxBodyBytes) + "\n", "body larger than 16 MB"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header()["Content-Type"] = []string{tt.contentType}
				_, _ = w.Write([]byte(tt.body))
			}))
			res := Start(srv.URL, time.Hour, time.Now()).Stop()
			if tt.wantFailure != "" {
				if res.Failures != 1 || !strings.Contains(strings.Join(res.Errors, "|"), tt.wantFailure) {
					t.Errorf("failures %d, errors %q; want %q", res.Failures, res.Errors, tt.wantFailure)
				}
				return
			}
			if s := res.Lookup("vllm:num_requests_running"); res.Failures != 0 || s == nil || s.V[0] != 3 {
				t.Errorf("failures %d (%q), running %+v; want 3", res.Failures, res.Errors, s)
			}
		})
	}
}

// An error message that quotes the URL's credentials in another encoding
// (a proxy or server echoing the Authorization header) is scrubbed too.
func TestScrubCoversEveryEncoding(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	u := strings.Replace(srv.URL, "http://", "http://admin:s3cr3t!pw@", 1) + "/metrics"
	s := Start(u, MinEvery, time.Now())
	defer s.Stop()
	basic := base64.StdEncoding.EncodeToString([]byte("admin:s3cr3t!pw"))
	for _, msg := range []string{
		"got Authorization: Basic " + basic,
		"password s3cr3t%21pw rejected",
		"user admin:s3cr3t!pw",
	} {
		got := s.pollers[0].scrub(msg)
		for _, secret := range []string{basic, "s3cr3t%21pw", "s3cr3t!pw"} {
			if strings.Contains(got, secret) {
				t.Errorf("scrub(%q) = %q: still holds %q", msg, got, secret)
			}
		}
	}
}
