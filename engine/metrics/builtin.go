package metrics

import (
	"maps"

	"github.com/llmload/llmload/engine"
)

// kind is a metric's kind on the aggregator's hot path, where comparing
// small integers beats comparing strings.
type kind uint8

const (
	kindNone kind = iota
	kindTrend
	kindCounter
	kindRate
)

func parseKind(s string) kind {
	switch s {
	case engine.MetricTrend:
		return kindTrend
	case engine.MetricCounter:
		return kindCounter
	case engine.MetricRate:
		return kindRate
	}
	return kindNone
}

func (k kind) String() string {
	switch k {
	case kindTrend:
		return engine.MetricTrend
	case kindCounter:
		return engine.MetricCounter
	case kindRate:
		return engine.MetricRate
	}
	return "none"
}

// metricID indexes the built-in metrics; stages keep one cell per ID.
type metricID uint8

const (
	mTTFT metricID = iota
	mTTFC
	mTPOT
	mITL
	mITLToken
	mE2E
	mTTFB
	mConnect
	mTLS
	mScheduleLag
	mTTFTSched
	mE2ESched
	mRequests
	mIterations
	mDropped
	mDroppedMaxVUs
	mDroppedGrowing
	mIterErrors
	mOutTok
	mInTok
	mReasoningTok
	mInputs
	mToolCalls
	mGoodput
	mErrors
	mGoodShare
	mChecks
	mDirtyRequests
	mDirtyDefects
	mDirtyHandled
	mDirtyAccepted
	numBuiltin
)

// checksName is the built-in rate llm.check feeds; Tags["check"] names
// the check, and a "check" filter selects one without Track.
const checksName = "checks"

type builtinDef struct {
	name string
	kind kind
	// tagged: the metric's events carry user tags, so a Track filter on a
	// tag can match them. Iteration marks, drops and script errors carry
	// only scenario and stage.
	tagged bool
}

var builtins = [numBuiltin]builtinDef{
	mTTFT:        {"ttft", kindTrend, true},
	mTTFC:        {"ttfc", kindTrend, true},
	mTPOT:        {"tpot", kindTrend, true},
	mITL:         {"itl", kindTrend, true},
	mITLToken:    {"itl_token", kindTrend, true},
	mE2E:         {"e2e", kindTrend, true},
	mTTFB:        {"ttfb", kindTrend, true},
	mConnect:     {"connect", kindTrend, true},
	mTLS:         {"tls", kindTrend, true},
	mScheduleLag: {"schedule_lag", kindTrend, false},
	mTTFTSched:   {"ttft_sched", kindTrend, true},
	mE2ESched:    {"e2e_sched", kindTrend, true},
	mRequests:    {"requests", kindCounter, true},
	mIterations:  {"iterations", kindCounter, false},
	mDropped:     {"dropped_iterations", kindCounter, false},
	// The drops by reason: the pool at max_vus, or still growing (the VU
	// an arrival waited for was not ready in time).
	mDroppedMaxVUs:  {"dropped_max_vus", kindCounter, false},
	mDroppedGrowing: {"dropped_growing", kindCounter, false},
	mIterErrors:     {"iteration_errors", kindCounter, false},
	mOutTok:         {"output_tokens", kindCounter, true},
	mInTok:          {"input_tokens", kindCounter, true},
	mReasoningTok:   {"reasoning_tokens", kindCounter, true},
	mInputs:         {"inputs", kindCounter, true},
	mToolCalls:      {"tool_calls", kindCounter, true},
	mGoodput:        {"goodput", kindCounter, true},
	mErrors:         {"errors", kindRate, true},
	mGoodShare:      {"good_share", kindRate, true},
	mChecks:         {checksName, kindRate, true},
	// Dirty requests carry no user tags here: their kind, a "kind"
	// filter, is answered from per-stage counts instead.
	mDirtyRequests: {"dirty.requests", kindCounter, false},
	mDirtyDefects:  {"dirty.defects", kindCounter, false},
	mDirtyHandled:  {"dirty.handled", kindCounter, false},
	mDirtyAccepted: {"dirty.accepted", kindCounter, false},
}

// sampleMetrics are the built-ins a request sample feeds.
var sampleMetrics = [...]metricID{
	mTTFT, mTTFC, mTPOT, mITL, mITLToken, mE2E, mTTFB, mConnect, mTLS, mTTFTSched, mE2ESched,
	mRequests, mOutTok, mInTok, mReasoningTok, mInputs, mToolCalls, mGoodput, mErrors, mGoodShare,
}

var builtinIDs = func() map[string]metricID {
	m := make(map[string]metricID, numBuiltin)
	for id, d := range builtins {
		m[d.name] = metricID(id)
	}
	return m
}()

var builtinKinds = func() map[string]string {
	m := make(map[string]string, numBuiltin)
	for _, d := range builtins {
		m[d.name] = d.kind.String()
	}
	return m
}()

// Builtin lists the built-in metrics and their kinds (engine.MetricTrend,
// MetricCounter or MetricRate). Trends are in milliseconds. itl is one
// value per gap between text-carrying events (chunk level), itl_token one
// per token (see engine.Result.TokenITL). connect is the time from issuing
// a request to handing it to its connection, tls the TLS handshake's part
// of it, one value per request that opened a TLS connection. goodput counts the requests that
// met the SLO (WithSLO) and good_share is their share of all requests,
// failed ones included; without an SLO both have no data. dirty.requests
// counts the deliberately malformed requests, and dirty.defects,
// dirty.handled and dirty.accepted those of each engine.Verdict; a
// "kind" filter (DirtyKindTag) selects one dirty-data kind without Track.
// The map is a fresh copy the caller may change.
func Builtin() map[string]string { return maps.Clone(builtinKinds) }
