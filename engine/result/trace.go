package result

import (
	"github.com/llmload/llmload/engine/metrics"
)

// Trace is what a trace scenario replayed: the slice of the file and its
// pace, the replayed records' lengths and the prefix reuse their hash ids
// describe, and beside it the share the server reported serving from its
// prefix cache. The trace's figures are of the whole replay, also in a
// segment's result, which sent only its share of the records.
type Trace struct {
	Scenario string `json:"scenario"`
	// Source names the file and its format, as the script gave it:
	// "data/trace_mooncake.jsonl (mooncake)".
	Source string `json:"source"`
	// Digest identifies the file's content and the slice replayed
	// (engine.Trace.Digest).
	Digest  string  `json:"digest"`
	Speedup float64 `json:"speedup"`
	// TimeOffsetS and Limit are the slice: records from TimeOffsetS into
	// the trace, at most Limit of them (0: all).
	TimeOffsetS float64 `json:"time_offset_s,omitempty"`
	Limit       int     `json:"limit,omitempty"`
	Records     int     `json:"records"`
	// SpanS is the replayed records' span in the trace's own time (first
	// to last); DurationS the replay's, after the speedup.
	SpanS     float64 `json:"span_s"`
	DurationS float64 `json:"duration_s"`
	// Sessions are the distinct session ids among the records;
	// Conversations says they were replayed as conversations (each
	// session's records in order on one VU).
	Sessions      int  `json:"sessions"`
	Conversations bool `json:"conversations,omitempty"`
	// Children counts the records timed by a parent's answer (a trace of
	// trees); the replay then lasted until the last of them had run, and
	// DurationS is only its least length (every answer instant).
	Children int `json:"children,omitempty"`
	// WarmTurns is the scenario's warm_turns: the first turns of each
	// session (levels of each tree) replayed as warmup, out of the figures.
	WarmTurns int `json:"warm_turns,omitempty"`
	// Input and Output are the records' input and output lengths in
	// tokens, as the trace gives them.
	Input  TraceLengths `json:"input_tokens"`
	Output TraceLengths `json:"output_tokens"`
	// BlockTokens are the tokens of one hash id's block; UniqueBlocks the
	// distinct ids among the WithHashIDs records that have any.
	BlockTokens  int `json:"block_tokens"`
	UniqueBlocks int `json:"unique_blocks"`
	WithHashIDs  int `json:"records_with_hash_ids"`
	// PrefixReuse is the share of the records' input tokens an infinite
	// prefix cache would serve, replaying them in order: an upper bound
	// for a real server's hit share.
	PrefixReuse float64 `json:"prefix_reuse"`
	// ServerPrefixHitShare is what the server reported for the scenario's
	// stages: cached tokens over the input tokens it counted
	// (metrics.StageSummary.PrefixHitShare); nil when it reported none.
	ServerPrefixHitShare *float64 `json:"server_prefix_hit_share,omitempty"`
}

// TraceLengths is a distribution of token counts; percentiles are
// nearest-rank over the records.
type TraceLengths struct {
	Mean float64 `json:"mean"`
	P50  int     `json:"p50"`
	P90  int     `json:"p90"`
	P99  int     `json:"p99"`
	Max  int     `json:"max"`
}

// AddTraces records what the trace scenarios replayed, with each one's
// server hit share taken from r's stages: call it once the stages are
// final (a merge calls it again on the merged stages).
func (r *Result) AddTraces(traces []Trace) {
	r.Traces = nil
	for _, t := range traces {
		t.ServerPrefixHitShare = scenarioHitShare(r.Stages, t.Scenario)
		r.Traces = append(r.Traces, t)
	}
}

// scenarioHitShare joins the hit shares of a scenario's stages, over the
// stages that have one: nil when none has, so that a server that never
// reports cached tokens shows no share rather than 0%.
func scenarioHitShare(stages []metrics.StageSummary, scenario string) *float64 {
	var cached, in int64
	reported := false
	for _, s := range stages {
		if s.Scenario != scenario || s.PrefixHitShare == nil {
			continue
		}
		reported = true
		cached, in = cached+s.CachedTokens, in+s.UsageInputTokens
	}
	if !reported || in == 0 {
		return nil
	}
	share := float64(cached) / float64(in)
	return &share
}
