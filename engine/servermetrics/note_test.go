package servermetrics

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestExplain(t *testing.T) {
	const u = "http://127.0.0.1:9/metrics"
	queue := []Series{{Name: "vllm:num_requests_waiting"}}
	tests := []struct {
		name string
		res  Result
		want string
	}{
		{"never scraped", Result{URL: u}, ""},
		{"series with a queue", Result{URL: u, Scrapes: 3, Series: queue}, ""},
		{"every scrape failed", Result{URL: u, Scrapes: 3, Failures: 3},
			u + " answered no metrics in 3 scrapes; is it the server's Prometheus endpoint? (llama-server serves one only with --metrics)"},
		{"none known", Result{URL: u, Scrapes: 45, Families: 37, Examples: []string{"bar_latency", "foo_requests"}},
			"none of the 37 families at " + u + " is one llmload knows (e.g. bar_latency, foo_requests); known: vLLM, SGLang, TGI, llama.cpp"},
		{"one family", Result{URL: u, Scrapes: 2, Families: 1, Examples: []string{"up"}},
			"the one family at " + u + " is not one llmload knows (e.g. up); known: vLLM, SGLang, TGI, llama.cpp"},
		{"known, no points", Result{URL: u, Scrapes: 1, Families: 9, Known: 2, Server: ServerLlamaCpp},
			u + " exposes 2 metrics llmload knows (llama.cpp) but they gave no points in 1 scrape: rates and latencies need two scrapes with requests between them"},
		// A result from an older llmload, or merged from segments, has no counts.
		{"no counts", Result{URL: u, Scrapes: 4},
			u + " gave no series llmload knows in 4 scrapes; known: vLLM, SGLang, TGI, llama.cpp"},
		{"no queue gauge", Result{URL: u, Scrapes: 4, Series: []Series{{Name: "vllm:kv_cache_usage_perc"}}},
			u + " has no gauge of running or waiting requests llmload knows: the server's queue cannot corroborate a knee or a cliff"},
	}
	for _, tt := range tests {
		if got := tt.res.Explain(); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestScraperUnknownEndpoint: an endpoint of names llmload does not know
// is never a silent "0 series": the Result counts its families, quotes a
// few (the runtime's last) and says so.
func TestScraperUnknownEndpoint(t *testing.T) {
	var body strings.Builder
	body.WriteString("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n")
	body.WriteString("# TYPE go_goroutines gauge\ngo_goroutines 12\n")
	for i := range 35 {
		fmt.Fprintf(&body, "# TYPE acme_family_%02d gauge\nacme_family_%02d{shard=\"a\"} %d\n", i, i, i)
	}
	e := &exposition{bodies: []string{body.String()}}
	srv := serve(t, e)
	sc := Start(srv.URL+"/metrics", MinEvery, time.Now())
	waitFor(t, "two scrapes", func() bool { return e.served.Load() >= 2 })
	res := sc.Stop()
	if res.Failures != 0 || len(res.Series) != 0 {
		t.Fatalf("failures %d, series %v; want none of either", res.Failures, names(res))
	}
	if got, want := strings.Join(res.Examples, ","), "acme_family_00,acme_family_01,acme_family_02,acme_family_03,acme_family_04"; got != want {
		t.Errorf("examples %s, want %s", got, want)
	}
	want := "none of the 37 families at " + srv.URL + "/metrics is one llmload knows (e.g. acme_family_00, acme_family_01, " +
		"acme_family_02, acme_family_03, acme_family_04); known: vLLM, SGLang, TGI, llama.cpp"
	if res.Families != 37 || res.Known != 0 || res.Server != "" || res.Note != want {
		t.Errorf("families %d known %d server %q note\n %q\nwant 37 0 \"\"\n %q", res.Families, res.Known, res.Server, res.Note, want)
	}
}

// The runtime's families are quoted only when there is nothing else.
func TestExamples(t *testing.T) {
	tests := []struct{ names, want []string }{
		{[]string{"go_gc", "zeta", "process_x", "alpha"}, []string{"alpha", "zeta", "go_gc"}},
		{[]string{"process_b", "go_a"}, []string{"go_a", "process_b"}},
		{nil, []string{}},
	}
	for _, tt := range tests {
		if got := examples(tt.names, 3); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("examples(%v) = %v, want %v", tt.names, got, tt.want)
		}
	}
}

// TestRoleOf: a series written before roles existed gets its role from
// its name; one with a role keeps it.
func TestRoleOf(t *testing.T) {
	tests := []struct {
		s    Series
		want Role
	}{
		{Series{Name: "vllm:num_requests_waiting"}, RoleWaiting},
		{Series{Name: "vllm:gpu_cache_usage_perc"}, RoleKVCache},
		{Series{Name: "sglang:time_to_first_token_seconds:p99"}, RoleTTFT.P99()},
		{Series{Name: "llamacpp:requests_deferred"}, RoleWaiting},
		{Series{Name: "tgi_request_input_length_sum:rate"}, RolePromptTokens},
		{Series{Name: "tgi_request_inference_duration:p50"}, ""},
		{Series{Name: "acme:pending", Role: RoleWaiting}, RoleWaiting},
		{Series{Name: "acme:pending"}, ""},
	}
	for _, tt := range tests {
		if got := RoleOf(&tt.s); got != tt.want {
			t.Errorf("RoleOf(%s) = %q, want %q", tt.s.Name, got, tt.want)
		}
	}
}

func TestServerKind(t *testing.T) {
	tests := []struct {
		res  Result
		want string
	}{
		{Result{Server: ServerTGI}, ServerTGI},
		{Result{Series: []Series{{Name: "llamacpp:requests_processing"}}}, ServerLlamaCpp},
		{Result{Series: []Series{{Name: "acme:x"}}}, ""},
	}
	for _, tt := range tests {
		if got := tt.res.ServerKind(); got != tt.want {
			t.Errorf("ServerKind = %q, want %q", got, tt.want)
		}
	}
	if got, want := ServerName(ServerLlamaCpp), "llama.cpp"; got != want {
		t.Errorf("ServerName = %q, want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	s := Series{Name: "vllm:time_to_first_token_seconds:p99", T: []float64{5, 10, 15, 20}, V: []float64{100, 300, 200, 900}}
	g := Series{Name: "vllm:num_requests_waiting", T: s.T, V: s.V}
	tests := []struct {
		s        *Series
		from, to float64
		want     float64
		ok       bool
	}{
		{&s, 8, 16, 300, true}, // a tail: its worst interval
		{&g, 8, 16, 250, true}, // a gauge: its mean
		{&g, 21, 30, 0, false},
	}
	for _, tt := range tests {
		if got, ok := tt.s.Within(tt.from, tt.to); got != tt.want || ok != tt.ok {
			t.Errorf("%s.Within(%v, %v) = %v, %v; want %v, %v", tt.s.Name, tt.from, tt.to, got, ok, tt.want, tt.ok)
		}
	}
}
