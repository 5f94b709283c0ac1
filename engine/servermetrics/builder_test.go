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
		b.add(float64(10*i), i, parse(t, s))
	}
	return &Result{Series: b.series()}
}

// TestBuilderRoles decodes two scrapes of each server, 10 s apart, into
// the roles every server maps to; want values are worked out by hand from
// the fixtures' counters and buckets.
func TestBuilderRoles(t *testing.T) {
	vllm := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	sglang := build(t, "testdata/sglang_1.txt", "testdata/sglang_2.txt")
	tgi := build(t, "testdata/tgi_1.txt", "testdata/tgi_2.txt")
	at0, at10 := []float64{0, 10}, []float64{10}
	tests := []struct {
		res   *Result
		role  Role
		name  string
		unit  string
		wantT []float64
		wantV []float64
	}{
		{vllm, RoleRunning, "vllm:num_requests_running", UnitRequests, at0, []float64{5, 6}},
		{vllm, RoleWaiting, "vllm:num_requests_waiting", UnitRequests, at0, []float64{1, 7}},
		{vllm, RoleKVCache, "vllm:kv_cache_usage_perc", UnitFraction, at0, []float64{0.25, 0.5}},
		{vllm, RolePrefixHit, "vllm:prefix_cache_hits_total/vllm:prefix_cache_queries_total", UnitFraction, at10, []float64{0.5}},
		{vllm, RolePromptTokens, "vllm:prompt_tokens_total:rate", UnitTokensPerSecond, at10, []float64{1000}},
		{vllm, RoleOutputTokens, "vllm:generation_tokens_total:rate", UnitTokensPerSecond, at10, []float64{2000}},
		{vllm, RolePreemptions, "vllm:num_preemptions_total:rate", UnitPerSecond, at10, []float64{2}},
		{vllm, RoleTTFT.P50(), "vllm:time_to_first_token_seconds:p50", UnitMS, at10, []float64{60}},
		{vllm, RoleTTFT.P99(), "vllm:time_to_first_token_seconds:p99", UnitMS, at10, []float64{500}},
		{vllm, RoleITL.P50(), "vllm:inter_token_latency_seconds:p50", UnitMS, at10, []float64{10}},
		{vllm, RoleITL.P99(), "vllm:inter_token_latency_seconds:p99", UnitMS, at10, []float64{24.7}},
		{vllm, RoleQueueTime.P50(), "vllm:request_queue_time_seconds:p50", UnitMS, at10, []float64{62.5}},
		{vllm, RoleQueueTime.P99(), "vllm:request_queue_time_seconds:p99", UnitMS, at10, []float64{955}},

		{sglang, RoleRunning, "sglang:num_running_reqs", UnitRequests, at0, []float64{12, 30}},
		{sglang, RoleWaiting, "sglang:num_queue_reqs", UnitRequests, at0, []float64{0, 4}},
		{sglang, RoleKVCache, "sglang:token_usage", UnitFraction, at0, []float64{0.1, 0.93}},
		// Two data-parallel ranks' hit rates: a mean, not a sum.
		{sglang, RolePrefixHit, "sglang:cache_hit_rate", UnitFraction, at0, []float64{0.3, 0.6}},
		{sglang, RolePromptTokens, "sglang:prompt_tokens_total:rate", UnitTokensPerSecond, at10, []float64{1000}},
		{sglang, RoleOutputTokens, "sglang:generation_tokens_total:rate", UnitTokensPerSecond, at10, []float64{2000}},
		{sglang, RoleTTFT.P50(), "sglang:time_to_first_token_seconds:p50", UnitMS, at10, []float64{200}},
		{sglang, RoleTTFT.P99(), "sglang:time_to_first_token_seconds:p99", UnitMS, at10, []float64{596}},
		{sglang, RoleITL.P50(), "sglang:inter_token_latency_seconds:p50", UnitMS, at10, []float64{20}},
		{sglang, RoleITL.P99(), "sglang:inter_token_latency_seconds:p99", UnitMS, at10, []float64{39.6}},
		{sglang, RoleE2E.P50(), "sglang:e2e_request_latency_seconds:p50", UnitMS, at10, []float64{2000}},
		{sglang, RoleE2E.P99(), "sglang:e2e_request_latency_seconds:p99", UnitMS, at10, []float64{3960}},
		{sglang, RoleQueueTime.P50(), "sglang:queue_time_seconds:p50", UnitMS, at10, []float64{100}},
		{sglang, RoleQueueTime.P99(), "sglang:queue_time_seconds:p99", UnitMS, at10, []float64{488}},

		{tgi, RoleRunning, "tgi_batch_current_size", UnitRequests, at0, []float64{3, 8}},
		{tgi, RoleWaiting, "tgi_queue_size", UnitRequests, at0, []float64{0, 5}},
		// TGI counts tokens per request in histograms: their sums' rates.
		{tgi, RolePromptTokens, "tgi_request_input_length_sum:rate", UnitTokensPerSecond, at10, []float64{600}},
		{tgi, RoleOutputTokens, "tgi_request_generated_tokens_sum:rate", UnitTokensPerSecond, at10, []float64{300}},
		{tgi, RoleQueueTime.P50(), "tgi_request_queue_duration:p50", UnitMS, at10, []float64{1.1390625}},
		{tgi, RoleQueueTime.P99(), "tgi_request_queue_duration:p99", UnitMS, at10, []float64{65.24618966674804}},
		{tgi, RoleTPOT.P50(), "tgi_request_mean_time_per_token_duration:p50", UnitMS, at10, []float64{16.867023925781247}},
		{tgi, RoleTPOT.P99(), "tgi_request_mean_time_per_token_duration:p99", UnitMS, at10, []float64{42.91360125732421}},
		{tgi, RoleE2E.P50(), "tgi_request_duration:p50", UnitMS, at10, []float64{1122.274146401882}},
		{tgi, RoleE2E.P99(), "tgi_request_duration:p99", UnitMS, at10, []float64{1672.1884781388042}},
	}
	for _, tt := range tests {
		s := tt.res.ByRole(tt.role)
		if s == nil {
			t.Errorf("%s (%s): missing", tt.role, tt.name)
			continue
		}
		if s.Name != tt.name || s.Role != tt.role || s.Unit != tt.unit {
			t.Errorf("%s: series %q role %q unit %q, want %q %q %q", tt.role, s.Name, s.Role, s.Unit, tt.name, tt.role, tt.unit)
		}
		checkPoints(t, s, tt.wantT, tt.wantV)
	}
}

