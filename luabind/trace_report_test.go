package luabind

import (
	"reflect"
	"testing"

	"github.com/llmload/llmload/engine/result"
)

// TestScriptTraces: a trace scenario's report describes the records it
// replays (not the whole file), its slice, pace and sessions, under the
// path the script gave.
func TestScriptTraces(t *testing.T) {
	path := traceScript(t, smallTrace, `llm.trace.mooncake("t.jsonl", { block_tokens = 16 })`,
		`speedup = 2, time_offset = "0.5s", limit = 2, sessions = true, pre_allocated_vus = 2`)
	s := mustCompile(t, path, Options{})
	got := s.Traces()
	if len(got) != 1 {
		t.Fatalf("traces = %+v, want one", got)
	}
	want := result.Trace{Scenario: "replay", Source: "t.jsonl (mooncake)", Digest: s.Plan().Scenarios[0].Trace.Digest,
		Speedup: 2, TimeOffsetS: 0.5, Limit: 2, Records: 2, SpanS: 1.5, DurationS: 0.75, Sessions: 1, Conversations: true,
		Input:       result.TraceLengths{Mean: 22.5, P50: 5, P90: 40, P99: 40, Max: 40},
		Output:      result.TraceLengths{Mean: 4.5, P50: 0, P90: 9, P99: 9, Max: 9},
		BlockTokens: 16, UniqueBlocks: 3, WithHashIDs: 1}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("trace =\n  %+v\nwant\n  %+v", got[0], want)
	}
	if sc := s.Plan().Scenarios[0]; sc.Trace.TimeOffset.Seconds() != 0.5 || sc.Trace.Limit != 2 {
		t.Errorf("plan's trace slice = %v, %d; want 0.5s, 2", sc.Trace.TimeOffset, sc.Trace.Limit)
	}
}

func TestScriptTracesNone(t *testing.T) {
	path := writeScript(t, "s.lua", `options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "1s", exec = "f" } } }
function f() end`)
	if got := mustCompile(t, path, Options{}).Traces(); got != nil {
		t.Errorf("traces = %+v, want none", got)
	}
}
