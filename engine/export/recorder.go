package export

import (
	"cmp"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
	"github.com/prometheus/client_golang/prometheus"
)

// key is where a request belongs: its stage and its exported tags' values.
type key struct {
	scenario, stage string
	tags            [MaxTags]string
}

// reqKey is a request's series of llmload_requests_total (and, for a
// dirty request, of llmload_dirty_requests_total).
type reqKey struct {
	key
	failed            bool
	class, api, dirty string
	verdict           string // a dirty request's verdict, "" for clean ones
}

// reqSeries are the series one reqKey feeds: one map lookup per request
// finds them all.
type reqSeries struct {
	requests prometheus.Counter
	dirty    prometheus.Counter // nil for clean requests
	lat      *latSeries         // nil for failed and dirty requests
}

// latSeries are the series a successful clean request of one key feeds.
type latSeries struct {
	hists   [5]prometheus.Observer // in the order of Histograms()
	in, out prometheus.Counter
}

// stageKey is a stage of a scenario.
type stageKey struct{ scenario, stage string }

// stageSeries are the per-stage series without tags.
type stageSeries struct {
	lag     prometheus.Observer
	dropped prometheus.Counter
}

// checkKey is one check's outcome in a stage.
type checkKey struct {
	stageKey
	check string
	pass  bool
}

// recorder holds the series in a registry of its own. The sink methods
// are safe for concurrent use and, once a series exists, allocate
// nothing: the series are looked up in maps keyed by comparable structs
// under a read lock, since client_golang's WithLabelValues allocates its
// variadic slice on every call.
type recorder struct {
	reg  *prometheus.Registry
	tags []string // exported user tags, in label order
	open map[string]bool

	requests, inTok, outTok, dropped, dirty, checks *prometheus.CounterVec
	hists                                           [5]*prometheus.HistogramVec
	lag                                             *prometheus.HistogramVec
	inFlight, vus, target                           *prometheus.GaugeVec

	frozen atomic.Bool // the final counts are in place: later events are left out

	mu      sync.RWMutex
	reqs    map[reqKey]reqSeries
	lats    map[key]*latSeries
	stages  map[stageKey]stageSeries
	checked map[checkKey]prometheus.Counter
	limit   *tagLimit
}

// newRecorder makes the series; native adds native histograms beside the
// classic buckets.
func newRecorder(runID string, tags []string, open map[string]bool, native bool) *recorder {
	r := &recorder{
		reg: prometheus.NewRegistry(), tags: tags, open: open,
		reqs: map[reqKey]reqSeries{}, lats: map[key]*latSeries{}, stages: map[stageKey]stageSeries{},
		checked: map[checkKey]prometheus.Counter{}, limit: newTagLimit(tags),
	}
	reg := prometheus.WrapRegistererWith(prometheus.Labels{LabelRunID: runID}, r.reg)
	stage := []string{LabelScenario, LabelStage}
	tagged := append(stage[:2:2], tags...)
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(v)
		return v
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
		o := prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}
		if native {
			o.NativeHistogramBucketFactor, o.NativeHistogramMaxBucketNumber = NativeFactor, MaxNativeBuckets
		}
		v := prometheus.NewHistogramVec(o, labels)
		reg.MustRegister(v)
		return v
	}
	r.requests = counter(Requests, "Requests sent, by outcome (warmup left out).",
		append(tagged[:len(tagged):len(tagged)], LabelStatus, LabelErrorClass, LabelAPI, LabelDirty)...)
	for i, name := range Histograms() {
		r.hists[i] = histogram(name, histHelp[i], Buckets, tagged)
	}
	r.lag = histogram(ScheduleLag, "Delay of open-model iterations behind their intended start.", LagBuckets, stage)
	r.inTok = counter(InputTokens, "Input tokens of successful clean requests.", tagged...)
	r.outTok = counter(OutputTokens, "Output tokens of successful clean requests.", tagged...)
	r.inFlight = gauge(InFlight, "Iterations (and so requests) in flight.", LabelScenario)
	r.vus = gauge(ActiveVUs, "VUs iterating.", LabelScenario)
	r.dropped = counter(Dropped, "Open-model iterations dropped for want of a free VU.", stage...)
	r.dirty = counter(DirtyRequests, "Dirty-data requests, by kind and the server's verdict.",
		append(tagged[:len(tagged):len(tagged)], LabelKind, LabelVerdict)...)
	r.checks = counter(Checks, "Check evaluations, by check and result.", LabelScenario, LabelStage, LabelCheck, LabelResult)
	r.target = gauge(StageTarget, "The running stage's target: VUs or iterations per second (0 once it ended).",
		LabelScenario, LabelStage, LabelUnit)
	return r
}

