package report

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// testTrace is a 40-record replay of 4 s of a Mooncake trace at 1×.
func testTrace() result.Trace {
	return result.Trace{Scenario: "replay", Source: "data/trace_mooncake.jsonl (mooncake)", Digest: "22212fcdbef80cf8",
		Speedup: 1, Records: 40, SpanS: 3.9, DurationS: 3.9, Sessions: 6,
		Input:       result.TraceLengths{Mean: 440.2, P50: 432, P90: 734, P99: 898, Max: 943},
		Output:      result.TraceLengths{Mean: 105.6, P50: 73, P90: 226, P99: 283, Max: 300},
		BlockTokens: 16, UniqueBlocks: 310, WithHashIDs: 40, PrefixReuse: 0.74}
}

// traceResult replays testTrace through a real collector: ten records a
// second, the third second's five of them started 600 ms late and two
// dropped, so intended and achieved arrivals part there. With cached,
// the server reports a prefix cache serving half of every prompt.
func traceResult(t testing.TB, cached bool) *result.Result {
	t.Helper()
	col := metrics.NewCollector()
	start := t0
	col.StageStarted(engine.StageMark{Scenario: "replay", Stage: "replay", Rate: 40 / 3.9, At: start})
	for k := range 40 {
		due := start.Add(time.Duration(k) * 97500 * time.Microsecond)
		if k == 24 || k == 27 {
			col.Dropped(engine.DropMark{Scenario: "replay", Stage: "replay", Scheduled: due})
			continue
		}
		begin := due.Add(200 * time.Microsecond)
		if k >= 20 && k < 25 {
			begin = due.Add(600 * time.Millisecond)
		}
		col.IterationStarted(engine.IterationMark{Scenario: "replay", Stage: "replay", Scheduled: due, Started: begin})
		res := engine.Result{Start: begin, Status: 200, TTFB: 20 * time.Millisecond, TTFT: 40 * time.Millisecond,
			TTFC: 40 * time.Millisecond, E2E: 900 * time.Millisecond, TPOT: 8 * time.Millisecond,
			ITL: []time.Duration{8 * time.Millisecond}, OutputTokens: 100, InputTokens: 400,
			TokensSource: engine.TokensFromUsage, InputTokensSource: engine.TokensFromUsage}
		if cached {
			res.CachedTokens = 200
		}
		col.Sample(engine.Sample{Scenario: "replay", Stage: "replay", Scheduled: due, Result: res, TraceRecord: k + 1})
	}
	col.StageEnded(engine.StageMark{Scenario: "replay", Stage: "replay", Rate: 40 / 3.9, At: start.Add(3900 * time.Millisecond)})
	meta := result.Meta{Scenario: "scenarios/trace_replay.lua", Model: "sim-7b", Simulator: true, Start: t0,
		End: t0.Add(5 * time.Second), Version: "v0.1.0", Complete: true, Seed: 7}
	r := result.New(meta, col.Close())
	r.AddTraces([]result.Trace{testTrace()})
	return r
}

func TestTraceGolden(t *testing.T) {
	r := traceResult(t, true)
	golden(t, "trace.txt.golden", render(t, Text(r)))
	golden(t, "trace.html.golden", render(t, HTML(r)))
}

