// Package plan is what a scenario script compiles to and the engine runs:
// scenarios, stages, the target, SLO, thresholds, traces and capacity
// searches as data, with the arithmetic on them (stage loads, segments of a
// distributed run, the fingerprint that tells two runs of one plan). It
// decides nothing at run time.
package plan

import (
	"strings"
	"time"
)

// Executor names, as in k6.
const (
	ExecutorConstantVUs         = "constant-vus"
	ExecutorRampingVUs          = "ramping-vus"
	ExecutorConstantArrivalRate = "constant-arrival-rate"
	ExecutorRampingArrivalRate  = "ramping-arrival-rate"
	ExecutorSharedIterations    = "shared-iterations"
	ExecutorPerVUIterations     = "per-vu-iterations"
)

// Arrival processes of the arrival-rate executors.
const (
	ArrivalPoisson  = "poisson"  // exponential inter-arrival times
	ArrivalConstant = "constant" // evenly spaced
	ArrivalGamma    = "gamma"    // gamma inter-arrival times, shape = Burstiness (1 = Poisson)
)

// OpenModel reports whether an executor starts iterations on a schedule
// (arrival rate) rather than when a VU is free.
func OpenModel(executor string) bool {
	return executor == ExecutorConstantArrivalRate || executor == ExecutorRampingArrivalRate ||
		executor == ExecutorTrace
}

// Default timeouts and stops.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultTTFTTimeout    = 60 * time.Second
	DefaultIdleTimeout    = 30 * time.Second
	DefaultTotalTimeout   = 10 * time.Minute
	DefaultGracefulStop   = 30 * time.Second
	DefaultMaxDuration    = 10 * time.Minute // iteration-count executors
	DefaultTimeUnit       = time.Second
)

// Plan is a whole run, as compiled from a scenario.
type Plan struct {
	Script string
	Target Target
	// Targets are several endpoints under test (options.targets), each a
	// full Target with its Name, sorted by name; nil when the run has the
	// one Target. With Targets, Target holds only the settings they share.
	Targets []Target `json:",omitempty"`
	// Balance spreads requests that name no target across Targets:
	// BalanceRoundRobin ("" too), BalanceRandom or BalanceWeighted.
	Balance   string `json:",omitempty"`
	Warmup    Warmup
	Scenarios []Scenario
	Seed      int64
	// Thresholds are pass/fail gates over the run's metrics.
	Thresholds []ThresholdSpec
	// Metrics are the custom metrics the script declares at init.
	Metrics []MetricDef
	// SLO defines goodput: the requests per second that met every objective.
	SLO SLO
	// Cost prices the tokens (options.cost): the run estimates its spend
	// and, with a budget, stops before passing it.
	Cost Cost `json:",omitzero"`
	// Export streams the run's live metrics (options.export, --export,
	// --listen); kept out of the fingerprint.
	Export Export `json:"-"`
	// APIs are the endpoints the script sends to (engine.EndpointChat,
	// EndpointResponses, ...), which the preflight checks; nil when it
	// sends only chat completions (or completions), the default.
	APIs []string `json:",omitempty"`
	// Segment, when set, runs only that share of the plan (--segment i/n).
	Segment Segment `json:"-"`
	// StartAt, when set, holds the load (after VU init, setup and warmup)
	// until this wall-clock time, so that segments on several machines
	// start together (--start-at).
	StartAt time.Time `json:"-"`
}

// ThresholdSpec is one entry of options.thresholds, as written.
type ThresholdSpec struct {
	Expr           string   // "ttft{stage:c8}.p99" or "checks"
	Conditions     []string // "< 1s", "rate > 0.99", ...
	AbortOnFail    bool
	DelayAbortEval time.Duration
}

// MetricDef declares a custom metric.
type MetricDef struct {
	Name string
	Kind string // MetricTrend, MetricCounter or MetricRate
}

