package servermetrics

import (
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// kind says how a chosen metric becomes series.
type kind int

const (
	kindGauge     kind = iota // summed over label sets, one point per scrape
	kindRate                  // a counter, as increase per second between scrapes
	kindHistogram             // p50 and p99 per scrape interval, in ms
)

// choice is one metric worth keeping, as a server exposes it.
type choice struct {
	name string
	kind kind
	unit string // of the derived series; histograms are always UnitMS
}

// chosen are the metrics kept, in the order their series appear: what
// explains a latency (queueing, batch size, cache pressure, preemption and
// the server's own view of the latency). Anything else is ignored.
var chosen = []choice{
	{"vllm:num_requests_running", kindGauge, UnitRequests},
	{"vllm:num_requests_waiting", kindGauge, UnitRequests},
	{"vllm:gpu_cache_usage_perc", kindGauge, UnitFraction},
	{"vllm:kv_cache_usage_perc", kindGauge, UnitFraction},
	{"vllm:num_preemptions_total", kindRate, UnitPerSecond},
	{"vllm:time_to_first_token_seconds", kindHistogram, UnitMS},
	{"vllm:e2e_request_latency_seconds", kindHistogram, UnitMS},
	{"vllm:inter_token_latency_seconds", kindHistogram, UnitMS},
	{"vllm:time_per_output_token_seconds", kindHistogram, UnitMS},
	{"sglang:num_running_reqs", kindGauge, UnitRequests},
	{"sglang:num_queue_reqs", kindGauge, UnitRequests},
	{"sglang:token_usage", kindGauge, UnitFraction},
	{"sglang:time_to_first_token_seconds", kindHistogram, UnitMS},
	{"tgi_queue_size", kindGauge, UnitRequests},
	{"tgi_batch_current_size", kindGauge, UnitRequests},
	{"llamacpp:requests_processing", kindGauge, UnitRequests},
	{"llamacpp:requests_deferred", kindGauge, UnitRequests},
}

// Quantiles derived from each chosen histogram, with their name suffixes.
var quantiles = []struct {
	q      float64
	suffix string
}{{0.50, ":p50"}, {0.99, ":p99"}}

// family finds a chosen metric in a scrape. A counter may sit under its
// name without "_total": Python's prometheus_client declares the TYPE
// without the suffix, and a parser may keep that name.
func (c choice) family(fams families) *dto.MetricFamily {
	if mf := fams[c.name]; mf != nil {
		return mf
	}
	if base, ok := strings.CutSuffix(c.name, "_total"); ok && c.kind == kindRate {
		return fams[base]
	}
	return nil
}

// sum adds a family's finite values over all its label sets; ok is false
// when no label set carried a usable value.
func sum(mf *dto.MetricFamily) (total float64, ok bool) {
	for _, m := range mf.GetMetric() {
		v, has := scalar(m)
		if has && !math.IsNaN(v) && !math.IsInf(v, 0) {
			total += v
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
