// Package export streams a run's live metrics to the tools people watch:
// Prometheus remote-write, OTLP/HTTP and a /metrics endpoint to scrape.
// Every output shows the same series, recorded once in memory
// (client_golang collectors) as the run's sink sees them; pushes run in
// goroutines of their own with timeouts, so a receiver that is down or
// slow never reaches the load, and their failures are counted.
package export

// Series names, the contract with deploy/grafana's dashboard: the same in
// every output, in seconds where they are times.
const (
	Requests      = "llmload_requests_total"           // counter: + status, error_class, api, dirty
	TTFT          = "llmload_ttft_seconds"             // histogram of successful clean requests
	TTFC          = "llmload_ttfc_seconds"             // histogram: time to first content
	TPOT          = "llmload_tpot_seconds"             // histogram: time per output token
	ITL           = "llmload_itl_seconds"              // histogram: one observation per gap
	E2E           = "llmload_e2e_seconds"              // histogram: end to end
	ScheduleLag   = "llmload_schedule_lag_seconds"     // histogram: open models
	InputTokens   = "llmload_input_tokens_total"       // counter of successful clean requests
	OutputTokens  = "llmload_output_tokens_total"      // counter of successful clean requests
	InFlight      = "llmload_requests_in_flight"       // gauge: run_id, scenario
	ActiveVUs     = "llmload_vus_active"               // gauge: run_id, scenario
	Dropped       = "llmload_dropped_iterations_total" // counter: open models
	DirtyRequests = "llmload_dirty_requests_total"     // counter: + kind, verdict
	Checks        = "llmload_checks_total"             // counter: + check, result
	StageTarget   = "llmload_stage_target"             // gauge: + unit
)

// Labels of the series.
const (
	LabelRunID      = "run_id"
	LabelScenario   = "scenario"
	LabelStage      = "stage"
	LabelStatus     = "status"      // StatusOK or StatusError
	LabelErrorClass = "error_class" // "" when ok
	LabelAPI        = "api"         // engine.EndpointChat, ...
	LabelDirty      = "dirty"       // "" or the dirty-data kind
	LabelKind       = "kind"        // a dirty-data kind
	LabelVerdict    = "verdict"     // engine.VerdictHandled, ...
	LabelCheck      = "check"
	LabelResult     = "result" // ResultPass or ResultFail
	LabelUnit       = "unit"   // UnitVUs or UnitRate
)

// Label values.
const (
	StatusOK    = "ok"
	StatusError = "error"
	ResultPass  = "pass"
	ResultFail  = "fail"
	UnitVUs     = "vus"
	UnitRate    = "rate"
	// Overflow replaces the values of a tag beyond MaxTagValues.
	Overflow = "__overflow__"
)

// Histograms are the latency histograms, in the order of the samples'
// fields.
func Histograms() []string { return []string{TTFT, TTFC, TPOT, ITL, E2E} }

// Names are every series the exporter defines, for the dashboard's test.
func Names() []string {
	return []string{Requests, TTFT, TTFC, TPOT, ITL, E2E, ScheduleLag, InputTokens, OutputTokens,
		InFlight, ActiveVUs, Dropped, DirtyRequests, Checks, StageTarget}
}

// Buckets are the classic histogram buckets of the latencies, in seconds:
// 1 ms to 120 s, about 1.5× apart (1, 1.5, 2, 3, 5, 7.5 per decade, a
// little finer where TTFT, ITL and TPOT usually fall), so that a PromQL
// histogram_quantile is within a bucket of llmload's own percentile.
var Buckets = []float64{
	0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075,
	0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075,
	0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
	1, 1.5, 2, 3, 4, 5, 7.5,
	10, 15, 20, 30, 45, 60, 90, 120,
}

// LagBuckets are the schedule lag's buckets: 100 µs to 120 s, since a
// healthy generator starts its iterations well within a millisecond.
var LagBuckets = append([]float64{0.0001, 0.00025, 0.0005}, Buckets...)

// NativeFactor is the native histograms' bucket growth (schema 3: 2^(1/8),
// about 9% wide buckets); MaxNativeBuckets bounds their buckets, beyond
// which client_golang halves the resolution rather than reset the counts.
const (
	NativeFactor     = 1.1
	MaxNativeBuckets = 160
)

// MaxTagValues is how many values one exported tag may take. A tag beyond
// it (a request id, a typo) is refused: its further values are folded
// into Overflow and the run says so, so it cannot explode a Prometheus.
const MaxTagValues = 100

// MaxTags is how many user tags options.export.tags may list.
const MaxTags = 8

// reserved are the label names a user tag may not take.
var reserved = []string{LabelRunID, LabelScenario, LabelStage, LabelStatus, LabelErrorClass, LabelAPI,
	LabelDirty, LabelKind, LabelVerdict, LabelCheck, LabelResult, LabelUnit, "le", "__name__"}
