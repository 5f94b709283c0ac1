package dataset

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A hand-computed example, blocks of 4 tokens:
//
//	record  ids        input  cached blocks          cached tokens
//	0       1 2 3      12     none (first)           0
//	1       1 2 4      10     [1] [1 2]              8
//	2       2 3        8      none: [2] never led    0
//	3       1 2 3 5    14     [1] [1 2] [1 2 3]      12
//	4       1 2 3      9      three, capped at 9     9
//	5       -          5      no ids                 0
//
// 29 of 58 input tokens are cached: a share of 0.5.
func TestTraceStats(t *testing.T) {
	rec := func(at time.Duration, in, out int, session string, ids ...int64) TraceRecord {
		return TraceRecord{At: at, Input: in, Output: out, Session: session, HashIDs: ids}
	}
	tr := &Trace{Format: TraceFormat{Kind: TraceMooncake, BlockTokens: 4}, Records: []TraceRecord{
		rec(0, 12, 100, "a", 1, 2, 3),
		rec(time.Second, 10, 200, "a", 1, 2, 4),
		rec(2*time.Second, 8, 300, "b", 2, 3),
		rec(3*time.Second, 14, 400, "", 1, 2, 3, 5),
		rec(4*time.Second, 9, 500, "c", 1, 2, 3),
		rec(4500*time.Millisecond, 5, 600, "a"),
	}}
	got := tr.Stats()
	want := TraceStats{
		Records: 6, DurationS: 4.5,
		Input:    Lengths{Mean: 58.0 / 6, P50: 9, P90: 14, P99: 14, Max: 14},
		Output:   Lengths{Mean: 350, P50: 300, P90: 600, P99: 600, Max: 600},
		Sessions: 3, WithHashIDs: 5, UniqueBlocks: 5, BlockTokens: 4,
		PrefixReuse: 0.5, CachedTokens: 29, InputTokens: 58,
	}
	if math.Abs(got.Input.Mean-want.Input.Mean) < 1e-9 {
		got.Input.Mean = want.Input.Mean
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats:\n got %+v\nwant %+v", got, want)
	}
	if (&Trace{}).Stats().Records != 0 {
		t.Error("an empty trace has records")
	}
}

// The stats go into result files with snake_case names.
func TestTraceStatsJSON(t *testing.T) {
	tr := &Trace{Format: TraceFormat{BlockTokens: 16}, Records: []TraceRecord{{Input: 16, Output: 1, HashIDs: []int64{1}}}}
	b, err := json.Marshal(tr.Stats())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"records":1`, `"duration_s":0`, `"input_tokens":{"mean":16,"p50":16,"p90":16,"p99":16,"max":16}`,
		`"output_tokens":`, `"sessions":0`, `"records_with_hash_ids":1`, `"unique_blocks":1`, `"block_tokens":16`,
		`"prefix_reuse":0`, `"cached_tokens":0`, `"input_tokens_total":16`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s lacks %s", b, key)
		}
	}
}