var histHelp = [5]string{
	"Time to first token of successful clean streamed requests.",
	"Time to first content token of successful clean streamed requests.",
	"Time per output token of successful clean requests of two tokens or more.",
	"Gaps between text-carrying events of successful clean requests.",
	"End-to-end time of successful clean requests.",
}

// Sample records one request; warmup requests are left out.
func (r *recorder) Sample(s engine.Sample) {
	if s.Warmup || r.frozen.Load() {
		return
	}
	rk := reqKey{key: key{scenario: s.Scenario, stage: s.Stage}, api: cmp.Or(s.API, engine.EndpointChat), dirty: s.Dirty}
	for i, t := range r.tags {
		rk.tags[i] = s.Tags[t]
	}
	if s.Err != nil {
		rk.failed, rk.class = true, cmp.Or(s.Err.Class, "unknown")
	}
	if s.Dirty != "" {
		rk.verdict = engine.Verdict(&s.Result)
	}
	rs := r.reqSeries(rk)
	rs.requests.Inc()
	if rs.dirty != nil {
		rs.dirty.Inc()
	}
	l := rs.lat
	if l == nil {
		return
	}
	// A zero duration is "not measured" (engine.Result); a zero gap is real.
	for i, d := range [...]float64{s.TTFT.Seconds(), s.TTFC.Seconds(), s.TPOT.Seconds()} {
		if d > 0 {
			l.hists[i].Observe(d)
		}
	}
	for _, g := range s.ITL {
		l.hists[3].Observe(g.Seconds())
	}
	if s.E2E > 0 {
		l.hists[4].Observe(s.E2E.Seconds())
	}
	l.in.Add(float64(s.InputTokens))
	l.out.Add(float64(s.OutputTokens))
}

// reqSeries returns rk's series, making them on first use; a tag value
// beyond its bound is folded first.
func (r *recorder) reqSeries(rk reqKey) reqSeries {
	if rs, ok := cached(&r.mu, r.reqs, rk); ok {
		return rs
	}
	if r.limit.fold(&rk.tags) {
		// Folded values are looked up again: only admitted values enter
		// the cache, so a request id in a tag cannot grow it either.
		if rs, ok := cached(&r.mu, r.reqs, rk); ok {
			return rs
		}
	}
	return cache(&r.mu, r.reqs, rk, func() reqSeries { return r.newReqSeries(rk) })
}

// newReqSeries makes rk's series. Called with mu held.
func (r *recorder) newReqSeries(rk reqKey) reqSeries {
	vals := r.labelValues(rk.key)
	status := StatusOK
	if rk.failed {
		status = StatusError
	}
	rs := reqSeries{requests: r.requests.WithLabelValues(append(vals, status, rk.class, rk.api, rk.dirty)...)}
	if rk.dirty != "" {
		rs.dirty = r.dirty.WithLabelValues(append(vals, rk.dirty, rk.verdict)...)
	}
	if !rk.failed && rk.dirty == "" {
		rs.lat = r.latSeries(rk.key)
	}
	return rs
}

// latSeries returns k's latency and token series, making them on first
// use; k's tags are already folded. Called with mu held.
func (r *recorder) latSeries(k key) *latSeries {
	if l := r.lats[k]; l != nil {
		return l
	}
	vals := r.labelValues(k)
	l := &latSeries{in: r.inTok.WithLabelValues(vals...), out: r.outTok.WithLabelValues(vals...)}
	for i, h := range r.hists {
		l.hists[i] = h.WithLabelValues(vals...)
	}
	r.lats[k] = l
	return l
}

// labelValues are k's scenario, stage and tag values, with room to append.
func (r *recorder) labelValues(k key) []string {
	vals := make([]string, 0, 2+len(r.tags)+4)
	vals = append(vals, k.scenario, k.stage)
	return append(vals, k.tags[:len(r.tags)]...)
}

