package analysis

import (
	"testing"

	"github.com/llmload/llmload/engine/servermetrics"
)

// TestServerRoles: every mapped server corroborates a TTFT cliff with its
// queue, read by role, and so does a server whose names llmload learned
// only as roles; a series of another role is no queue.
func TestServerRoles(t *testing.T) {
	var base corpusCase
	for _, cc := range loadCorpus(t) {
		if cc.Name == "server corroborates the cliff (llama.cpp-like)" {
			base = cc
		}
	}
	tests := []struct {
		kind             string
		waiting, running string
		role             bool // the series carry their roles, not a known name
		verdict          string
		text             string
	}{
		{"vllm", "vllm:num_requests_waiting", "vllm:num_requests_running", false, ServerAgrees,
			"queue grows from 8 VUs (vllm:num_requests_waiting 0 → 3.9)"},
		{"sglang", "sglang:num_queue_reqs", "sglang:num_running_reqs", false, ServerAgrees,
			"queue grows from 8 VUs (sglang:num_queue_reqs 0 → 3.9)"},
		{"tgi", "tgi_queue_size", "tgi_batch_current_size", false, ServerAgrees,
			"queue grows from 8 VUs (tgi_queue_size 0 → 3.9)"},
		{"llamacpp", "llamacpp:requests_deferred", "llamacpp:requests_processing", false, ServerAgrees,
			"queue grows from 8 VUs (llamacpp:requests_deferred 0 → 3.9)"},
		{"by role", "acme:pending", "acme:active", true, ServerAgrees,
			"queue grows from 8 VUs (acme:pending 0 → 3.9)"},
		// Known names of other roles: no queue to read, so no check.
		{"not a queue", "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total:rate", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			stages, server := base.stages(t)
			for i := range server.Metrics.Series {
				s := &server.Metrics.Series[i]
				name, role := tt.running, servermetrics.RoleRunning
				if s.Name == "llamacpp:requests_deferred" {
					name, role = tt.waiting, servermetrics.RoleWaiting
				}
				s.Name = name
				if tt.role {
					s.Role = role
				}
			}
			cliff := Analyze(stages, base.slo(), server).Sweeps[0].Cliff
			if tt.text == "" {
				if cliff.Server != nil {
					t.Fatalf("server check %+v, want none", *cliff.Server)
				}
				return
			}
			if cliff.Server == nil {
				t.Fatal("no server check")
			}
			if got := cliff.Server; got.Verdict != tt.verdict || got.Text != tt.text || got.Series != tt.waiting {
				t.Errorf("server check %q %q (series %q), want %q %q (series %q)", got.Verdict, got.Text, got.Series, tt.verdict, tt.text, tt.waiting)
			}
		})
	}
}
