package analysis

import (
	"testing"

	"github.com/llmload/llmload/engine/metrics"
)

// TestConfirmed: a tag value's break read from a thin percentile counts
// only when it survives the two levels' confidence intervals.
func TestConfirmed(t *testing.T) {
	p99 := latencies[0].p99()
	point := func(stage string, load, v, lo, hi float64, thin bool) Point {
		p := Point{Stage: stage, Load: load, TTFTP99: v, CI: map[string]metrics.Interval{"ttft_p99": {lo, hi}}}
		if thin {
			p.Unreliable = []string{"ttft_p99"}
		}
		return p
	}
	tests := []struct {
		name          string
		before, at    Point
		wantConfirmed bool
	}{
		{"reliable at both levels", point("c4", 4, 20, 19, 21, false), point("c8", 8, 90, 30, 95, false), true},
		// testdata/r4.json: short prompts' p99 17.2 → 92.5 ms on 2 and 6
		// samples; the later interval reaches down to 18 ms.
		{"one slow request", point("c4", 4, 17.2, 17.1, 17.2, true), point("c8", 8, 92.5, 18.1, 92.5, true), false},
		// The llama.cpp sweep: short prompts 16 ms → 1.16 s on 7 and 10
		// samples; the interval's low end is still 697 ms.
		{"waiting behind long prefills", point("c1", 1, 16, 15.7, 16, true), point("c4", 4, 1158, 697, 1158, true), true},
		{"thin and no interval", Point{Stage: "c4", Load: 4, TTFTP99: 20, Unreliable: []string{"ttft_p99"}},
			point("c8", 8, 900, 800, 950, false), false},
	}
	for _, tt := range tests {
		b := breakAt{pc: p99, at: tt.at, before: tt.before, growth: tt.at.TTFTP99 / tt.before.TTFTP99}
		if got := confirmed(b); got != tt.wantConfirmed {
			t.Errorf("%s: confirmed = %v, want %v", tt.name, got, tt.wantConfirmed)
		}
	}
}