// TestBuilderServer: the kind of server and the counts of what it exposed.
func TestBuilderServer(t *testing.T) {
	tests := []struct {
		files              []string
		server             string
		families, known    int
		unroled, withRoles int // series with no role and with one
	}{
		{[]string{"testdata/vllm_1.txt", "testdata/vllm_2.txt"}, ServerVLLM, 16, 12, 0, 13},
		{[]string{"testdata/sglang_1.txt", "testdata/sglang_2.txt"}, ServerSGLang, 17, 10, 0, 14},
		{[]string{"testdata/tgi_1.txt", "testdata/tgi_2.txt"}, ServerTGI, 13, 8, 2, 10},
	}
	for _, tt := range tests {
		b := newBuilder()
		for i, f := range tt.files {
			b.add(float64(10*i), i, parse(t, f))
		}
		res := &Result{Scrapes: len(tt.files), Series: b.series()}
		b.describe(res)
		if res.Server != tt.server || res.Families != tt.families || res.Known != tt.known || res.Examples != nil || res.Note != "" {
			t.Errorf("%s: server %q families %d known %d examples %q note %q, want %q %d %d none none",
				tt.files[0], res.Server, res.Families, res.Known, res.Examples, res.Note, tt.server, tt.families, tt.known)
		}
		unroled, withRoles := 0, 0
		for _, s := range res.Series {
			if s.Role == "" {
				unroled++
			} else {
				withRoles++
			}
		}
		if unroled != tt.unroled || withRoles != tt.withRoles {
			t.Errorf("%s: %d series without a role, %d with; want %d, %d: %v", tt.files[0], unroled, withRoles, tt.unroled, tt.withRoles, names(res))
		}
	}
}

func checkPoints(t *testing.T, s *Series, wantT, wantV []float64) {
	t.Helper()
	if len(s.T) != len(wantT) || len(s.V) != len(wantV) {
		t.Errorf("%s: t=%v v=%v, want t=%v v=%v", s.Name, s.T, s.V, wantT, wantV)
		return
	}
	for i := range wantT {
		if s.T[i] != wantT[i] || math.Abs(s.V[i]-wantV[i]) > 1e-9*math.Max(1, math.Abs(wantV[i])) {
			t.Errorf("%s: point %d = (%v, %v), want (%v, %v)", s.Name, i, s.T[i], s.V[i], wantT[i], wantV[i])
		}
	}
}

