package metrics

import (
	"time"

	"github.com/llmload/llmload/engine"
)

// Summary is everything a run measured, as Collector.Close returns it.
// Warmup samples appear only in Warmup.
type Summary struct {
	Stages []StageSummary `json:"stages"` // in order of StageStarted
	// Checks and Metrics cover the whole run; a counter's rate is per
	// second from the first stage's start to the last stage's end.
	// Metrics includes declared metrics that never got a value.
	Checks       []CheckSummary           `json:"checks"` // by name
	Metrics      map[string]MetricSummary `json:"metrics"`
	MetricErrors []MetricError            `json:"metric_errors"` // by count, descending
	ScriptErrors []ScriptError            `json:"script_errors"` // by count, descending
	Warmup       WarmupSummary            `json:"warmup"`
	// SLOSet is false when the collector had no request objective in its
	// SLO (WithSLO): the requests' goodput figures are then all zero,
	// meaning "not measured". (The goodput of tasks is always measured.)
	SLOSet bool `json:"slo_set"`
	// TimeSeries has one point per second of the run, in order, without
	// gaps. See Point.
	TimeSeries []Point `json:"time_series"`
	// Robustness totals the stages' robustness tables by dirty-data kind;
	// absent when no dirty request was sent.
	Robustness map[string]RobustnessSummary `json:"robustness,omitempty"`
}

