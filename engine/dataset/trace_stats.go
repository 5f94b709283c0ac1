package dataset

import (
	"math"
	"slices"
)

// TraceStats describe a trace for its report: what was replayed, and how
// much of its prompts a prefix cache could serve.
type TraceStats struct {
	Records   int     `json:"records"`
	DurationS float64 `json:"duration_s"` // the last record's offset
	Input     Lengths `json:"input_tokens"`
	Output    Lengths `json:"output_tokens"`
	Sessions  int     `json:"sessions"` // distinct session ids
	// WithHashIDs counts the records that have hash ids; UniqueBlocks the
	// distinct ids among them.
	WithHashIDs  int `json:"records_with_hash_ids"`
	UniqueBlocks int `json:"unique_blocks"`
	BlockTokens  int `json:"block_tokens"`
	// PrefixReuse is the share of input tokens an infinite prefix cache
	// would serve: CachedTokens / InputTokens.
	PrefixReuse  float64 `json:"prefix_reuse"`
	CachedTokens int64   `json:"cached_tokens"`
	InputTokens  int64   `json:"input_tokens_total"`
}

// Lengths is a distribution of token counts; percentiles are nearest-rank.
type Lengths struct {
	Mean float64 `json:"mean"`
	P50  int     `json:"p50"`
	P90  int     `json:"p90"`
	P99  int     `json:"p99"`
	Max  int     `json:"max"`
}

// Stats describes the whole trace. A record's cached tokens are its
// leading blocks whose whole id chain (ids[0..k]) an earlier record had,
// BlockTokens each, at most its Input: the hits of a cache that forgets
// nothing, an upper bound for a real server's.
func (t *Trace) Stats() TraceStats {
	s := TraceStats{Records: len(t.Records), BlockTokens: t.Format.BlockTokens}
	if len(t.Records) == 0 {
		return s
	}
	s.DurationS = t.Records[len(t.Records)-1].At.Seconds()
	in := make([]int, len(t.Records))
	out := make([]int, len(t.Records))
	sessions := map[string]bool{}
	blocks := map[int64]struct{}{}
	chains := prefixChains{}
	for i := range t.Records {
		rec := &t.Records[i]
		in[i], out[i] = rec.Input, rec.Output
		if rec.Session != "" {
			sessions[rec.Session] = true
		}
		if len(rec.HashIDs) > 0 {
			s.WithHashIDs++
		}
		for _, id := range rec.HashIDs {
			blocks[id] = struct{}{}
		}
		cached := int64(chains.add(rec.HashIDs)) * int64(t.Format.BlockTokens)
		s.CachedTokens += min(cached, int64(rec.Input))
		s.InputTokens += int64(rec.Input)
	}
	s.Input, s.Output = lengths(in), lengths(out)
	s.Sessions, s.UniqueBlocks = len(sessions), len(blocks)
	if s.InputTokens > 0 {
		s.PrefixReuse = float64(s.CachedTokens) / float64(s.InputTokens)
	}
	return s
}

// prefixChains is a trie of the id chains seen: node 0 is the empty
// prefix, and an edge (node, id) leads to the node of that prefix plus id.
type prefixChains map[[2]int64]int64

// add records the chain of ids and returns how many of its leading blocks
// were there before.
func (c prefixChains) add(ids []int64) (seen int) {
	node, known := int64(0), true
	for _, id := range ids {
		next, ok := c[[2]int64{node, id}]
		if !ok {
			next = int64(len(c)) + 1
			c[[2]int64{node, id}] = next
		}
		if known = known && ok; known {
			seen++
		}
		node = next
	}
	return seen
}

func lengths(v []int) Lengths {
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	rank := func(p float64) int { return v[max(int(math.Ceil(p*float64(len(v))))-1, 0)] }
	return Lengths{Mean: sum / float64(len(v)), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: v[len(v)-1]}
}
