package metrics

import "time"

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
}

// StageSummary is one stage of one scenario: its window, counts, rates and
// latency distributions. Failed requests are counted (Failed, Errors) but
// their latencies and tokens are left out, so a fast failure cannot make
// the service look faster or busier than it was.
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

	Requests        int64 `json:"requests"` // OK + Failed
	OK              int64 `json:"ok"`
	Failed          int64 `json:"failed"`
	IterationErrors int64 `json:"iteration_errors"`

	// Rates divide the stage's counts by its window, although requests that
	// started in the window may have completed after it.
	ReqPerSec       float64 `json:"req_per_sec"`
	OutputTokPerSec float64 `json:"output_tok_per_sec"`
	InputTokPerSec  float64 `json:"input_tok_per_sec"`
	OutputTokens    int64   `json:"output_tokens"`
	InputTokens     int64   `json:"input_tokens"`

	TokensSource map[string]int64 `json:"tokens_source"` // successful requests per token-count source
	Errors       map[string]int64 `json:"errors"`        // failed requests per error class

	TTFB Dist `json:"ttfb"`
	TTFT Dist `json:"ttft"`
	TPOT Dist `json:"tpot"`
	ITL  Dist `json:"itl"` // one value per gap, not per request
	E2E  Dist `json:"e2e"`

	// Iterations started and, in open models, iterations due that found
	// no free VU. TargetRate is the stage's arrival rate (0 in closed
	// models); AchievedRate is Iterations and ScheduledRate is Iterations
	// + DroppedIterations per second of the window: what ran, and what the
	// arrival process produced.
	Iterations        int64   `json:"iterations"`
	DroppedIterations int64   `json:"dropped_iterations"`
	TargetRate        float64 `json:"target_rate"`
	AchievedRate      float64 `json:"achieved_rate"`
	ScheduledRate     float64 `json:"scheduled_rate"`

	// Open models only. ScheduleLag is each iteration's start minus its
	// intended start. TTFTSched and E2ESched measure successful requests
	// from the intended start of their iteration (only an iteration's first
	// request has one), so waiting for a free VU is not hidden.
	ScheduleLag Dist `json:"schedule_lag"`
	TTFTSched   Dist `json:"ttft_sched"`
	E2ESched    Dist `json:"e2e_sched"`

	Checks  []CheckSummary           `json:"checks"`  // by name
	Metrics map[string]MetricSummary `json:"metrics"` // custom metrics with values in this stage
}

// ScriptError is one distinct script error message and how often it was
// raised outside warmup.
type ScriptError struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
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
	// Late counts calls that arrived after Close and were ignored.
	Late int64
}
