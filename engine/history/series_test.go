package history

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/result"
)

// TestTrend: a metric of each stage across runs, oldest run first,
// whatever order the runs come in (Results gives them newest first).
func TestTrend(t *testing.T) {
	var runs []Run
	var results []*result.Result
	for i, scale := range []float64{3, 2, 1} { // newest first
		runs = append(runs, Run{ID: int64(3 - i)})
		results = append(results, makeResult(runSpec{n: 20, scale: scale, seed: 1}))
	}
	tests := []struct {
		stage  string
		series []string
	}{
		{"", []string{"chat/low", "chat/high"}},
		{"chat/high", []string{"chat/high"}},
		{"low", []string{"chat/low"}},
		{"nosuch", nil},
	}
	for _, tc := range tests {
		got, err := Trend(runs, results, "ttft.p99", tc.stage)
		if err != nil {
			t.Fatalf("stage %q: %v", tc.stage, err)
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Stage)
		}
		if !slices.Equal(names, tc.series) {
			t.Errorf("stage %q: series %v, want %v", tc.stage, names, tc.series)
		}
	}
	got, _ := Trend(runs, results, "ttft.p99", "chat/high")
	s := got[0]
	if len(s.Points) != 3 || !s.HigherBad || s.Unit != "ms" {
		t.Fatalf("series %+v: want 3 points in ms, higher bad", s)
	}
	for j, p := range s.Points {
		i := len(runs) - 1 - j
		if p.Run.ID != runs[i].ID || p.Figure.Value != results[i].Stages[1].TTFT.P99 {
			t.Errorf("point %d: run %d, %g; want run %d, %g", j, p.Run.ID, p.Figure.Value, runs[i].ID, results[i].Stages[1].TTFT.P99)
		}
	}
	if _, err := Trend(runs, results, "ttft.p42", ""); err == nil {
		t.Error("an unknown metric gave no error")
	}
	if got, want := Stages(results), []string{"chat/low", "chat/high"}; !slices.Equal(got, want) {
		t.Errorf("Stages = %v, want %v", got, want)
	}
}

// TestTrendAmbiguousStage: a stage name two scenarios have must be named
// with its scenario.
func TestTrendAmbiguousStage(t *testing.T) {
	r := makeResult(runSpec{n: 20})
	other := r.Stages[0]
	other.Scenario = "embed"
	r.Stages = append(r.Stages, other)
	_, err := Trend([]Run{{ID: 1}}, []*result.Result{r}, "ttft.p99", "low")
	if err == nil || !strings.Contains(err.Error(), "chat/low, embed/low") {
		t.Errorf("error %v, want one naming chat/low and embed/low", err)
	}
}
