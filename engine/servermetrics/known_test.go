package servermetrics

import (
	"strings"
	"testing"
)

func TestMetricsListsTheTable(t *testing.T) {
	byName := map[string]Metric{}
	for _, m := range Metrics() {
		if _, dup := byName[m.Name]; dup {
			t.Errorf("%s listed twice", m.Name)
		}
		byName[m.Name] = m
		if kindOf(m.Name) != m.Server {
			t.Errorf("%s: server %q, its prefix says %q", m.Name, m.Server, kindOf(m.Name))
		}
		// TGI and the DCGM exporter name their counters without _total.
		if m.Type == "counter" && m.Server != ServerTGI && m.Server != ServerDCGM && !strings.HasSuffix(m.Name, "_total") {
			t.Errorf("%s: a counter without _total", m.Name)
		}
	}
	for name, want := range map[string]string{
		"vllm:num_requests_waiting":            "gauge",
		"vllm:prefix_cache_queries_total":      "counter", // only a ratio's divisor
		"vllm:time_to_first_token_seconds":     "histogram",
		"sglang:token_usage":                   "gauge",
		"tgi_request_generated_tokens":         "histogram", // read through its _sum
		"llamacpp:prompt_tokens_total":         "counter",
		"llamacpp:kv_cache_usage_ratio":        "gauge",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "counter",
		"DCGM_FI_DEV_POWER_USAGE":              "gauge",
	} {
		if got := byName[name].Type; got != want {
			t.Errorf("%s: type %q, want %q", name, got, want)
		}
	}
	if _, ok := byName["vllm:num_requests_swapped"]; ok {
		t.Error("a metric the scraper does not read is listed")
	}
}
