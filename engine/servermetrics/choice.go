package servermetrics

import (
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// kind says how a chosen metric becomes series.
type kind int

const (
	kindSum       kind = iota // a gauge summed over label sets (requests: engines and ranks add up)
	kindMean                  // a gauge averaged over label sets (a fraction each engine or rank reports of its own)
	kindRate                  // a counter, as increase per second between scrapes
	kindSumRate               // a histogram's _sum, as increase per second (TGI counts tokens in histograms)
	kindRatio                 // a counter's increase over another's, per scrape interval
	kindShare                 // a counter's increase over its own and another's together (hits over hits and misses)
	kindHistogram             // p50 and p99 per scrape interval, in ms
	kindIncrease              // a counter, as its increase over each scrape interval (a stage sums them)
)

// choice is one metric worth keeping, as a server exposes it.
type choice struct {
	server string // its kind, ServerVLLM ...
	name   string
	kind   kind
	role   Role   // "" for a series that is charted but has no role
	unit   string // of the derived series; histograms are always UnitMS
	per    string // kindRatio: the counter whose increase divides name's; kindShare: the other part of the whole
	scale  float64
}

func gaugeSum(server, name string, r Role, unit string) choice {
	return choice{server: server, name: name, kind: kindSum, role: r, unit: unit}
}

func gaugeMean(server, name string, r Role) choice {
	return gaugeMeanUnit(server, name, r, UnitFraction)
}

func gaugeMeanUnit(server, name string, r Role, unit string) choice {
	return choice{server: server, name: name, kind: kindMean, role: r, unit: unit}
}

func counterRate(server, name string, r Role, unit string) choice {
	return choice{server: server, name: name, kind: kindRate, role: r, unit: unit}
}

func histogramSumRate(server, name string, r Role, unit string) choice {
	return choice{server: server, name: name, kind: kindSumRate, role: r, unit: unit}
}

// counterRatio is Δname ÷ Δper × scale over each scrape interval.
func counterRatio(server, name, per string, r Role, unit string, scale float64) choice {
	return choice{server: server, name: name, kind: kindRatio, role: r, unit: unit, per: per, scale: scale}
}

// counterShare is Δname ÷ (Δname + Δother) over each scrape interval.
func counterShare(server, name, other string, r Role) choice {
	return choice{server: server, name: name, kind: kindShare, role: r, unit: UnitFraction, per: other, scale: 1}
}

// counterIncrease is a counter's increase over each scrape interval, so
// that a window's increase is the sum of its points and a ratio of two
// counters over a window is exact, not a mean of interval ratios.
func counterIncrease(server, name string, r Role) choice {
	return choice{server: server, name: name, kind: kindIncrease, role: r, unit: UnitCount}
}

// latency is a histogram in seconds whose series have r's P50 and P99 roles.
func latency(server, name string, r Role) choice {
	return choice{server: server, name: name, kind: kindHistogram, role: r, unit: UnitMS}
}

// chosen are the metrics kept, in the order their series appear: what
// explains a latency (queueing, batch size, cache pressure, token rates,
// preemption and the server's own view of the latency). Anything else is
// ignored. Two entries of one server with one role are one metric under
// its newer and its older name, newer first: only the first found is kept.
//
// Sources: vLLM's and SGLang's metrics documentation and collectors, TGI's
// metrics reference (its counters have no _total; its token counts are
// histograms), and a real llama-server --metrics (testdata/llamacpp_real_*;
// kv_cache_usage_ratio and kv_cache_tokens are from its older versions).
// llama.cpp's prompt_tokens_seconds and predicted_tokens_seconds gauges
// are left out: they restart on every read of /metrics, so another scraper
// would skew them, and the counters' ratios say the same without that;
// n_busy_slots_per_decode is an average since the server started.
var chosen = []choice{
	gaugeSum(ServerVLLM, "vllm:num_requests_running", RoleRunning, UnitRequests),
	gaugeSum(ServerVLLM, "vllm:num_requests_waiting", RoleWaiting, UnitRequests),
	gaugeMean(ServerVLLM, "vllm:kv_cache_usage_perc", RoleKVCache),
	gaugeMean(ServerVLLM, "vllm:gpu_cache_usage_perc", RoleKVCache), // before V1
	counterRatio(ServerVLLM, "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", RolePrefixHit, UnitFraction, 1),
	gaugeMean(ServerVLLM, "vllm:gpu_prefix_cache_hit_rate", RolePrefixHit), // before V1
	counterRate(ServerVLLM, "vllm:prompt_tokens_total", RolePromptTokens, UnitTokensPerSecond),
	counterRate(ServerVLLM, "vllm:generation_tokens_total", RoleOutputTokens, UnitTokensPerSecond),
	counterRate(ServerVLLM, "vllm:num_preemptions_total", RolePreemptions, UnitPerSecond),
	latency(ServerVLLM, "vllm:time_to_first_token_seconds", RoleTTFT),
	latency(ServerVLLM, "vllm:inter_token_latency_seconds", RoleITL),
	latency(ServerVLLM, "vllm:time_per_output_token_seconds", RoleITL), // the same, before its rename
	latency(ServerVLLM, "vllm:request_time_per_output_token_seconds", RoleTPOT),
	latency(ServerVLLM, "vllm:e2e_request_latency_seconds", RoleE2E),
	latency(ServerVLLM, "vllm:request_queue_time_seconds", RoleQueueTime),
	latency(ServerVLLM, "vllm:request_prefill_time_seconds", RolePrefillTime),
	latency(ServerVLLM, "vllm:request_decode_time_seconds", RoleDecodeTime),
	latency(ServerVLLM, "vllm:request_inference_time_seconds", RoleInference),
	// vllm/v1/spec_decode/metrics.py (SpecDecodingProm): the acceptance
	// rate is Δaccepted ÷ Δdraft tokens, the mean acceptance length
	// 1 + Δaccepted ÷ Δdrafts.
	counterIncrease(ServerVLLM, "vllm:spec_decode_num_drafts_total", RoleSpecDrafts),
	counterIncrease(ServerVLLM, "vllm:spec_decode_num_draft_tokens_total", RoleSpecDraftTokens),
	counterIncrease(ServerVLLM, "vllm:spec_decode_num_accepted_tokens_total", RoleSpecAccepted),

	gaugeSum(ServerSGLang, "sglang:num_running_reqs", RoleRunning, UnitRequests),
	gaugeSum(ServerSGLang, "sglang:num_queue_reqs", RoleWaiting, UnitRequests),
	gaugeMean(ServerSGLang, "sglang:token_usage", RoleKVCache),
	gaugeMean(ServerSGLang, "sglang:cache_hit_rate", RolePrefixHit),
	counterRate(ServerSGLang, "sglang:prompt_tokens_total", RolePromptTokens, UnitTokensPerSecond),
	counterRate(ServerSGLang, "sglang:generation_tokens_total", RoleOutputTokens, UnitTokensPerSecond),
	latency(ServerSGLang, "sglang:time_to_first_token_seconds", RoleTTFT),
	latency(ServerSGLang, "sglang:inter_token_latency_seconds", RoleITL),
	latency(ServerSGLang, "sglang:time_per_output_token_seconds", RoleITL), // the same, before its rename
	latency(ServerSGLang, "sglang:e2e_request_latency_seconds", RoleE2E),
	latency(ServerSGLang, "sglang:queue_time_seconds", RoleQueueTime),
	// python/sglang/srt/metrics/collector.py: gauges of the latest
	// logging interval's speculative acceptance, one per rank.
	gaugeMeanUnit(ServerSGLang, "sglang:spec_accept_rate", RoleSpecAcceptRate, UnitFraction),
	gaugeMeanUnit(ServerSGLang, "sglang:spec_accept_length", RoleSpecAcceptLength, UnitTokensPerStep),

	gaugeSum(ServerTGI, "tgi_batch_current_size", RoleRunning, UnitRequests),
	gaugeSum(ServerTGI, "tgi_queue_size", RoleWaiting, UnitRequests),
	histogramSumRate(ServerTGI, "tgi_request_input_length", RolePromptTokens, UnitTokensPerSecond),
	histogramSumRate(ServerTGI, "tgi_request_generated_tokens", RoleOutputTokens, UnitTokensPerSecond),
	latency(ServerTGI, "tgi_request_mean_time_per_token_duration", RoleTPOT),
	latency(ServerTGI, "tgi_request_duration", RoleE2E),
	latency(ServerTGI, "tgi_request_queue_duration", RoleQueueTime),
	latency(ServerTGI, "tgi_request_inference_duration", ""),

	gaugeSum(ServerLlamaCpp, "llamacpp:requests_processing", RoleRunning, UnitRequests),
	gaugeSum(ServerLlamaCpp, "llamacpp:requests_deferred", RoleWaiting, UnitRequests),
	gaugeMean(ServerLlamaCpp, "llamacpp:kv_cache_usage_ratio", RoleKVCache),
	gaugeSum(ServerLlamaCpp, "llamacpp:kv_cache_tokens", "", UnitTokens),
	// Its prompt tokens are those processed; the cached ones are counted apart.
	counterShare(ServerLlamaCpp, "llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total", RolePrefixHit),
	counterRate(ServerLlamaCpp, "llamacpp:prompt_tokens_total", RolePromptTokens, UnitTokensPerSecond),
	counterRate(ServerLlamaCpp, "llamacpp:tokens_predicted_total", RoleOutputTokens, UnitTokensPerSecond),
	counterRatio(ServerLlamaCpp, "llamacpp:tokens_predicted_seconds_total", "llamacpp:tokens_predicted_total", RoleITL.Mean(), UnitMS, 1000),
	counterRatio(ServerLlamaCpp, "llamacpp:prompt_seconds_total", "llamacpp:prompt_tokens_total", "", UnitMS, 1000),
}

// Quantiles derived from each chosen histogram, with their name suffixes
// and roles.
var quantiles = []struct {
	q      float64
	suffix string
	role   func(Role) Role
}{{0.50, ":p50", Role.P50}, {0.99, ":p99", Role.P99}}

// seriesCount is how many series the choice derives.
func (c choice) seriesCount() int {
	if c.kind == kindHistogram {
		return len(quantiles)
	}
	return 1
}

// seriesName names the i-th series derived from the choice's metric.
func (c choice) seriesName(i int) string {
	switch c.kind {
	case kindRate:
		return c.name + ":rate"
	case kindSumRate:
		return c.name + "_sum:rate"
	case kindRatio:
		return c.name + "/" + c.per
	case kindShare:
		return c.name + ":share"
	case kindHistogram:
		return c.name + quantiles[i].suffix
	case kindIncrease:
		return c.name + ":increase"
	}
	return c.name
}

// seriesRole is the role of the i-th series; "" for none.
func (c choice) seriesRole(i int) Role {
	if c.role == "" || c.kind != kindHistogram {
		return c.role
	}
	return quantiles[i].role(c.role)
}

// helpSuffix says how the i-th series was derived, after the metric's HELP.
func (c choice) helpSuffix(i int) string {
	switch c.kind {
	case kindMean:
		return " (mean over label sets)"
	case kindRate, kindSumRate:
		return " (per second)"
	case kindRatio:
		return " (its increase ÷ " + c.per + "'s, over each scrape interval)"
	case kindShare:
		return " (its increase ÷ its own and " + c.per + "'s, over each scrape interval)"
	case kindHistogram:
		return " (" + quantiles[i].suffix[1:] + " over each scrape interval)"
	case kindIncrease:
		return " (increase over each scrape interval)"
	}
	return ""
}

// lookup finds a metric in a scrape. A counter may sit under its name
// without "_total": Python's prometheus_client declares the TYPE without
// the suffix, and a parser may keep that name.
func lookup(fams families, name string) *dto.MetricFamily {
	if mf := fams[name]; mf != nil {
		return mf
	}
	if base, ok := strings.CutSuffix(name, "_total"); ok {
		if mf := fams[base]; mf != nil && mf.GetType() == dto.MetricType_COUNTER {
			return mf
		}
	}
	return nil
}

// sum adds a family's finite values over all its label sets; n is how
// many label sets carried a usable value.
func sum(mf *dto.MetricFamily) (total float64, n int) {
	for _, m := range mf.GetMetric() {
		v, has := scalar(m)
		if has && !math.IsNaN(v) && !math.IsInf(v, 0) {
			total += v
			n++
		}
	}
	return total, n
}

// mean averages a family's finite values over its label sets.
func mean(mf *dto.MetricFamily) (float64, bool) {
	total, n := sum(mf)
	if n == 0 {
		return 0, false
	}
	return total / float64(n), true
}

// histogramSum adds a family's histogram sums over its label sets.
func histogramSum(mf *dto.MetricFamily) (total float64, ok bool) {
	for _, m := range mf.GetMetric() {
		if h := m.GetHistogram(); h != nil && !math.IsNaN(h.GetSampleSum()) {
			total += h.GetSampleSum()
			ok = true
		}
	}
	return total, ok
}

// scalar is the value of a gauge, counter or untyped sample.
func scalar(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}