// StageSummary is one stage of one scenario: its window, counts, rates and
// latency distributions. Failed requests are counted (Failed, Errors) but
// their latencies and tokens are left out, so a fast failure cannot make
// the service look faster or busier than it was. Dirty requests (a
// deliberately malformed request, engine.Sample.Dirty) are counted in
// DirtyRequests only: no other figure includes them.
//
// Requests that started after the window closed (the graceful-stop tail:
// later turns of an iteration that started in the window) are the Tail*
// figures. They are in the counts (Requests, OK, Failed, Errors, tokens)
// and in the latency distributions, since they were sent by the stage's
// iterations — leaving them out would drop late turns of multi-turn
// iterations, whose longer context makes them slower — but not in the
// rates: req/s, tok/s, goodput and the achieved rate divide only what
// started in the window by the window.
type StageSummary struct {
	Scenario string `json:"scenario"`
	Stage    string `json:"stage"`
	Index    int    `json:"index"`
	VUs      int    `json:"vus"`
	// Start and End bound the stage window. When the stage never ended
	// (an interrupted run) End is the completion of its last request, or
	// the collector's close time, and Complete is false.
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	Complete  bool      `json:"complete"`
	// PlannedS is the window's planned length; 0 where the stage ends when
	// its work is done (shared-iterations, per-vu-iterations) and in files
	// written before it was recorded.
	PlannedS float64 `json:"planned_s,omitempty"`
	// LateS is how late the stage controller marked the stage's start or
	// end, the larger of the two: the window is the planned one, but on a
	// busy machine the load level (a closed model's VU count) changed that
	// much after the boundary. See Slipped.
	LateS float64 `json:"late_s,omitempty"`

	Requests        int64 `json:"requests"` // OK + Failed
	OK              int64 `json:"ok"`
	Failed          int64 `json:"failed"`
	IterationErrors int64 `json:"iteration_errors"`
	DirtyRequests   int64 `json:"dirty_requests"` // not in Requests
	// Robustness is how the server answered the dirty requests, by kind
	// (engine.Sample.Dirty); absent when the stage had none.
	Robustness map[string]RobustnessSummary `json:"robustness,omitempty"`

	// Rates divide the counts of requests started in the window (the
	// counts minus the Tail ones) by the window, although they may have
	// completed after it.
	ReqPerSec       float64 `json:"req_per_sec"`
	OutputTokPerSec float64 `json:"output_tok_per_sec"`
	InputTokPerSec  float64 `json:"input_tok_per_sec"`
	OutputTokens    int64   `json:"output_tokens"`
	InputTokens     int64   `json:"input_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens"` // of OutputTokens, as the server reported them
	// Inputs are the inputs embedded by successful embeddings requests,
	// and InputsPerSec their rate; 0 (absent) without embeddings.
	Inputs       int64   `json:"inputs,omitempty"`
	InputsPerSec float64 `json:"inputs_per_sec,omitempty"`
	// ToolCalls are the tool calls of the successful answers.
	ToolCalls int64 `json:"tool_calls,omitempty"`

	// Successful requests per source of their output and input token
	// counts (engine.TokensFromUsage, ...; "unknown" when unset).
	TokensSource      map[string]int64 `json:"tokens_source"`
	InputTokensSource map[string]int64 `json:"input_tokens_source"`
	TokenCheck        TokenCheck       `json:"token_check"`
	// Chunks are the tokens each streamed chunk carried, per request (see
	// Chunks); nil without a streamed request the server counted, and in
	// merged results.
	Chunks *Chunks          `json:"chunks,omitempty"`
	Errors map[string]int64 `json:"errors"` // failed requests per error class

	// The server's prefix cache. All three counts are over the successful
	// requests whose input tokens the server counted (InputTokensSource
	// "usage"), so that the share divides figures the same server gave.
	UsageInputTokens int64 `json:"usage_input_tokens,omitempty"` // their input tokens
	// CachedTokens are the input tokens the server says it served from its
	// prefix cache (engine.Result.CachedTokens).
	CachedTokens   int64 `json:"cached_tokens,omitempty"`
	CachedRequests int64 `json:"cached_requests,omitempty"` // those with CachedTokens > 0
	// PrefixHitShare is CachedTokens / UsageInputTokens. It is nil (absent)
	// unless some request of the run, in any stage, reported cached
	// tokens: a server that never reports them (a 0 reads the same as "not
	// said") shows no hit share rather than 0%, while a stage without hits
	// on a server that does report them shows 0. Nil too for a stage
	// without UsageInputTokens.
	PrefixHitShare *float64 `json:"prefix_hit_share,omitempty"`
	// PrefixTarget compares the hit share that prompts built for one asked
	// with what the server served of them; nil when no request's prompt
	// asked one (llm.synthetic's prefix_hit).
	PrefixTarget *PrefixTarget `json:"prefix_target,omitempty"`

	// Goodput: successful requests that met every objective of the SLO
	// (engine.SLO.Met), per second of the window, and as a share of all
	// requests, failed ones included. All zero when Summary.SLOSet is false.
	GoodRequests int64   `json:"good_requests"`
	Goodput      float64 `json:"goodput"`
	GoodShare    float64 `json:"good_share"`

	TTFB Dist `json:"ttfb"`
	// Connect is the time from issuing a request to t0: obtaining its
	// connection and the client's own delay in writing it; in no latency.
	Connect Dist `json:"connect,omitzero"`
	// Breakdown splits the TTFT and E2E of the requests the server timed
	// (its trace spans, llama.cpp's timings); nil when none was.
	Breakdown *BreakdownSummary `json:"breakdown,omitempty"`
	// TLS is the TLS handshake's part of Connect, over the requests that
	// opened a TLS connection (a reused one has none); absent without TLS.
	TLS Dist `json:"tls,omitzero"`
	// Upload is from t0 to the body's upload (engine.Result.Upload), part
	// of TTFT, over the successful requests that sent media or a body of
	// engine.LargeBody bytes or more; absent when none did.
	Upload Dist `json:"upload,omitzero"`
	TTFT   Dist `json:"ttft"` // first text of any kind, reasoning included
	TTFC   Dist `json:"ttfc"` // first answer (content) text
	TPOT   Dist `json:"tpot"`
	// ITL is chunk-level: one value per gap between text-carrying events,
	// whatever number of tokens each carried. ITLToken is token-level: one
	// value per token (a gap divided among the tokens its chunk carried),
	// measured only when the server reports per-chunk usage.
	ITL      Dist `json:"itl"`
	ITLToken Dist `json:"itl_token"`
	E2E      Dist `json:"e2e"`

	// Iterations started and, in open models, iterations due that found
	// no free VU. TargetRate is the stage's arrival rate (0 in closed
	// models); AchievedRate is Iterations and ScheduledRate is Iterations
	// + DroppedIterations per second of the window: what ran, and what the
	// arrival process produced.
	Iterations        int64 `json:"iterations"`
	DroppedIterations int64 `json:"dropped_iterations"`
	// DroppedMaxVUs and DroppedGrowing are the drops that found the pool
	// at max_vus, and those whose VU, being made, was not ready within the
	// pool's wait; the rest of DroppedIterations found that a VU could
	// not be made, or a trace session's record was still held at the end.
	DroppedMaxVUs  int64   `json:"dropped_max_vus,omitempty"`
	DroppedGrowing int64   `json:"dropped_growing,omitempty"`
	TargetRate     float64 `json:"target_rate"`
	AchievedRate   float64 `json:"achieved_rate"`
	ScheduledRate  float64 `json:"scheduled_rate"`

	// The graceful-stop tail: requests and iterations of this stage that
	// started after its window closed, already included in the counts
	// above and in the distributions, and left out of every rate.
	TailRequests     int64 `json:"tail_requests,omitempty"`
	TailOK           int64 `json:"tail_ok,omitempty"`
	TailFailed       int64 `json:"tail_failed,omitempty"`
	TailIterations   int64 `json:"tail_iterations,omitempty"`
	TailOutputTokens int64 `json:"tail_output_tokens,omitempty"`
	TailInputTokens  int64 `json:"tail_input_tokens,omitempty"`
	TailGoodRequests int64 `json:"tail_good_requests,omitempty"`

	// Open models only. ScheduleLag is each iteration's start minus its
	// intended start. TTFTSched and E2ESched measure successful requests
	// from the intended start of their iteration (only an iteration's first
	// request has one), so waiting for a free VU is not hidden.
	ScheduleLag Dist `json:"schedule_lag"`
	TTFTSched   Dist `json:"ttft_sched"`
	E2ESched    Dist `json:"e2e_sched"`

	// ByTag breaks the stage's requests down by user tag (not scenario,
	// stage or check): key, then value. At most MaxTagValues values per
	// key (the rest share OtherTagValue) and MaxTagKeys keys; the
	// (request, key) pairs beyond the key cap are counted in
	// TagKeysOverflow. Nil when no request had a user tag.
	ByTag           map[string]map[string]TagSummary `json:"by_tag,omitempty"`
	TagKeysOverflow int64                            `json:"tag_keys_overflow,omitempty"`
	// ByAPI breaks the stage's requests down by endpoint (engine.Result.API:
	// chat, completions, responses, messages, embeddings), so that an
	// embeddings request's E2E never blurs a chat request's; nil when the
	// stage sent only chat completions, or only completions.
	ByAPI map[string]TagSummary `json:"by_api,omitempty"`
	// ByTarget breaks the stage's requests down by the endpoint of
	// options.targets that served them; nil in a run with one target.
	ByTarget map[string]TargetSummary `json:"by_target,omitempty"`
	// Media is what the stage's media requests (images, audio, video,
	// the speech endpoints) carried and cost; nil when it had none.
	Media *MediaSummary `json:"media,omitempty"`
	// Tasks is what the stage's tasks (llm.task) took; nil when it had
	// none.
	Tasks *TaskSummary `json:"tasks,omitempty"`

	Checks  []CheckSummary           `json:"checks"`  // by name
	Metrics map[string]MetricSummary `json:"metrics"` // custom metrics with values in this stage

	// Client is llmload's own health over the window; the collector does
	// not measure it: the caller fills it in after Close.
	Client *engine.ClientCheck `json:"client,omitempty"`
}

