// Package servermetrics polls a target's Prometheus endpoint (vLLM's,
// SGLang's or TGI's /metrics) during a run and keeps the few series that
// explain what the client measured: requests running and queued, KV-cache
// fill, preemptions, and the server's own latency histograms. Seen beside
// the client's TTFT, they tell a queue from a slow prefill, and a server
// limit from a network one.
//
// Parsing uses the Prometheus project's expfmt parser; the package only
// chooses and derives series. Gauges are summed over their label sets;
// counters become rates per second; histograms become a p50 and a p99 per
// scrape interval, from the change in their buckets, as Prometheus'
// histogram_quantile does over rate(...[interval]).
//
// A scraper never disturbs the load it watches: it has its own HTTP client
// with a short timeout, reads a bounded body, runs in one goroutine and
// records failures instead of returning them.
package servermetrics