// Target is the endpoint under test. An empty BaseURL means the built-in simulator.
type Target struct {
	BaseURL        string
	APIKey         string `json:"-"`
	Model          string
	ConnectTimeout time.Duration
	TTFTTimeout    time.Duration
	IdleTimeout    time.Duration
	TotalTimeout   time.Duration
	// Tokenizer counts tokens offline when the server reports no usage, and
	// beside usage to cross-check it: a tiktoken encoding ("cl100k_base",
	// the default, "o200k_base", ...) or "none".
	Tokenizer string
	// ContinuousUsage asks for usage in every chunk (vLLM's
	// stream_options.continuous_usage_stats), which makes token-level ITL
	// measurable when chunks carry several tokens.
	ContinuousUsage bool
	// NoTraceContext stops the W3C traceparent header llmload puts on
	// every request (options.target.trace_context = false), for a
	// gateway that rejects unknown headers or a trace the user runs.
	NoTraceContext bool `json:",omitempty"`
	// MetricsURL is the server's Prometheus endpoint (vLLM's, SGLang's,
	// TGI's or llama.cpp's /metrics), scraped every MetricsEvery during the run so queue growth
	// can be matched to latency; "" means none.
	MetricsURL   string
	MetricsEvery time.Duration
	// MetricsURLs are further Prometheus endpoints (one per replica, from
	// --metrics-url), scraped beside MetricsURL and kept apart.
	MetricsURLs []string `json:",omitempty"`
	// NoMetrics turns off the discovery of /metrics at the target's
	// origin (options.target.metrics_url = false).
	NoMetrics bool `json:",omitempty"`

	// Name is the target's name in options.targets; "" for the one target
	// of options.target.
	Name string `json:",omitempty"`
	// Weight is its share of the load under BalanceWeighted and
	// BalanceRandom (1 when unset).
	Weight float64 `json:",omitempty"`
	// Headers are sent on every request, after the auth header; a
	// request's own headers replace those of the same name. Their values
	// are kept out of the plan's JSON: they often carry credentials.
	Headers []Header `json:"-"`
	// Query parameters are added to every request's URL (Azure's
	// api-version); kept out of the JSON for the same reason.
	Query []Header `json:"-"`
	// Auth is how APIKey is sent: AuthBearer (the default, ""), AuthAPIKey,
	// AuthXAPIKey or AuthNone; AuthHeader overrides the header's name.
	Auth       string `json:",omitempty"`
	AuthHeader string `json:",omitempty"`
	// TLS configures the connection's TLS; its zero value is the system's
	// roots and verification.
	TLS TLS `json:",omitzero"`
	// HTTP2 negotiates HTTP/2 over TLS (ALPN); H2C speaks it in clear text
	// to an http:// URL (prior knowledge). Off by default: HTTP/1.1 gives
	// each stream its own connection.
	HTTP2 bool `json:",omitempty"`
	H2C   bool `json:",omitempty"`
}

// Header is one name and value (a header, or a query parameter).
type Header struct {
	Name, Value string
}

// How Target.APIKey is sent.
const (
	AuthBearer  = "bearer"    // Authorization: Bearer <key>
	AuthAPIKey  = "api-key"   // api-key: <key> (Azure OpenAI)
	AuthXAPIKey = "x-api-key" // x-api-key: <key> (Anthropic, some gateways)
	AuthNone    = "none"      // not sent
)

// TLS is a target's TLS configuration: file paths, read when the client
// is made.
type TLS struct {
	CACert             string `json:",omitempty"` // PEM bundle of roots to trust instead of the system's
	ClientCert         string `json:",omitempty"` // PEM certificate (chain) for mTLS, with ClientKey
	ClientKey          string `json:",omitempty"`
	ServerName         string `json:",omitempty"` // SNI and the name verified, when not the URL's host
	InsecureSkipVerify bool   `json:",omitempty"` // no verification at all: warned loudly
}

// Balancing policies of options.balance: how requests that name no target
// are spread across options.targets.
const (
	BalanceRoundRobin = "round_robin" // in turn, weights ignored (the default)
	BalanceRandom     = "random"      // at random (seeded by the run's seed), by weight
	BalanceWeighted   = "weighted"    // smooth weighted round robin: exact shares, interleaved
)

// DefaultMetricsEvery is how often MetricsURL is scraped.
const DefaultMetricsEvery = 2 * time.Second

// DefaultTokenizer is the offline tokenizer used unless the script picks one.
const DefaultTokenizer = "cl100k_base"

// SLO is the service level a request must meet to count toward goodput,
// and a task toward the goodput of tasks; zero fields are not checked.
type SLO struct {
	TTFT time.Duration
	TPOT time.Duration
	E2E  time.Duration
	// Task is the longest a task (llm.task) may take to count as good. It
	// judges tasks only, never a request; omitted from the plan's digest
	// when unset, so that plans without it keep their fingerprints.
	Task time.Duration `json:",omitempty"`
}