// ScriptError is one distinct script error message and how often it was
// raised outside warmup.
type ScriptError struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// First marks the message raised before any other in the run, which
	// the list's order by count does not show.
	First bool `json:"first,omitempty"`
}

// WarmupSummary counts what warmup did; none of it enters any statistic.
type WarmupSummary struct {
	Requests        int64 `json:"requests"`
	Failed          int64 `json:"failed"`
	IterationErrors int64 `json:"iteration_errors"`
}

// Live is a cheap snapshot of running totals for a progress line. Warmup is
// counted only in WarmupRequests.
type Live struct {
	Requests        int64
	Failed          int64
	OutputTokens    int64
	IterationErrors int64
	WarmupRequests  int64
	Iterations      int64 // started outside warmup
	Dropped         int64 // open-model iterations that found no free VU
	Dirty           int64 // dirty requests, which Requests leaves out
	// Late counts calls that arrived after Close and were ignored.
	Late int64
}

// Latency returns the stage's latency distribution named as in the result
// file ("ttft", "tpot", "e2e", ...); false for any other name.
func (s *StageSummary) Latency(name string) (Dist, bool) {
	switch name {
	case "ttfb":
		return s.TTFB, true
	case "connect":
		return s.Connect, true
	case "tls":
		return s.TLS, true
	case "ttft":
		return s.TTFT, true
	case "ttfc":
		return s.TTFC, true
	case "tpot":
		return s.TPOT, true
	case "itl":
		return s.ITL, true
	case "itl_token":
		return s.ITLToken, true
	case "e2e":
		return s.E2E, true
	case "schedule_lag":
		return s.ScheduleLag, true
	case "ttft_sched":
		return s.TTFTSched, true
	case "e2e_sched":
		return s.E2ESched, true
	}
	return Dist{}, false
}

// PrefixTarget is a stage's prefix-cache hit share as its prompts asked it
// (engine.PrefixAsked) beside the share the server served of the same
// requests, over its successful clean requests whose prompts asked one.
type PrefixTarget struct {
	Requests int64 `json:"requests"`
	// PromptTokens are their prompts' tokens, by the client's tokenizer,
	// and SharedTokens those of them built to repeat the shared prefix.
	PromptTokens int64 `json:"prompt_tokens"`
	SharedTokens int64 `json:"shared_tokens"`
	// AskedShare is SharedTokens / PromptTokens.
	AskedShare float64 `json:"asked_share"`
	// UsageInputTokens and CachedTokens are the server's counts of the
	// same requests (those whose input tokens it counted), and
	// ServedShare their quotient: nil under StageSummary.PrefixHitShare's
	// rule, when no request of the run reported cached tokens.
	UsageInputTokens int64    `json:"usage_input_tokens,omitempty"`
	CachedTokens     int64    `json:"cached_tokens,omitempty"`
	ServedShare      *float64 `json:"served_share,omitempty"`
}