// TestTraceText: the block names the replay and sets the trace's reuse
// beside the server's, and says so when the server reported none.
func TestTraceText(t *testing.T) {
	tests := map[string]struct {
		cached   bool
		want     []string
		dontWant []string
	}{
		"server reports cached tokens": {cached: true, want: []string{
			"replay  data/trace_mooncake.jsonl (mooncake), 40 records over 3.90 s at 1× (digest 22212fcdbef80cf8)\n",
			"prefix reuse: trace 74.0% (an infinite cache) · server 50.0% (cached_tokens of usage)\n",
			"cache hit", "50.0%", "a trace's target/s is its mean rate",
		}},
		"server reports none": {cached: false, want: []string{
			"prefix reuse: trace 74.0% (an infinite cache) · the server did not report cached tokens",
		}, dontWant: []string{"cache hit", "0.0%"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			text := string(render(t, Text(traceResult(t, tt.cached))))
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("summary lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(text, w) {
					t.Errorf("summary has %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestTraceHeadline(t *testing.T) {
	tests := map[string]struct {
		edit      func(*result.Trace)
		want      string
		wantSlice string
	}{
		"whole trace at 1×": {edit: func(*result.Trace) {},
			want: "data/trace_mooncake.jsonl (mooncake), 40 records over 3.90 s at 1× (digest 22212fcdbef80cf8)"},
		"slowed down, limited": {edit: func(t *result.Trace) { t.Speedup, t.DurationS, t.Limit = 0.2, 19.5, 40 },
			want:      "data/trace_mooncake.jsonl (mooncake), 40 records over 3.90 s at 0.2×, replayed in 19.50 s (digest 22212fcdbef80cf8)",
			wantSlice: "slice: the first 40 records (limit)"},
		"offset": {edit: func(t *result.Trace) { t.Speedup, t.DurationS, t.TimeOffsetS = 2, 1.95, 1.5 },
			want:      "data/trace_mooncake.jsonl (mooncake), 40 records over 3.90 s at 2×, replayed in 1.95 s (digest 22212fcdbef80cf8)",
			wantSlice: "slice: from 1.5 s into the trace (time_offset)"},
		"one record": {edit: func(t *result.Trace) { t.Records, t.SpanS, t.DurationS = 1, 0, 0 },
			want: "data/trace_mooncake.jsonl (mooncake), 1 record over 0.00 s at 1× (digest 22212fcdbef80cf8)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tr := testTrace()
			tt.edit(&tr)
			if got := traceHeadline(&tr); got != tt.want {
				t.Errorf("traceHeadline =\n  %q\nwant\n  %q", got, tt.want)
			}
			if got := sliceLine(&tr); got != tt.wantSlice {
				t.Errorf("sliceLine = %q, want %q", got, tt.wantSlice)
			}
		})
	}
}

func TestTraceLines(t *testing.T) {
	tests := map[string]struct {
		edit func(*result.Trace)
		want []string
	}{
		"sessions sent one by one": {edit: func(*result.Trace) {}, want: []string{
			"sessions: 6 in the records, each record sent on its own (sessions = true replays them as conversations)",
			"prefix blocks: 16 tokens each, 310 unique, in 40 of 40 records"}},
		"conversations": {edit: func(t *result.Trace) { t.Conversations = true }, want: []string{
			"sessions: 6, replayed as conversations (each session's records in order, on one VU)",
			"prefix blocks: 16 tokens each, 310 unique, in 40 of 40 records"}},
		"no sessions, no hash ids": {edit: func(t *result.Trace) { t.Sessions, t.WithHashIDs, t.UniqueBlocks, t.PrefixReuse = 0, 0, 0, 0 }},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tr := testTrace()
			tt.edit(&tr)
			if got := traceLines(&tr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("traceLines =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
	tr := testTrace()
	tr.WithHashIDs = 0
	if got, want := prefixReuseLine(&tr), "prefix reuse: the trace has no hash ids, so it describes no sharing · the server did not report cached tokens (no cached_tokens in its usage)"; got != want {
		t.Errorf("prefixReuseLine = %q, want %q", got, want)
	}
}

// TestAddTracesHitShare: the server's share joins the scenario's stages
// that have one, and stays absent (never 0%) when none has.
func TestAddTracesHitShare(t *testing.T) {
	half, none := 0.5, 0.0
	stage := func(scenario string, cached, in int64, share *float64) metrics.StageSummary {
		return metrics.StageSummary{Scenario: scenario, Stage: scenario, CachedTokens: cached, UsageInputTokens: in, PrefixHitShare: share}
	}
	tests := map[string]struct {
		stages []metrics.StageSummary
		want   *float64
	}{
		"one stage":                {stages: []metrics.StageSummary{stage("replay", 50, 100, &half)}, want: &half},
		"other scenario's hits":    {stages: []metrics.StageSummary{stage("chat", 50, 100, &half), stage("replay", 0, 100, &none)}, want: &none},
		"not reported":             {stages: []metrics.StageSummary{stage("replay", 0, 100, nil)}},
		"no stage":                 {},
		"two stages, token-weight": {stages: []metrics.StageSummary{stage("replay", 10, 100, ptr(0.1)), stage("replay", 290, 300, ptr(290.0/300))}, want: ptr(0.75)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := &result.Result{Stages: tt.stages}
			r.AddTraces([]result.Trace{testTrace()})
			got := r.Traces[0].ServerPrefixHitShare
			switch {
			case (got == nil) != (tt.want == nil):
				t.Fatalf("server share = %v, want %v", got, tt.want)
			case got != nil && *got != *tt.want:
				t.Errorf("server share = %v, want %v", *got, *tt.want)
			}
		})
	}
}

func TestTraceJSONRoundTrip(t *testing.T) {
	want := traceResult(t, true)
	want.Traces[0].TimeOffsetS, want.Traces[0].Limit, want.Traces[0].Conversations = 1.5, 40, true
	data := render(t, JSON(want))
	got, err := result.ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Traces, want.Traces) {
		t.Errorf("traces round trip differs:\ngot  %+v\nwant %+v", got.Traces, want.Traces)
	}
	for _, field := range []string{`"traces": [`, `"source": "data/trace_mooncake.jsonl (mooncake)"`, `"digest": "22212fcdbef80cf8"`,
		`"speedup": 1`, `"time_offset_s": 1.5`, `"limit": 40`, `"records": 40`, `"span_s": 3.9`, `"duration_s": 3.9`,
		`"sessions": 6`, `"conversations": true`, `"input_tokens": {`, `"p99": 898`, `"output_tokens": {`, `"block_tokens": 16`,
		`"unique_blocks": 310`, `"prefix_reuse": 0.74`, `"server_prefix_hit_share": 0.5`} {
		if !bytes.Contains(data, []byte(field)) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	plain := result.New(singleFixture())
	if data := render(t, JSON(plain)); bytes.Contains(data, []byte(`"traces"`)) {
		t.Error("a result without a trace scenario writes a traces field")
	}
	uncached := render(t, JSON(traceResult(t, false)))
	if bytes.Contains(uncached, []byte(`"server_prefix_hit_share"`)) {
		t.Error("a server that reported no cached tokens has a server_prefix_hit_share")
	}
}

// TestHTMLTrace: the trace section, and intended against achieved
// arrivals drawn for an open-model run only.
func TestHTMLTrace(t *testing.T) {
	page := string(render(t, HTML(traceResult(t, true))))
	for _, want := range []string{"<h2>Trace: replay</h2>", "40 records over 3.90 s at 1×", ">input<", ">898<",
		"prefix reuse: trace 74.0% (an infinite cache) · server 50.0% (cached_tokens of usage)",
		`data-chart="ts-arrivals"`, ">intended<", ">achieved<", ">dropped<", "<th>cache hit</th>", "cache hit: the share"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	chart := regexp.MustCompile(`(?s)data-chart="ts-arrivals".*?</figure>`).FindString(page)
	if n := strings.Count(chart, `class="series"`); n < 3 {
		t.Errorf("arrivals chart draws %d paths, want intended, achieved and dropped", n)
	}
	closed := string(render(t, HTML(richResult())))
	if strings.Contains(closed, "ts-arrivals") || strings.Contains(closed, "Trace:") || strings.Contains(closed, "cache hit") {
		t.Error("a closed-model run without a trace or cached tokens draws arrivals, a trace section or a cache hit column")
	}
}
