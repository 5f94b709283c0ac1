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
// NVIDIA's DCGM exporter is read the same way, as a GPU exporter beside
// the servers (ServerDCGM): its utilisation, power, framebuffer and
// energy counter become one series per device (Series.GPU), kept apart in
// Result.GPUs; StageGPU, StageParts and StageSpec read a stage window's
// GPUs, the server's queue, prefill and decode times, and its speculative
// decoding.
//
// Parsing uses the Prometheus project's expfmt parser; the package only
// chooses and derives series. Counts of requests are summed over their
// label sets, fractions averaged; counters become rates per second, or a
// ratio of two counters' increases (hits over queries); histograms become
// a p50 and a p99 per scrape interval, from the change in their buckets,
// as Prometheus' histogram_quantile does over rate(...[interval]).
//
// A service of several replicas, or a run of several targets, is several
// endpoints (StartAll): each is scraped on its own and kept apart in
// Result.Endpoints, and the series that add up across them — requests
// running and waiting, token and event rates — are summed scrape round by
// scrape round into the Result's own series, which the analysis, the
// reports and a capacity search's wait (Scraper.Queue) read. Fractions
// such as KV-cache use are never averaged into one figure: one full
// replica would hide behind an idle one.
//
// Discover finds a target's metrics at its origin's /metrics when none
// was named, and keeps them only when they are a known server's (Kind);
// Probe is the one read that checks a named endpoint before the load.
//
// A scraper never disturbs the load it watches: each endpoint has its own
// HTTP client with a short timeout and its own goroutine, reads a bounded
// body, and records failures instead of returning them.
package servermetrics
