package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestRetriesPolicy runs the retry loop on scripted failures inside a
// synctest bubble, where the real sleep takes no real time.
func TestRetriesPolicy(t *testing.T) {
	fail := func(class string, status int, after string) attempt {
		return attempt{class: class, status: status, retryAfter: after}
	}
	ok := attempt{}
	tests := map[string]struct {
		script    []attempt // ok ends the script with a success
		wantTries int
		wantErr   bool
		wantWaits []time.Duration
		want      string // summary on success, the error's note on failure
	}{
		"first try":          {[]attempt{ok}, 1, false, nil, ""},
		"503 twice":          {[]attempt{fail("http_5xx:503", 503, ""), fail("http_5xx:503", 503, ""), ok}, 3, false, []time.Duration{500 * time.Millisecond, time.Second}, "503 twice, then ok after 1.5 s"},
		"retry-after":        {[]attempt{fail("http_4xx:429", 429, "3"), ok}, 2, false, []time.Duration{3 * time.Second}, "429 once, then ok after 3.0 s"},
		"retry-after capped": {[]attempt{fail("http_4xx:429", 429, "120"), ok}, 2, false, []time.Duration{15 * time.Second}, "429 once, then ok after 15.0 s"},
		"mixed": {[]attempt{fail("conn_reset", 0, ""), fail("http_5xx:502", 502, ""), fail("http_5xx:504", 504, ""), ok}, 4, false,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, "conn_reset once, then 502 once, then 504 once, then ok after 3.5 s"},
		"gives up after 4": {slices.Repeat([]attempt{fail("http_5xx:503", 503, "")}, 5), 4, true,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, " (after 4 tries over 3.5 s: 503 4 times)"},
		"budget": {slices.Repeat([]attempt{fail("http_5xx:503", 503, "20")}, 5), 3, true,
			[]time.Duration{15 * time.Second, 15 * time.Second}, " (after 3 tries over 30.0 s: 503 3 times)"},
		"401 at once": {[]attempt{fail("http_4xx:401", 401, "")}, 1, true, nil, ""},
		"404 at once": {[]attempt{fail("http_4xx:404", 404, "")}, 1, true, nil, ""},
		"400 at once": {[]attempt{fail("http_4xx:400", 400, "1")}, 1, true, nil, ""},
		"500 at once": {[]attempt{fail("http_5xx:500", 500, "")}, 1, true, nil, ""},
		"refused while starting": {[]attempt{fail("conn_refused", 0, ""), fail("conn_refused", 0, ""), ok}, 3, false,
			[]time.Duration{500 * time.Millisecond, time.Second}, "conn_refused twice, then ok after 1.5 s"},
		"refused after startup": {[]attempt{fail("http_4xx:429", 429, "5"), fail("conn_refused", 0, ""), ok}, 2, true,
			[]time.Duration{5 * time.Second}, " (after 2 tries over 5.0 s: 429 once, then conn_refused once)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &retries{sleep: sleepCtx, now: time.Now, start: time.Now()}
				var waits []time.Duration
				last := time.Now()
				tries := 0
				err := r.do(context.Background(), func() (attempt, error) {
					if tries > 0 {
						waits = append(waits, time.Since(last))
					}
					a := tt.script[tries]
					tries++
					last = time.Now()
					if a == ok {
						return a, nil
					}
					return a, errors.New("failed")
				})
				if got := tries; got != tt.wantTries {
					t.Errorf("tries = %d, want %d", got, tt.wantTries)
				}
				if !slices.Equal(waits, tt.wantWaits) {
					t.Errorf("waits = %v, want %v", waits, tt.wantWaits)
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("err = %v, want error %v", err, tt.wantErr)
				}
				got := r.summary()
				if err != nil {
					got = strings.TrimPrefix(err.Error(), "failed")
				}
				if got != tt.want {
					t.Errorf("said %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestRetriesStopOnCancel: Ctrl-C during a backoff ends it at once.
func TestRetriesStopOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := &retries{sleep: sleepCtx, now: time.Now, start: time.Now()}
		time.AfterFunc(100*time.Millisecond, cancel)
		tries := 0
		err := r.do(ctx, func() (attempt, error) {
			tries++
			return attempt{class: "http_5xx:503", status: 503, retryAfter: "10"}, errors.New("busy")
		})
		if err == nil || tries != 1 {
			t.Errorf("err = %v after %d tries, want an error after 1", err, tries)
		}
		if got, want := time.Since(r.start), 100*time.Millisecond; got != want {
			t.Errorf("stopped after %v, want %v", got, want)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := map[string]time.Duration{
		"":     0,
		"2":    2 * time.Second,
		"0.5":  500 * time.Millisecond,
		"-1":   0,
		"soon": 0,
		now.Add(7 * time.Second).Format(http.TimeFormat): 7 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):      0,
	}
	for in, want := range tests {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// sequence answers the n-th request with the n-th handler, the last one
// for every request after.
type sequence struct {
	mu    sync.Mutex
	steps []http.HandlerFunc
	n     int
}

func (s *sequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.steps[min(s.n, len(s.steps)-1)]
	s.n++
	s.mu.Unlock()
	h(w, r)
}

func (s *sequence) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func status(code int, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":{"message":"`+http.StatusText(code)+`"}}`)
	}
}

// reset closes the connection without an answer.
func reset(w http.ResponseWriter, r *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func okChat(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"id":"listed"}]}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, strings.Join(okStream("pong"), ""))
}

// TestPreflightRetriesTransientAnswers drives Preflight against scripted
// servers; the client's clock is fake, so backoffs take no time.
func TestPreflightRetriesTransientAnswers(t *testing.T) {
	tests := map[string]struct {
		model     string
		steps     []http.HandlerFunc
		wantReqs  int
		wantSleep []time.Duration
		want      string // Retried on success, the error otherwise
	}{
		"503 twice": {"m", []http.HandlerFunc{status(503), status(503), okChat}, 3,
			[]time.Duration{500 * time.Millisecond, time.Second}, "503 twice, then ok after 1.5 s"},
		"429 with retry-after": {"m", []http.HandlerFunc{status(429, "Retry-After", "2"), okChat}, 2,
			[]time.Duration{2 * time.Second}, "429 once, then ok after 2.0 s"},
		"reset": {"m", []http.HandlerFunc{reset, okChat}, 2, []time.Duration{500 * time.Millisecond}, "conn_reset once, then ok after 0.5 s"},
		"model list busy": {"", []http.HandlerFunc{status(503), okChat}, 3, []time.Duration{500 * time.Millisecond},
			"503 once, then ok after 0.5 s"},
		"401 at once": {"m", []http.HandlerFunc{status(401), okChat}, 1, nil,
			"target requires an API key (HTTP 401); llmload sent no credentials; set --api-key or LLMLOAD_API_KEY"},
		"404 at once": {"m", []http.HandlerFunc{status(404), okChat}, 1, nil,
			`HTTP 404 from http://{srv}/v1/chat/completions — check the model name "m" and the base URL`},
		"503 for good": {"m", []http.HandlerFunc{status(503)}, 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
			"preflight request to http://{srv}/v1/chat/completions failed: http_5xx:503: Service Unavailable (after 4 tries over 3.5 s: 503 4 times)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			seq := &sequence{steps: tt.steps}
			srv := serve(t, seq)
			c := testClient(t, srv.URL+"/v1")
			clk := &fakeClock{}
			c.sleep, c.now = clk.sleep, clk.now
			info, err := c.Preflight(context.Background(), tt.model)
			got := errString(err)
			if err == nil {
				got = info.Retried
			}
			if want := strings.ReplaceAll(tt.want, "{srv}", srv.Listener.Addr().String()); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if got := seq.requests(); got != tt.wantReqs {
				t.Errorf("requests = %d, want %d", got, tt.wantReqs)
			}
			if got := clk.sleeps(); !slices.Equal(got, tt.wantSleep) {
				t.Errorf("slept %v, want %v", got, tt.wantSleep)
			}
			var e *engine.Error
			if err != nil && !errors.As(err, &e) {
				t.Errorf("error %v does not wrap an *engine.Error", err)
			}
		})
	}
}