// stage returns the per-stage series, making them on first use.
func (r *recorder) stage(sk stageKey) stageSeries {
	if ss, ok := cached(&r.mu, r.stages, sk); ok {
		return ss
	}
	return cache(&r.mu, r.stages, sk, func() stageSeries {
		return stageSeries{lag: r.lag.WithLabelValues(sk.scenario, sk.stage), dropped: r.dropped.WithLabelValues(sk.scenario, sk.stage)}
	})
}

// cached is m[k] under mu's read lock: once a key's series exist, every
// request finds them without contending for the write lock.
func cached[K comparable, V any](mu *sync.RWMutex, m map[K]V, k K) (V, bool) {
	mu.RLock()
	v, ok := m[k]
	mu.RUnlock()
	return v, ok
}

// cache returns m[k], made by mk and stored under mu's write lock unless
// another goroutine stored it between cached's look and this one: series
// are made once per key.
func cache[K comparable, V any](mu *sync.RWMutex, m map[K]V, k K, mk func() V) V {
	mu.Lock()
	defer mu.Unlock()
	if v, ok := m[k]; ok {
		return v
	}
	v := mk()
	m[k] = v
	return v
}

// IterationStarted records an open-model iteration's schedule lag.
func (r *recorder) IterationStarted(m engine.IterationMark) {
	if m.Warmup || m.Scheduled.IsZero() || r.frozen.Load() {
		return
	}
	lag := max(m.Started.Sub(m.Scheduled), 0)
	r.stage(stageKey{m.Scenario, m.Stage}).lag.Observe(lag.Seconds())
}

// Dropped counts an open-model iteration that found no free VU.
func (r *recorder) Dropped(m engine.DropMark) {
	if r.frozen.Load() {
		return
	}
	r.stage(stageKey{m.Scenario, m.Stage}).dropped.Inc()
}

// Task is not exported live: a task's figures are the result file's and
// the thresholds', and its series would add a task-name label to every
// dashboard's cardinality before anyone asked for it.
func (r *recorder) Task(engine.TaskSample) {}

// Metric counts a check's evaluation; custom metrics are not exported.
func (r *recorder) Metric(m engine.MetricSample) {
	if m.Warmup || m.Name != "checks" || r.frozen.Load() {
		return
	}
	ck := checkKey{stageKey: stageKey{m.Scenario, m.Stage}, check: m.Tags["check"], pass: m.Value != 0}
	c, ok := cached(&r.mu, r.checked, ck)
	if !ok {
		c = cache(&r.mu, r.checked, ck, func() prometheus.Counter {
			result := ResultFail
			if ck.pass {
				result = ResultPass
			}
			return r.checks.WithLabelValues(ck.scenario, ck.stage, ck.check, result)
		})
	}
	c.Inc()
}

// StageStarted sets the stage's target; the scenario's previous stage
// has ended, and its target was set to 0 then.
func (r *recorder) StageStarted(m engine.StageMark) {
	if r.frozen.Load() {
		return
	}
	unit, v := r.unit(m)
	r.target.WithLabelValues(m.Scenario, m.Stage, unit).Set(v)
}

// StageEnded sets the stage's target to 0, so that the sum over a
// scenario's stages is the load it is asked for now.
func (r *recorder) StageEnded(m engine.StageMark) {
	if r.frozen.Load() {
		return
	}
	unit, _ := r.unit(m)
	r.target.WithLabelValues(m.Scenario, m.Stage, unit).Set(0)
}

// unit is what a stage's target counts, and its value.
func (r *recorder) unit(m engine.StageMark) (string, float64) {
	if r.open[m.Scenario] {
		return UnitRate, m.Rate
	}
	return UnitVUs, float64(m.Target)
}

// IterationError is not exported: script errors are the summary's.
func (r *recorder) IterationError(engine.IterationError) {}

// Load is one scenario's in-flight iterations and active VUs, read on
// each push and scrape.
type Load struct {
	Scenario  string
	InFlight  int
	ActiveVUs int
}

// setLoad sets the gauges of in-flight iterations and active VUs.
func (r *recorder) setLoad(loads []Load) {
	for _, l := range loads {
		r.inFlight.WithLabelValues(l.Scenario).Set(float64(l.InFlight))
		r.vus.WithLabelValues(l.Scenario).Set(float64(l.ActiveVUs))
	}
}
