package servermetrics

// Metric is one metric of a server's /metrics that llmload reads, as the
// server exposes it, so that other views of the same server (the Grafana
// dashboard in deploy/grafana) name only metrics the scraper knows.
type Metric struct {
	Server string // its kind, ServerVLLM ...
	Name   string // e.g. "vllm:num_requests_waiting"; a histogram's name without _bucket
	Type   string // "gauge", "counter" or "histogram"
}

// Metrics lists the metrics llmload reads from every known server, the
// divisors of its ratios included, in the order of its table (a newer
// name before an older one). The list is built anew on each call.
func Metrics() []Metric {
	var ms []Metric
	seen := map[string]bool{}
	add := func(server, name, typ string) {
		if !seen[name] {
			seen[name] = true
			ms = append(ms, Metric{Server: server, Name: name, Type: typ})
		}
	}
	for _, c := range chosen {
		add(c.server, c.name, c.metricType())
		if c.per != "" {
			add(c.server, c.per, "counter")
		}
	}
	add(ServerVLLM, specPerPos, "counter")
	for _, m := range gpuMetrics {
		typ := "gauge"
		if m.counter {
			typ = "counter"
		}
		add(ServerDCGM, m.name, typ)
	}
	return ms
}

// metricType is the Prometheus type of the metric a choice reads.
func (c choice) metricType() string {
	switch c.kind {
	case kindSum, kindMean:
		return "gauge"
	case kindHistogram, kindSumRate:
		return "histogram"
	}
	return "counter"
}