func TestBuilderLeavesOut(t *testing.T) {
	res := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	for _, name := range []string{
		"vllm:e2e_request_latency_seconds:p50",   // nothing finished in the interval
		"vllm:gpu_cache_usage_perc",              // not exposed
		"vllm:time_per_output_token_seconds:p50", // inter_token_latency_seconds under its older name
		"vllm:prefix_cache_queries_total:rate",   // only the divisor of the hit ratio
		"process_resident_memory_bytes",
		"python_gc_objects_collected_total",
		"vllm:time_to_first_token_seconds_created",
	} {
		if res.Lookup(name) != nil {
			t.Errorf("%s: present, want left out", name)
		}
	}
	if got, want := len(res.Series), 13; got != want {
		t.Errorf("%d series, want %d: %v", got, want, names(res))
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

// A ratio of two counters: an interval without queries has no point, and
// a restart takes the counts since it as the interval's.
func TestRatioReset(t *testing.T) {
	const prefix = `vllm:prefix_cache_hits_total{engine="0"} %d
vllm:prefix_cache_queries_total{engine="0"} %d
`
	var scrapes []string
	for _, hq := range [][2]int{{0, 0}, {50, 100}, {50, 100}, {140, 200}, {30, 40}} {
		scrapes = append(scrapes, fmt.Sprintf(prefix, hq[0], hq[1]))
	}
	s := build(t, scrapes...).ByRole(RolePrefixHit)
	if s == nil {
		t.Fatal("hit ratio missing")
	}
	checkPoints(t, s, []float64{10, 30, 40}, []float64{0.5, 0.9, 0.75})
}

// llama.cpp counts cached prompt tokens apart from the processed ones: the
// hit ratio is the cached share of both.
func TestShare(t *testing.T) {
	const tokens = "llamacpp:prompt_tokens_cached_total %d\nllamacpp:prompt_tokens_total %d\n"
	s := build(t, fmt.Sprintf(tokens, 0, 100), fmt.Sprintf(tokens, 300, 200)).ByRole(RolePrefixHit)
	if s == nil || s.Name != "llamacpp:prompt_tokens_cached_total:share" {
		t.Fatalf("hit ratio %+v", s)
	}
	checkPoints(t, s, []float64{10}, []float64{0.75})
}

// TestBuilderLlamaCpp reads two scrapes of a real llama-server --metrics
// (4 slots, 24 requests at once, taken 2 s apart and replayed 10 s apart
// here), and one of an older version with KV-cache gauges. llama.cpp has
// no histograms: its latency is the mean time per generated token, from
// two counters.
func TestBuilderLlamaCpp(t *testing.T) {
	real := build(t, "testdata/llamacpp_real_1.txt", "testdata/llamacpp_real_2.txt")
	older := build(t, "testdata/llamacpp_1.txt", "testdata/llamacpp_2.txt")
	at0, at10 := []float64{0, 10}, []float64{10}
	tests := []struct {
		res   *Result
		role  Role
		name  string
		wantT []float64
		wantV []float64
	}{
		{real, RoleRunning, "llamacpp:requests_processing", at0, []float64{4, 4}},
		{real, RoleWaiting, "llamacpp:requests_deferred", at0, []float64{18, 14}},
		// 124 prompt tokens from the cache, 107 processed.
		{real, RolePrefixHit, "llamacpp:prompt_tokens_cached_total:share", at10, []float64{124.0 / 231}},
		{real, RolePromptTokens, "llamacpp:prompt_tokens_total:rate", at10, []float64{10.7}},
		{real, RoleOutputTokens, "llamacpp:tokens_predicted_total:rate", at10, []float64{160}},
		// 7.865 s of slot time for 1,600 tokens.
		{real, RoleITL.Mean(), "llamacpp:tokens_predicted_seconds_total/llamacpp:tokens_predicted_total", at10, []float64{4.915625}},
		{older, RoleRunning, "llamacpp:requests_processing", at0, []float64{1, 4}},
		{older, RoleWaiting, "llamacpp:requests_deferred", at0, []float64{0, 3}},
		{older, RoleKVCache, "llamacpp:kv_cache_usage_ratio", at0, []float64{0.12, 0.12}},
	}
	for _, tt := range tests {
		s := tt.res.ByRole(tt.role)
		if s == nil || s.Name != tt.name {
			t.Errorf("%s: series %+v, want %s", tt.role, s, tt.name)
			continue
		}
		checkPoints(t, s, tt.wantT, tt.wantV)
	}
	prefill := real.Lookup("llamacpp:prompt_seconds_total/llamacpp:prompt_tokens_total")
	if prefill == nil || prefill.Role != "" || prefill.Unit != UnitMS {
		t.Fatalf("prefill ms per token %+v, want one without a role", prefill)
	}
	checkPoints(t, prefill, at10, []float64{(0.408275 - 0.366882) / 107 * 1000})
	for _, name := range []string{"llamacpp:prompt_tokens_seconds", "llamacpp:predicted_tokens_seconds", "llamacpp:n_busy_slots_per_decode"} {
		if real.Lookup(name) != nil {
			t.Errorf("%s kept: it restarts on every read, or averages since the start", name)
		}
	}
}

// An idle llama-server, scraped once: its gauges, and an explanation for
// nothing else.
func TestBuilderLlamaCppIdle(t *testing.T) {
	b := newBuilder()
	b.add(0, 0, parse(t, "testdata/llamacpp_real_idle.txt"))
	res := &Result{URL: "u", Scrapes: 1, Series: b.series()}
	b.describe(res)
	if got, want := strings.Join(names(res), ","), "llamacpp:requests_processing,llamacpp:requests_deferred"; got != want {
		t.Errorf("series %s, want %s", got, want)
	}
	if res.Server != ServerLlamaCpp || res.Families != 15 || res.Known != 7 || res.Note != "" {
		t.Errorf("server %q families %d known %d note %q, want llamacpp 15 7 none", res.Server, res.Families, res.Known, res.Note)
	}
}
