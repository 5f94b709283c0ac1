package merge

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/result"
)

// withTrace gives a segment result the trace its plan replays and the
// server's prefix-cache counts for its share of the records.
func withTrace(digest string, cached, in int64) func(*result.Result) {
	return func(r *result.Result) {
		st := &r.Stages[0]
		st.UsageInputTokens, st.CachedTokens, st.CachedRequests = in, cached, 1
		share := float64(cached) / float64(in)
		st.PrefixHitShare = &share
		r.AddTraces([]result.Trace{{Scenario: "sweep", Source: "t.jsonl (mooncake)", Digest: digest, Speedup: 1,
			Records: 6, PrefixReuse: 0.7, WithHashIDs: 6, BlockTokens: 16}})
	}
}

// TestMergeKeepsTraces: the merged result describes the replay as every
// segment did, with the server's hit share over all segments' requests.
func TestMergeKeepsTraces(t *testing.T) {
	in := inputs(t,
		seg{index: 0, count: 2, ttft: 100 * time.Millisecond, requests: 3, edit: withTrace("d1", 100, 400)},
		seg{index: 1, count: 2, ttft: 100 * time.Millisecond, requests: 3, edit: withTrace("d1", 300, 400)})
	if got := *in[0].Result.Traces[0].ServerPrefixHitShare; got != 0.25 {
		t.Fatalf("segment 0's server share = %v, want 0.25", got)
	}
	res, _, err := Merge(in, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 {
		t.Fatalf("merged traces = %+v, want the segments' one", res.Traces)
	}
	tr := res.Traces[0]
	if tr.Digest != "d1" || tr.Records != 6 || tr.PrefixReuse != 0.7 {
		t.Errorf("merged trace = %+v, want the segments'", tr)
	}
	if tr.ServerPrefixHitShare == nil || *tr.ServerPrefixHitShare != 0.5 {
		t.Errorf("merged server share = %v, want 0.5 (400 of 800 tokens)", tr.ServerPrefixHitShare)
	}
}

func TestMergeRefusesOtherTraces(t *testing.T) {
	cases := map[string]struct {
		second func(*result.Result)
		want   string
	}{
		"another digest": {second: withTrace("d2", 0, 400), want: "replayed different traces (sweep=d1 and sweep=d2)"},
		"no trace":       {second: func(*result.Result) {}, want: "replayed different traces (sweep=d1 and none)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := inputs(t,
				seg{index: 0, count: 2, ttft: 100 * time.Millisecond, requests: 3, edit: withTrace("d1", 0, 400)},
				seg{index: 1, count: 2, ttft: 100 * time.Millisecond, requests: 3, edit: tc.second})
			_, _, err := Merge(in, "test")
			if !errors.Is(err, ErrInputs) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge error = %v, want ErrInputs saying %q", err, tc.want)
			}
		})
	}
}