// IsZero reports whether no objective is set, of requests or tasks.
func (o SLO) IsZero() bool { return o == SLO{} }

// RequestZero reports whether no objective of a request is set: then no
// request is judged, whatever Task says.
func (o SLO) RequestZero() bool { return o.TTFT == 0 && o.TPOT == 0 && o.E2E == 0 }

// Warmup runs before the first stage; its samples are excluded from all statistics.
type Warmup struct {
	Requests int           // iterations to run
	Duration time.Duration // or run for this long
}

// Scenario is one executor with its stages.
type Scenario struct {
	Name     string
	Executor string
	Exec     string // script function each iteration calls
	StartVUs int
	Stages   []Stage
	// GracefulStop bounds how long in-flight iterations may finish after the
	// scenario's last stage; those still running are canceled.
	GracefulStop time.Duration
	// GracefulRampDown bounds how long iterations of VUs removed by a
	// stage with fewer VUs may finish.
	GracefulRampDown time.Duration
	Tags             map[string]string
	// StartTime delays the scenario's start from the start of load.
	StartTime time.Duration
	// Env are environment values llm.env sees first in this scenario.
	Env map[string]string
	// Target names the endpoint of Plan.Targets this scenario's requests
	// go to unless a request names its own; "" lets the balancer choose.
	Target string `json:",omitempty"`

	// Arrival-rate executors: a stage's Rate is iterations per TimeUnit.
	TimeUnit        time.Duration
	StartRate       float64 // rate before the first stage (ramps start here)
	PreAllocatedVUs int
	MaxVUsCap       int     // VUs may grow from PreAllocatedVUs up to this
	Arrival         string  // ArrivalPoisson, ArrivalConstant or ArrivalGamma
	Burstiness      float64 // gamma shape; < 1 burstier than Poisson, > 1 more regular

	// Iteration-count executors: VUs run Iterations in all
	// (shared-iterations) or each (per-vu-iterations), within one stage
	// whose Duration is the max_duration bound.
	VUs        int
	Iterations int

	// Trace is what a trace scenario replays (PreAllocatedVUs and
	// MaxVUsCap apply, as in the arrival-rate executors).
	Trace *Trace `json:",omitempty"`
	// Capacity is a capacity scenario's search; its probes' stages are
	// made as it runs (Arrival, PreAllocatedVUs and MaxVUsCap apply to a
	// search of rates).
	Capacity *CapacitySearch `json:",omitempty"`
}

// Stage is one measurement window of Duration: it steps to its Target VUs
// (or Rate) at its start, or ramps linearly from the previous level over
// its first Ramp, then holds. A Ramp longer than Duration keeps its slope
// and the stage ends part-way up it; StageLoads gives every stage's shape.
type Stage struct {
	Name     string
	Target   int     // VUs (closed-model and iteration-count executors)
	Rate     float64 // iterations per TimeUnit (arrival-rate executors)
	Duration time.Duration
	Ramp     time.Duration
}

// RatePerSecond is the stage's arrival rate in iterations per second.
func (s Scenario) RatePerSecond(rate float64) float64 {
	unit := s.TimeUnit
	if unit <= 0 {
		unit = DefaultTimeUnit
	}
	return rate / unit.Seconds()
}

// Duration is the scenario's total stage time.
func (s Scenario) Duration() time.Duration {
	var d time.Duration
	for _, st := range s.Stages {
		d += st.Duration
	}
	return d
}

// MaxVUs is the most VUs the scenario may use at once.
func (s Scenario) MaxVUs() int {
	if OpenModel(s.Executor) || s.Capacity != nil && s.Capacity.Load == CapacityRate {
		return max(s.PreAllocatedVUs, s.MaxVUsCap)
	}
	if s.Capacity != nil {
		return int(s.Capacity.Max)
	}
	if s.Executor == ExecutorSharedIterations || s.Executor == ExecutorPerVUIterations {
		return s.VUs
	}
	m := s.StartVUs
	for _, st := range s.Stages {
		m = max(m, st.Target)
	}
	return m
}

// FormatDuration prints a duration as a user would write it: 5m rather
// than Go's 5m0s, 1h30m rather than 1h30m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
