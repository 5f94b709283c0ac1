package history

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/result"
)

func TestParseBaseline(t *testing.T) {
	tests := []struct {
		in   string
		runs int
		err  string // a part of the error; "" for none
	}{
		{"history:last", 1, ""},
		{"history:median:1", 1, ""},
		{"history:median:10", 10, ""},
		{"history:median:1000", MaxPool, ""},
		{"history:median:0", 0, "at least 1"},
		{"history:median:-3", 0, "at least 1"},
		{"history:median:x", 0, "whole number"},
		{"history:median:", 0, "whole number"},
		{"history:median:1001", 0, "at most 1000"},
		{"history:foo", 0, "want history:last or history:median:N"},
		{"history:", 0, "want history:last or history:median:N"},
		{"last", 0, "not a history baseline"},
		{"base.json", 0, "not a history baseline"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBaseline(tc.in)
			if tc.err == "" {
				if err != nil || got.Runs != tc.runs {
					t.Fatalf("ParseBaseline = %+v, %v; want %d runs", got, err, tc.runs)
				}
				// history:median:1 is written as the history:last it is.
				if back, err := ParseBaseline(got.String()); err != nil || back != got {
					t.Errorf("%q does not read back: %+v, %v", got.String(), back, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseBaseline error %v, want one quoting %q and saying %q", err, tc.in, tc.err)
			}
		})
	}
	if !IsBaselineSpec("history:last") || IsBaselineSpec("base.json") {
		t.Error("IsBaselineSpec tells a file from a history baseline wrongly")
	}
}

func TestDescribe(t *testing.T) {
	src := Source{Dialect: SQLite, Path: "h.db"}
	runs := func(ids ...int64) []Run {
		var out []Run
		for _, id := range ids { // newest first, as Baseline gives them
			out = append(out, Run{ID: id})
		}
		return out
	}
	tests := []struct {
		spec BaselineSpec
		runs []Run
		want string
	}{
		{BaselineSpec{Runs: 1}, runs(7), "history:last (run 7 of sqlite:h.db)"},
		{BaselineSpec{Runs: 3}, runs(9, 8, 5), "history:median:3 (runs 5,8,9 of sqlite:h.db)"},
		{BaselineSpec{Runs: 10}, runs(3, 2), "history:median:10 (runs 2,3 of sqlite:h.db; only 2 of 10 yet)"},
		// A pool of one where ten were asked says so too.
		{BaselineSpec{Runs: 10}, runs(3), "history:median:10 (run 3 of sqlite:h.db; only 1 of 10 yet)"},
		{BaselineSpec{Runs: 7}, runs(40, 39, 38, 37, 36, 35, 34), "history:median:7 (runs 34,…,40 of sqlite:h.db)"},
	}
	for _, tc := range tests {
		if got := Describe(tc.spec, tc.runs, src); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
}

// TestFingerprint: runs of one plan line up whatever their seeds; another
// script or --set value is another plan.
func TestFingerprint(t *testing.T) {
	base := Fingerprint(makeResult(runSpec{n: 1, script: "a", runSeed: 1}))
	tests := []struct {
		name string
		spec runSpec
		same bool
	}{
		{"another seed", runSpec{n: 1, script: "a", runSeed: 2}, true},
		{"other latencies", runSpec{n: 3, script: "a", runSeed: 1, scale: 2}, true},
		{"another script", runSpec{n: 1, script: "b", runSeed: 1}, false},
		{"a --set value", runSpec{n: 1, script: "a", runSeed: 1, params: map[string]string{"rate": "5"}}, false},
	}
	for _, tc := range tests {
		r := makeResult(tc.spec)
		if got := Fingerprint(r); (got == base) != tc.same {
			t.Errorf("%s: fingerprint %s, base %s; want same=%v", tc.name, got, base, tc.same)
		}
		if r.Run.PlanParts.Seed != tc.spec.runSeed {
			t.Errorf("%s: Fingerprint changed the result's seed to %d", tc.name, r.Run.PlanParts.Seed)
		}
	}
	r := makeResult(runSpec{n: 1, script: "a", runSeed: 2})
	if r.Run.Plan == base {
		t.Fatal("the plan's own fingerprint ignores the seed: the test proves nothing")
	}
	// A result from before plan parts keeps its plan's fingerprint.
	r.Run.PlanParts = nil
	if got := Fingerprint(r); got != r.Run.Plan {
		t.Errorf("without parts: %q, want the plan's %q", got, r.Run.Plan)
	}
}

// TestPoolLeavesRunsAlone: Pool copies, never changes the runs it is
// given, which the caller may still print or store.
func TestPoolLeavesRunsAlone(t *testing.T) {
	rs := []*result.Result{makeResult(runSpec{n: 20, seed: 1}), makeResult(runSpec{n: 30, seed: 2, scale: 2})}
	before := [][]byte{resultJSON(t, rs[0]), resultJSON(t, rs[1])}
	pooled, err := Pool(rs)
	if err != nil {
		t.Fatal(err)
	}
	if pooled.Stages[0].Requests != 50 {
		t.Fatalf("pooled %d requests, want 50", pooled.Stages[0].Requests)
	}
	for i, r := range rs {
		if !bytes.Equal(resultJSON(t, r), before[i]) {
			t.Errorf("Pool changed run %d", i)
		}
	}
	one, err := Pool(rs[:1])
	if err != nil || one == rs[0] || !bytes.Equal(resultJSON(t, one), before[0]) {
		t.Errorf("Pool of one run: %v; want an equal copy", err)
	}
	if _, err := Pool(nil); err == nil {
		t.Error("Pool of no runs: no error")
	}
}

// TestPoolCapacity: each capacity search keeps the entry of the run
// with the median capacity, whole, not a mix of the runs' fields.
func TestPoolCapacity(t *testing.T) {
	var rs []*result.Result
	for i, c := range []float64{10, 30, 20} {
		r := makeResult(runSpec{n: 5, seed: uint64(i)})
		r.Capacity = []result.Capacity{
			{Scenario: "chat", Load: "rate", Unit: "req/s", Capacity: c, Lo: c - 1, Hi: c + 1},
			{Scenario: "chat", Load: "vus", Unit: "VUs", Capacity: 100 - c},
		}
		rs = append(rs, r)
	}
	pooled, err := Pool(rs)
	if err != nil {
		t.Fatal(err)
	}
	want := []result.Capacity{
		{Scenario: "chat", Load: "rate", Unit: "req/s", Capacity: 20, Lo: 19, Hi: 21},
		{Scenario: "chat", Load: "vus", Unit: "VUs", Capacity: 80},
	}
	if len(pooled.Capacity) != len(want) {
		t.Fatalf("pooled capacity %+v, want %+v", pooled.Capacity, want)
	}
	for i := range want {
		if g := pooled.Capacity[i]; g.Scenario != want[i].Scenario || g.Load != want[i].Load || g.Capacity != want[i].Capacity || g.Lo != want[i].Lo || g.Hi != want[i].Hi {
			t.Errorf("capacity %d = %+v, want %+v", i, g, want[i])
		}
	}
}
