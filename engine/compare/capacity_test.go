package compare

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
)

// capacityRun is a result of one capacity search between lo and hi
// req/s, whose probe stages are named as every search names them.
func capacityRun(lo, hi float64) *result.Result {
	r := &result.Result{SchemaVersion: result.SchemaVersion, Run: result.Meta{Scenario: "capacity.lua"}}
	for _, name := range []string{"probe-01", "probe-02", "probe-03"} {
		r.Stages = append(r.Stages, metrics.StageSummary{Scenario: "search", Stage: name, Requests: 100, OK: 100, DurationS: 10})
	}
	c := result.Capacity{Scenario: "search", Load: plan.CapacityRate, Unit: "req/s", Capacity: (lo + hi) / 2, Lo: lo, Hi: hi}
	if hi == 0 {
		c.Capacity, c.AtLeast = lo, true
	}
	r.Capacity = []result.Capacity{c}
	return r
}

func TestCompareCapacity(t *testing.T) {
	stopped := capacityRun(40, 44)
	stopped.Capacity[0].Stopped = "llmload was the bottleneck (CLIENT-BOUND)"
	tests := []struct {
		name      string
		base, new *result.Result
		verdict   string
		change    string
		note      string
	}{
		{"a drop beyond the bound", capacityRun(39.8, 43.2), capacityRun(30, 32), VerdictRegression, "-25.3%", ""},
		{"a gain", capacityRun(39.8, 43.2), capacityRun(50, 54), VerdictBetter, "+25.3%", ""},
		{"the same", capacityRun(39.8, 43.2), capacityRun(40, 43.5), VerdictSame, "+0.6%", ""},
		{"worse within the bound", capacityRun(39.8, 43.2), capacityRun(38.9, 39.5), VerdictWorse, "-5.5%", ""},
		{"too wide to tell", capacityRun(39.8, 43.2), capacityRun(35, 40), VerdictInconclusive, "-9.6%",
			"the intervals [39.8, 43.2] and [35, 40] are too wide to tell a drop beyond 10%"},
		{"both held at their max", capacityRun(64, 0), capacityRun(64, 0), VerdictInconclusive, "+0.0%",
			"both searches held at their max (≥ 64 req/s and ≥ 64 req/s): raise max to compare"},
		{"new held at its max", capacityRun(39.8, 43.2), capacityRun(64, 0), VerdictBetter, "+54.2%", ""},
		{"a stopped search still bounds", capacityRun(39.8, 43.2), stopped, VerdictSame, "+1.2%",
			"new's search stopped early: llmload was the bottleneck (CLIENT-BOUND)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compare(tt.base, tt.new, Options{MaxRegression: 0.2, MaxCapacityDrop: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Matched) != 0 || len(r.OnlyBase) != 0 || len(r.Rows) != 0 {
				t.Errorf("probe stages were matched: %v %v", r.Matched, r.OnlyBase)
			}
			row := r.Capacity[0]
			if row.Decision != tt.verdict || capacityChange(row) != tt.change || row.Note != tt.note {
				t.Errorf("verdict %s, change %s, note %q; want %s, %s, %q", row.Decision, capacityChange(row), row.Note, tt.verdict, tt.change, tt.note)
			}
			if got, want := r.Passed(), tt.verdict != VerdictRegression; got != want {
				t.Errorf("Passed() = %v, want %v", got, want)
			}
			if got, want := r.Conclusive(), tt.verdict != VerdictInconclusive; got != want {
				t.Errorf("Conclusive() = %v, want %v", got, want)
			}
		})
	}
}

func TestCompareCapacityOnOneSide(t *testing.T) {
	base := readLong(t)
	next := readLong(t)
	next.Capacity = capacityRun(20, 22).Capacity
	r, err := Compare(base, next, Options{MaxRegression: 0.2, MaxCapacityDrop: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Capacity) != 1 || !r.Capacity[0].NoData || r.Capacity[0].Note != "only in new" {
		t.Errorf("capacity rows = %+v", r.Capacity)
	}
	if len(r.Matched) == 0 {
		t.Error("the other scenarios' stages were not compared")
	}
	if _, err := Compare(capacityRun(1, 2), &result.Result{Stages: []metrics.StageSummary{{Scenario: "x", Stage: "y"}}}, Options{}); err != nil {
		t.Errorf("a capacity in base only still compares (a row of no data): %v", err)
	}
	if _, err := Compare(&result.Result{}, &result.Result{}, Options{}); !errors.Is(err, ErrNoCommonStage) {
		t.Errorf("nothing to compare: err = %v", err)
	}
	if _, err := Compare(capacityRun(1, 2), capacityRun(1, 2), Options{MaxCapacityDrop: 1}); err == nil {
		t.Error("a capacity drop bound of 100% was accepted")
	}
}

func TestCompareCapacityRenders(t *testing.T) {
	r, err := Compare(capacityRun(39.8, 43.2), capacityRun(30, 32), Options{MaxRegression: 0.2, MaxCapacityDrop: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	r.Base, r.New = "base.json", "new.json"
	text := string(render(t, Text(r)))
	golden(t, "compare_capacity.txt.golden", []byte(text))
	golden(t, "compare_capacity.md.golden", render(t, Markdown(r)))
	if !strings.Contains(text, "❌ capacity dropped beyond 10% in search") {
		t.Errorf("headline:\n%s", text)
	}
}

func render(t *testing.T, rep report.Reporter) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := rep(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
