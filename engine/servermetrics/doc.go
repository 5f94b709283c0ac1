// Package servermetrics polls a target's Prometheus endpoint (vLLM's,
// SGLang's, TGI's or llama-server --metrics' /metrics) during a run and
// keeps the few series that explain what the client measured: requests
// running and queued, KV-cache fill, prefix-cache hits, token rates,
// preemptions, and the server's own latency histograms. Seen beside the
// client's TTFT, they tell a queue from a slow prefill, and a server limit
// from a network one.
//
// Every kept series has a Role, the same on every server (RoleWaiting is
// vLLM's num_requests_waiting, SGLang's num_queue_reqs, TGI's
// tgi_queue_size and llama.cpp's requests_deferred), so that the analysis
// and the reports read roles, never a server's names. An endpoint whose
// names llmload does not know, or that answered nothing usable, is
// described in Result.Note rather than left as an empty list.
//
// Parsing uses the Prometheus project's expfmt parser; the package only
// chooses and derives series. Counts of requests are summed over their
// label sets, fractions averaged; counters become rates per second, or a
// ratio of two counters' increases (hits over queries); histograms become
// a p50 and a p99 per scrape interval, from the change in their buckets,
// as Prometheus' histogram_quantile does over rate(...[interval]).
//
// A scraper never disturbs the load it watches: it has its own HTTP client
// with a short timeout, reads a bounded body, runs in one goroutine and
// records failures instead of returning them.
package servermetrics
