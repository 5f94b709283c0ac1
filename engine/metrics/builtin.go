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
	// mUpload is fed by the successful requests whose upload is a figure:
	// media, or a body of engine.LargeBody bytes or more.
	mUpload
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
	// The media figures, fed only by media samples (see mediaOf).
	mMediaRequests
	mEncode
	mMediaUpload
	mBodyBytes
	mImages
	mAudios
	mVideos
	mAudioIn
	mMediaTokens
	mImageTokens
	mImagesCounted
	mTokensPerImage
	mAudioOut
	mAudioBytes
	mRTF
	mAudioBytesPerSec
	// Where the time went (engine.Breakdown), fed only by the requests
	// that have one (see breakdownOf).
	mParts
	mPartsSpan
	mPartsTimings
	mPartsNegative
	mPartUpload
	mPartResidual
	mPartQueue
	mPartPrefill
	mPartDecode
	mPartTail
	// The tasks (engine.TaskSample), fed only by task events (see taskOf).
	mTask
	mTasks
	mTaskGood
	mTaskFailed
	mTaskCalls
	mTaskTokens
	mTaskTool
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

// geo is the histogram geometry of a built-in's trend: the trends of
// plain values (tokens per image, a real-time factor, bytes per second)
// are kept at custom-trend resolution, every other one is a latency.
func (id metricID) geo() geometry {
	switch id {
	case mTokensPerImage, mRTF, mAudioBytesPerSec:
		return valueGeo
	case mPartUpload, mPartResidual, mPartQueue, mPartPrefill, mPartDecode, mPartTail:
		return valueGeo // ms, signed: a residual or a tail may be negative
	case mTaskCalls, mTaskTokens:
		return valueGeo // counts per task
	}
	return durationGeo
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
	mUpload:      {"upload", kindTrend, true},
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

	mMediaRequests: {"media_requests", kindCounter, true},
	mEncode:        {"encode", kindTrend, true},
	mMediaUpload:   {"media_upload", kindTrend, true},
	mBodyBytes:     {"body_bytes", kindCounter, true},
	mImages:        {"images", kindCounter, true},
	mAudios:        {"audios", kindCounter, true},
	mVideos:        {"videos", kindCounter, true},
	mAudioIn:       {"audio_in", kindCounter, true},
	mMediaTokens:   {"media_tokens", kindCounter, true},
	// image_tokens and images_counted are the media tokens and the images
	// of the requests that sent images and whose usage counted them: the
	// two sides of tokens per image.
	mImageTokens:      {"image_tokens", kindCounter, true},
	mImagesCounted:    {"images_counted", kindCounter, true},
	mTokensPerImage:   {"tokens_per_image", kindTrend, true},
	mAudioOut:         {"audio_out", kindCounter, true},
	mAudioBytes:       {"audio_bytes", kindCounter, true},
	mRTF:              {"rtf", kindTrend, true},
	mAudioBytesPerSec: {"audio_bytes_per_s", kindTrend, true},

	mParts:         {"part.requests", kindCounter, true},
	mPartsSpan:     {"part.from_spans", kindCounter, true},
	mPartsTimings:  {"part.from_timings", kindCounter, true},
	mPartsNegative: {"part.negative", kindCounter, true},
	mPartUpload:    {"part.upload", kindTrend, true},
	mPartResidual:  {"part.residual", kindTrend, true},
	mPartQueue:     {"part.queue", kindTrend, true},
	mPartPrefill:   {"part.prefill", kindTrend, true},
	mPartDecode:    {"part.decode", kindTrend, true},
	mPartTail:      {"part.tail", kindTrend, true},

	// Tasks carry the scenario's and the task's tags, and the task's name
	// as the tag TaskTag.
	mTask:       {"task", kindTrend, true},
	mTasks:      {"tasks", kindCounter, true},
	mTaskGood:   {"task_good", kindCounter, true},
	mTaskFailed: {"task_failed", kindRate, true},
	mTaskCalls:  {"task_calls", kindTrend, true},
	mTaskTokens: {"task_tokens", kindTrend, true},
	mTaskTool:   {"task_tool", kindTrend, true},
}

// sampleMetrics are the built-ins a request sample feeds.
var sampleMetrics = [...]metricID{
	mTTFT, mTTFC, mTPOT, mITL, mITLToken, mE2E, mTTFB, mConnect, mTLS, mTTFTSched, mE2ESched, mUpload,
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
//
// The media metrics count only the successful requests that sent media
// or went to a speech endpoint (media_requests): encode and upload (ms),
// body_bytes, images, audios, videos, audio_in (seconds sent),
// media_tokens, image_tokens and images_counted (the sides of tokens per
// image), tokens_per_image (a trend of each request's ratio), audio_out
// (seconds received), audio_bytes, rtf (audio seconds received per wall
// second, per request) and audio_bytes_per_s (per request); rtf,
// tokens_per_image and audio_bytes_per_s are plain values, not ms.
//
// The part metrics split the TTFT and E2E of the successful requests
// that have an engine.Breakdown (part.requests; part.from_spans and
// part.from_timings by source; part.negative those whose residual was
// below zero): part.upload, part.residual, part.queue, part.prefill,
// part.decode and part.tail, in ms, part.residual and part.tail signed.
//
// The task metrics count the tasks (engine.TaskSample) outside warmup:
// tasks counts them, task_good those that were ok and within the SLO's
// Task objective (every ok task without one), so that its rate is the
// goodput of tasks, and task_failed is the share of tasks not ok (see
// engine.TaskSample.OK). The trends are of the ok tasks: task (the wall
// time, ms), task_calls (requests per task), task_tokens (output tokens
// per task) and task_tool (time in tool delays, ms). A "task" filter
// (TaskTag) selects one task's name.
//
// The map is a fresh copy the caller may change.
func Builtin() map[string]string { return maps.Clone(builtinKinds) }
