package servermetrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/sim"
)

// simulatorMetrics is the built-in simulator's own /metrics body.
func simulatorMetrics(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(sim.New(sim.Config{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// Kind recognises each known server by its own exposition, and nothing
// in a body that is not one of theirs.
func TestKind(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"vLLM", fixture(t, "vllm_1.txt"), ServerVLLM},
		{"SGLang", fixture(t, "sglang_1.txt"), ServerSGLang},
		{"TGI", fixture(t, "tgi_1.txt"), ServerTGI},
		{"llama.cpp", fixture(t, "llamacpp_real_1.txt"), ServerLlamaCpp},
		{"llama.cpp, older", fixture(t, "llamacpp_1.txt"), ServerLlamaCpp},
		{"the simulator's vLLM names", simulatorMetrics(t), ServerVLLM},
		{"most names win", "vllm:num_requests_running 1\nsglang:num_running_reqs 1\nsglang:num_queue_reqs 0\n", ServerSGLang},
		{"a tie goes to the earlier", "tgi_queue_size 1\nllamacpp:requests_deferred 1\n", ServerTGI},
		{"a Go program's", "# TYPE go_goroutines gauge\ngo_goroutines 7\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n", ""},
		{"HTML", "<!DOCTYPE html><html><body>Grafana</body></html>", ""},
		{"JSON", `{"object":"list","data":[]}`, ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Kind([]byte(tt.body)); got != tt.want {
				t.Errorf("Kind = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOriginURL(t *testing.T) {
	tests := []struct {
		base, want, err string
	}{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/metrics", ""},
		{"https://gw.example:8443/openai/v1/?api-version=1", "https://gw.example:8443/metrics", ""},
		{"http://u:p@host/v1", "http://u:p@host/metrics", ""},
		{"localhost:8000/v1", "", "is not an http(s) URL"},
		{"http://[::1/v1", "", "is not an http(s) URL"},
	}
	for _, tt := range tests {
		got, err := OriginURL(tt.base)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("OriginURL(%q) = %q, %v; want %q, %q", tt.base, got, err, tt.want, tt.err)
		}
	}
}

// Discover reads the origin's /metrics once and keeps it only when a
// known server's; otherwise its error says why, and the caller goes on.
func TestDiscover(t *testing.T) {
	const key = "sk-discover-secret"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		server  string // the kind found; "" for an error
		err     string
	}{
		{"vLLM with the target's key", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+key {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			w.Write([]byte(fixture(t, "vllm_1.txt")))
		}, ServerVLLM, ""},
		{"llama.cpp", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(fixture(t, "llamacpp_real_1.txt"))) }, ServerLlamaCpp, ""},
		{"HTML", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><body>Open WebUI</body></html>"))
		}, "", "an HTML page, not the Prometheus text format"},
		{"404", http.NotFound, "", "HTTP 404 Not Found"},
		{"unknown exposition", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("# TYPE go_goroutines gauge\ngo_goroutines 7\n# TYPE gateway_requests_total counter\ngateway_requests_total 3\n"))
		}, "", "no server llmload knows (2 families, e.g. gateway_requests_total, go_goroutines; known: vLLM, SGLang, TGI, llama.cpp)"},
		{"an OpenAI error", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"error":{"message":"no such route"}}`))
		}, "", "not the Prometheus text format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				tt.handler(w, r)
			}))
			h := http.Header{"Authorization": {"Bearer " + key}}
			f, err := Discover(context.Background(), srv.URL+"/v1", h, nil)
			if path != "/metrics" || f.URL != srv.URL+"/metrics" {
				t.Errorf("read %q, found at %q; want the origin's /metrics", path, f.URL)
			}
			if f.Server != tt.server && tt.server != "" {
				t.Errorf("server %q, want %q", f.Server, tt.server)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one with %q", err, tt.err)
			case err != nil && strings.Contains(err.Error(), key):
				t.Errorf("the key leaked into %q", err)
			}
		})
	}
}

func TestDiscoverUnknownIsErrUnknownServer(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("up 1\n")) }))
	if _, err := Discover(context.Background(), srv.URL, nil, nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("error %v, want ErrUnknownServer", err)
	}
}

// An origin that does not answer costs the run one short timeout, never a
// hang: the error says so.
func TestDiscoverSlowOriginTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	client := newClient(50*time.Millisecond, nil)
	_, err := Discover(context.Background(), srv.URL+"/v1", nil, client)
	if err == nil || !strings.Contains(err.Error(), "timeout after 50ms") {
		t.Errorf("error %v, want a timeout", err)
	}
}

// A probe's error never holds the URL's or the header's credentials, even
// when the server echoes them where the parser quotes its input.
func TestProbeHidesCredentials(t *testing.T) {
	const key, password, token = "sk-probe-s3cret", "pw-s3cret", "t0k-s3cret"
	echoes := map[string]func(r *http.Request) string{
		"the key":      func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") },
		"the password": func(r *http.Request) string { _, pw, _ := r.BasicAuth(); return pw },
		"the token":    func(r *http.Request) string { return r.URL.Query().Get("token") },
	}
	for name, echo := range echoes {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("up " + echo(r) + "\n")) // the parser quotes a value that is no number
			}))
			u := strings.Replace(srv.URL, "http://", "http://admin:"+password+"@", 1) + "/metrics?token=" + token
			h := http.Header{"Authorization": {"Bearer " + key}}
			if name == "the password" {
				h = nil // the URL's user info is the Authorization then
			}
			_, err := Probe(context.Background(), u, h, nil)
			if err == nil || !strings.Contains(err.Error(), "not the Prometheus text format") {
				t.Fatalf("error %v, want a parse error", err)
			}
			for _, secret := range []string{key, password, token} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%q holds %s", err, secret)
				}
			}
		})
	}
}

func TestFoundString(t *testing.T) {
	tests := []struct {
		f    Found
		want string
	}{
		{Found{URL: "http://u:p@host:8000/metrics", Server: ServerVLLM}, "vLLM's at http://host:8000/metrics"},
		{Found{URL: "http://host:8080/metrics", Server: ServerLlamaCpp}, "llama.cpp's at http://host:8080/metrics"},
		{Found{URL: "http://host/metrics"}, "an unknown server's at http://host/metrics"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}
