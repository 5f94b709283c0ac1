package servermetrics

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
)

// parse decodes an exposition fixture or inline text.
func parse(t *testing.T, text string) families {
	t.Helper()
	if strings.HasPrefix(text, "testdata/") {
		b, err := os.ReadFile(text)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	fams, err := decode(strings.NewReader(text), http.Header{})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return fams
}

// build feeds scrapes taken at t = 0, 10, 20 ... seconds to a builder.
func build(t *testing.T, scrapes ...string) *Result {
	t.Helper()
	b := newBuilder()
	for i, s := range scrapes {
		b.add(float64(10*i), parse(t, s))
	}
	return &Result{Series: b.series()}
}

func TestBuilderSeries(t *testing.T) {
	vllm := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	sglang := build(t, "testdata/sglang_1.txt", "testdata/sglang_2.txt")
	llamacpp := build(t, "testdata/llamacpp_1.txt", "testdata/llamacpp_2.txt")
	tests := []struct {
		res   *Result
		name  string
		unit  string
		wantT []float64
		wantV []float64
	}{
		{vllm, "vllm:num_requests_running", UnitRequests, []float64{0, 10}, []float64{5, 6}},
		{vllm, "vllm:num_requests_waiting", UnitRequests, []float64{0, 10}, []float64{1, 7}},
		{vllm, "vllm:kv_cache_usage_perc", UnitFraction, []float64{0, 10}, []float64{0.25, 0.5}},
		{vllm, "vllm:num_preemptions_total:rate", UnitPerSecond, []float64{10}, []float64{2}},
		{vllm, "vllm:time_to_first_token_seconds:p50", UnitMS, []float64{10}, []float64{60}},
		{vllm, "vllm:time_to_first_token_seconds:p99", UnitMS, []float64{10}, []float64{500}},
		{sglang, "sglang:num_running_reqs", UnitRequests, []float64{0, 10}, []float64{12, 30}},
		{sglang, "sglang:num_queue_reqs", UnitRequests, []float64{0, 10}, []float64{0, 4}},
		{sglang, "sglang:token_usage", UnitFraction, []float64{0, 10}, []float64{0.1, 0.93}},
		{sglang, "sglang:time_to_first_token_seconds:p50", UnitMS, []float64{10}, []float64{200}},
		{sglang, "sglang:time_to_first_token_seconds:p99", UnitMS, []float64{10}, []float64{596}},
		{llamacpp, "llamacpp:requests_processing", UnitRequests, []float64{0, 10}, []float64{1, 4}},
		{llamacpp, "llamacpp:requests_deferred", UnitRequests, []float64{0, 10}, []float64{0, 3}},
	}
	for _, tt := range tests {
		s := tt.res.Lookup(tt.name)
		if s == nil {
			t.Errorf("%s: missing", tt.name)
			continue
		}
		if got, want := s.Unit, tt.unit; got != want {
			t.Errorf("%s: unit %q, want %q", tt.name, got, want)
		}
		checkPoints(t, s, tt.wantT, tt.wantV)
	}
}

func checkPoints(t *testing.T, s *Series, wantT, wantV []float64) {
	t.Helper()
	if len(s.T) != len(wantT) || len(s.V) != len(wantV) {
		t.Errorf("%s: t=%v v=%v, want t=%v v=%v", s.Name, s.T, s.V, wantT, wantV)
		return
	}
	for i := range wantT {
		if s.T[i] != wantT[i] || math.Abs(s.V[i]-wantV[i]) > 1e-9 {
			t.Errorf("%s: point %d = (%v, %v), want (%v, %v)", s.Name, i, s.T[i], s.V[i], wantT[i], wantV[i])
		}
	}
}

func TestBuilderLeavesOut(t *testing.T) {
	res := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	for _, name := range []string{
		"vllm:e2e_request_latency_seconds:p50", // nothing finished in the interval
		"vllm:gpu_cache_usage_perc",            // not exposed
		"vllm:prompt_tokens_total",             // not chosen
		"process_resident_memory_bytes",
		"python_gc_objects_collected_total",
		"vllm:time_to_first_token_seconds_created",
	} {
		if res.Lookup(name) != nil {
			t.Errorf("%s: present, want left out", name)
		}
	}
	if got, want := len(res.Series), 6; got != want {
		t.Errorf("%d series, want %d: %v", got, want, names(res))
	}
}

// llama.cpp's running and waiting gauges are all of its exposition kept:
// its token counters and throughput gauges explain no latency.
func TestBuilderLlamaCpp(t *testing.T) {
	res := build(t, "testdata/llamacpp_1.txt", "testdata/llamacpp_2.txt")
	if got, want := strings.Join(names(res), ","), "llamacpp:requests_processing,llamacpp:requests_deferred"; got != want {
		t.Errorf("series %s, want %s", got, want)
	}
}

func names(r *Result) []string {
	var out []string
	for _, s := range r.Series {
		out = append(out, s.Name)
	}
	return out
}

// A counter declared the way Python's prometheus_client declares it
// (TYPE without "_total"), going down when the server restarts.
const preemptions = `# HELP vllm:num_preemptions Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions counter
vllm:num_preemptions_total{model_name="m"} %s
vllm:num_preemptions_created{model_name="m"} 1.7e+09
`

func TestRateCounterReset(t *testing.T) {
	var scrapes []string
	for _, v := range []string{"100", "150", "150", "20", "50"} {
		scrapes = append(scrapes, fmt.Sprintf(preemptions, v))
	}
	s := build(t, scrapes...).Lookup("vllm:num_preemptions_total:rate")
	if s == nil {
		t.Fatal("rate series missing")
	}
	// A restart between 150 and 20: the 20 are the increase, not -130.
	checkPoints(t, s, []float64{10, 20, 30, 40}, []float64{5, 0, 2, 3})
}

func TestHistogramReset(t *testing.T) {
	const h = `# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{le="1.0"} %d
vllm:e2e_request_latency_seconds_bucket{le="2.0"} %d
vllm:e2e_request_latency_seconds_bucket{le="+Inf"} %[2]d
vllm:e2e_request_latency_seconds_count %[2]d
vllm:e2e_request_latency_seconds_sum 1
`
	// 100 fast requests, then a restart and 10 slow ones: the restarted
	// counts are the interval's, not a negative delta.
	s := build(t, fmt.Sprintf(h, 0, 0), fmt.Sprintf(h, 100, 100), fmt.Sprintf(h, 0, 10)).
		Lookup("vllm:e2e_request_latency_seconds:p50")
	if s == nil {
		t.Fatal("p50 series missing")
	}
	checkPoints(t, s, []float64{10, 20}, []float64{500, 1500})
}
