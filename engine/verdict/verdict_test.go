package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

func resultOf(stages ...metrics.StageSummary) *result.Result {
	return &result.Result{Stages: stages}
}

func TestUnmeasured(t *testing.T) {
	typo := []metrics.ScriptError{{Message: "s.lua:12: llm.chat: unknown key max_tokn (did you mean max_tokens?)", Count: 33865}}
	tests := []struct {
		name string
		res  *result.Result
		want string // "" or a substring of the reason
	}{
		{"measured", resultOf(metrics.StageSummary{Iterations: 10, Requests: 10, OK: 9, Failed: 1}), ""},
		{"every iteration a script error", &result.Result{ScriptErrors: typo,
			Stages: []metrics.StageSummary{{Iterations: 33865, IterationErrors: 33865}}},
			"nothing measured: all 33,865 iterations failed with a script error and no request was sent; first: s.lua:12: llm.chat: unknown key max_tokn"},
		{"every iteration errs after its request", &result.Result{ScriptErrors: typo,
			Stages: []metrics.StageSummary{{Iterations: 5, IterationErrors: 5, Requests: 5, OK: 5}}},
			"nothing measured: all 5 iterations failed with a script error; first: s.lua:12"},
		{"some script errors, no request", &result.Result{ScriptErrors: append(typo, metrics.ScriptError{Message: "s.lua:3: x"}),
			Stages: []metrics.StageSummary{{Iterations: 10, IterationErrors: 4}}},
			"4 of 10 iterations failed with a script error and no request was sent; most frequent of 2 distinct: s.lua:12"},
		{"the first error is named, not the most frequent", &result.Result{ScriptErrors: append(typo, metrics.ScriptError{Message: "s.lua:3: x", Count: 1, First: true}),
			Stages: []metrics.StageSummary{{Iterations: 10, IterationErrors: 10}}},
			"first of 2 distinct: s.lua:3: x"},
		{"no llm.chat", resultOf(metrics.StageSummary{Iterations: 1200}),
			"nothing measured: no request was sent: 1,200 iterations ran and none called llm.chat or llm.complete"},
		{"nothing ran", resultOf(), "no request was sent: no iteration ran"},
		{"warmup only", &result.Result{Warmup: metrics.WarmupSummary{Requests: 5}, Stages: []metrics.StageSummary{{Iterations: 1}}},
			"(5 warmup requests are not measured)"},
		{"every request failed", resultOf(
			metrics.StageSummary{Iterations: 3, Requests: 3, Failed: 3, Errors: map[string]int64{"conn_refused": 2, "http_5xx:500": 1}}),
			"nothing measured: no request succeeded: all 3 requests failed (conn_refused×2, http_5xx:500×1)"},
		{"some iterations error, requests ok", resultOf(metrics.StageSummary{Iterations: 10, IterationErrors: 9, Requests: 10, OK: 10}), ""},
		{"robustness only, handled", resultOf(metrics.StageSummary{Iterations: 4, DirtyRequests: 4,
			Robustness: map[string]metrics.RobustnessSummary{"empty": {Count: 4, Handled: 4, Statuses: map[int]int64{400: 4}}}}), ""},
		{"robustness only, no answer", resultOf(metrics.StageSummary{Iterations: 4, DirtyRequests: 4,
			Robustness: map[string]metrics.RobustnessSummary{"empty": {Count: 4, Defects: 4, Statuses: map[int]int64{0: 4}}}}),
			"no request succeeded: all 4 requests failed (4 dirty without an answer)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unmeasured(tt.res)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Unmeasured = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJudgeOutages(t *testing.T) {
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	measured := metrics.StageSummary{Iterations: 10, Requests: 10, OK: 5, Failed: 5}
	down := backoff.Outage{Start: at(3), Last: at(9.5), Attempts: 14, Classes: map[string]int64{"conn_refused": 14}}
	blip := backoff.Outage{Start: at(3), Last: at(4.5), End: at(5.2), Attempts: 9, Classes: map[string]int64{"conn_refused": 9}}
	tests := []struct {
		name       string
		in         Input
		wantReason string
		wantWarn   string
	}{
		{"no outage", Input{Start: start, End: at(10)}, "", ""},
		{"down to the end", Input{Outages: []backoff.Outage{down}, Start: start, End: at(10)},
			"target unreachable: it stopped answering 3.0 s into the run and did not come back (14 attempts failed without a response)",
			"target unreachable from 3.0 s into the run (10:00:03 UTC): 14 attempts failed without a response (conn_refused×14), " +
				"VUs backing off up to 2s between attempts; it did not answer again before the run ended (7.0 s later)"},
		{"came back", Input{Outages: []backoff.Outage{blip}, Start: start, End: at(10)},
			"it stopped answering 3.0 s into the run and came back (9 attempts",
			"it answered again after 2.2 s, 5.2 s into the run (10:00:05 UTC)"},
		{"opted out", Input{Outages: []backoff.Outage{down}, Start: start, End: at(10), OnUnreachable: OnUnreachableWarn},
			"", "target unreachable from 3.0 s"},
		{"twice", Input{Outages: []backoff.Outage{blip, down}, Start: start, End: at(10)},
			"it stopped answering 2 times, first 3.0 s into the run and did not come back (23 attempts", "conn_refused×14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resultOf(measured)
			got := Judge(res, tt.in)
			if (got == "") != (tt.wantReason == "") || !strings.Contains(got, tt.wantReason) {
				t.Errorf("reason = %q, want %q", got, tt.wantReason)
			}
			if res.Run.Verdict != got {
				t.Errorf("Run.Verdict = %q, want the reason %q", res.Run.Verdict, got)
			}
			warns := strings.Join(res.Warnings, "\n")
			if (warns == "") != (tt.wantWarn == "") || !strings.Contains(warns, tt.wantWarn) {
				t.Errorf("warnings = %q, want %q", warns, tt.wantWarn)
			}
		})
	}
}

func TestNothingMeasuredWinsOverAnOutage(t *testing.T) {
	res := resultOf(metrics.StageSummary{Iterations: 3, Requests: 3, Failed: 3, Errors: map[string]int64{"conn_refused": 3}})
	start := time.Unix(0, 0)
	o := backoff.Outage{Start: start, Last: start.Add(2 * time.Second), Attempts: 3, Classes: map[string]int64{"conn_refused": 3}}
	got := Judge(res, Input{Outages: []backoff.Outage{o}, Start: start, End: start.Add(3 * time.Second)})
	if !strings.HasPrefix(got, NothingMeasured) {
		t.Errorf("reason = %q, want nothing measured", got)
	}
	if n := len(res.Warnings); n != 2 {
		t.Errorf("%d warnings, want the outage and the reason: %q", n, res.Warnings)
	}
}
