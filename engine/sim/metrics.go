package sim

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bucket bounds, in seconds, of the simulator's latency histograms: vLLM's
// own (vllm/v1/metrics/loggers.py at commit 005a810b: the e2e buckets are
// its request_latency_buckets, which the queue, prefill, decode and
// inference histograms share), so dashboards and quantiles built for vLLM
// read the simulator alike.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
		30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// latencyHistogram is a Prometheus classic histogram of durations. Safe
// for concurrent use.
type latencyHistogram struct {
	bounds []float64

	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
}

func newLatencyHistogram(bounds []float64) *latencyHistogram {
	return &latencyHistogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe counts one duration in the first bucket whose bound holds it.
func (h *latencyHistogram) observe(d time.Duration) {
	v := d.Seconds()
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// snapshot returns cumulative counts per bound (+Inf last) and the sum.
func (h *latencyHistogram) snapshot() (cum []uint64, sum float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cum = make([]uint64, len(h.counts))
	var total uint64
	for i, c := range h.counts {
		total += c
		cum[i] = total
	}
	return cum, h.sum
}

// serverMetrics are the Prometheus metrics the simulator exposes. Safe for
// concurrent use.
type serverMetrics struct {
	ttft, e2e                         *latencyHistogram
	queue, prefill, decode, inference *latencyHistogram
}

func newServerMetrics() *serverMetrics {
	return &serverMetrics{
		ttft: newLatencyHistogram(ttftBuckets), e2e: newLatencyHistogram(e2eBuckets),
		queue: newLatencyHistogram(e2eBuckets), prefill: newLatencyHistogram(e2eBuckets),
		decode: newLatencyHistogram(e2eBuckets), inference: newLatencyHistogram(e2eBuckets),
	}
}

// phases records the phases of a request generated to its end, as its
// span's attributes time them (vLLM's FinishedRequestStats): queue from
// asking for a batch slot to holding one, prefill from then to the first
// token, decode from the first token to the last, inference from the slot
// to the last token.
func (m *serverMetrics) phases(c *completion) {
	if c.scheduled.IsZero() || c.firstToken.IsZero() || c.lastToken.IsZero() {
		return
	}
	m.queue.observe(c.scheduled.Sub(c.queued))
	m.prefill.observe(c.firstToken.Sub(c.scheduled))
	m.decode.observe(c.lastToken.Sub(c.firstToken))
	m.inference.observe(c.lastToken.Sub(c.scheduled))
}

// completed records a request generated to its end, timed from its arrival.
func (m *serverMetrics) completed(ttft, e2e time.Duration) {
	m.ttft.observe(ttft)
	m.e2e.observe(e2e)
}

// serveMetrics answers GET /metrics in the Prometheus text format, with
// vLLM's metric names and its model_name label.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	running, waiting := s.sched.counts()
	p := promWriter{w: bufio.NewWriter(w), labels: `model_name="` + escapeLabel(s.cfg.Model) + `"`}
	p.scalar("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(running))
	p.scalar("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(waiting))
	p.scalar("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", s.cache.usage())
	p.scalar("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", 0)
	p.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", s.metrics.ttft)
	p.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", s.metrics.e2e)
	p.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", s.metrics.queue)
	p.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", s.metrics.inference)
	p.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", s.metrics.prefill)
	p.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", s.metrics.decode)
	s.spec.write(p)
	_ = p.w.Flush() // a scraper that went away needs no answer
}

// promWriter writes metric families in the Prometheus text format, every
// sample with the same labels.
type promWriter struct {
	w      *bufio.Writer
	labels string
}

func (p promWriter) header(name, typ, help string) {
	p.w.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

func (p promWriter) scalar(name, typ, help string, v float64) {
	p.header(name, typ, help)
	p.w.WriteString(name + "{" + p.labels + "} " + formatFloat(v) + "\n")
}

func (p promWriter) histogram(name, help string, h *latencyHistogram) {
	p.header(name, "histogram", help)
	cum, sum := h.snapshot()
	for i, c := range cum {
		le := "+Inf"
		if i < len(h.bounds) {
			le = formatFloat(h.bounds[i])
		}
		p.w.WriteString(name + `_bucket{le="` + le + `",` + p.labels + "} " + strconv.FormatUint(c, 10) + "\n")
	}
	p.w.WriteString(name + "_count{" + p.labels + "} " + strconv.FormatUint(cum[len(cum)-1], 10) + "\n")
	p.w.WriteString(name + "_sum{" + p.labels + "} " + formatFloat(sum) + "\n")
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// escapeLabel escapes a label value as the text format requires.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
