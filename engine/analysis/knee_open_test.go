package analysis

import (
	"strings"
	"testing"
)

// openPoint is one level of an open sweep over 60 s.
func openPoint(rate, achieved float64, dropped int64, lagMS float64) Point {
	return Point{Stage: "r" + gaugeText(rate), Load: rate, Achieved: achieved, ReqPerSec: achieved, Dropped: dropped, WindowS: 60, LagP99: lagMS}
}

func TestOpenKnee(t *testing.T) {
	tests := []struct {
		name      string
		points    []Point
		wantStage string // "" = not found
		wantText  string
	}{
		{"a few drops are no knee", []Point{openPoint(10, 10, 0, 1), openPoint(20, 19.8, 12, 1), openPoint(40, 39, 60, 1)}, "", "kept up"},
		{"drops beyond the share", []Point{openPoint(10, 10, 0, 1), openPoint(20, 19.8, 12, 1), openPoint(40, 36, 240, 1)}, "r20",
			"throughput knee at 20 req/s: at 40 req/s achieved 36 req/s of 40 offered (90%): 240 iterations dropped with every VU busy"},
		{"lag from the first level", []Point{openPoint(1000, 990, 0, 40), openPoint(2000, 1900, 0, 90), openPoint(4000, 3000, 0, 400)}, "r1000",
			"the offered rate not delivered from the first level: at 1000 req/s achieved 990 req/s of 1000 offered (99%): llmload fell behind its schedule (schedule lag p99 40 ms)"},
		{"short without drops or lag", []Point{openPoint(10, 10, 0, 1), openPoint(20, 20, 0, 1), openPoint(40, 30, 0, 1)}, "r20",
			"at 40 req/s achieved 30 req/s of 40 offered (75%): fewer iterations started than the arrival schedule offered"},
		{"a low rate's Poisson shortfall", []Point{openPoint(0.5, 0.5, 0, 1), openPoint(1, 0.8, 0, 1), openPoint(2, 2.1, 0, 1)}, "", "kept up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Knee(Sweep{Scenario: "s", LoadUnit: UnitReqRate, Points: tt.points})
			if got, want := f.Stage, tt.wantStage; got != want {
				t.Fatalf("Stage = %q, want %q (%s)", got, want, f.Text)
			}
			if got, want := f.Found, tt.wantStage != ""; got != want {
				t.Errorf("Found = %v, want %v", got, want)
			}
			if !strings.Contains(f.Text, tt.wantText) {
				t.Errorf("Text = %q, want it to contain %q", f.Text, tt.wantText)
			}
			if got, want := f.Rule, OpenKneeRule; got != want {
				t.Errorf("Rule = %q, want the open-model rule", got)
			}
		})
	}
}
