package servermetrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// Queue reads each known server's running and waiting gauges from its
// own exposition, summed over label sets (engines, ranks).
func TestQueueReadsEachServersGauges(t *testing.T) {
	tests := []struct {
		file             string
		running, waiting float64
		text             string
	}{
		{"testdata/vllm_1.txt", 5, 1, "vllm:num_requests_running 5, vllm:num_requests_waiting 1"},
		{"testdata/sglang_2.txt", 30, 4, "sglang:num_running_reqs 30, sglang:num_queue_reqs 4"},
		{"testdata/tgi_2.txt", 8, 5, "tgi_batch_current_size 8, tgi_queue_size 5"},
		{"testdata/llamacpp_real_2.txt", 4, 14, "llamacpp:requests_processing 4, llamacpp:requests_deferred 14"},
		{"testdata/llamacpp_real_idle.txt", 0, 0, "llamacpp:requests_processing 0, llamacpp:requests_deferred 0"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
			defer srv.Close()
			s := Start(srv.URL, time.Hour, time.Now())
			defer s.Stop()
			r, err := s.Queue()
			if err != nil {
				t.Fatal(err)
			}
			if r.Running != tt.running || r.Waiting != tt.waiting || r.Text != tt.text {
				t.Errorf("Queue() = %+v, want running %v, waiting %v, %q", r, tt.running, tt.waiting, tt.text)
			}
		})
	}
}

// An exposition without queue gauges, or a server that fails, is an
// error that names the cause and never the URL's credentials.
func TestQueueErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n"))
	}))
	defer srv.Close()
	s := Start(srv.URL+"/metrics", time.Hour, time.Now())
	defer s.Stop()
	if _, err := s.Queue(); !errors.Is(err, ErrNoQueue) {
		t.Errorf("Queue() on a server without queue gauges: %v, want ErrNoQueue", err)
	}
	secret := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/down"
	d := Start(secret, time.Hour, time.Now())
	defer d.Stop()
	_, err := d.Queue()
	if err == nil || !strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Queue() on a failing server: %v, want the 503 without the password", err)
	}
}
