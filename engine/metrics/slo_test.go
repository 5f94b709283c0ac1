package metrics

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

func TestSLOMet(t *testing.T) {
	slo := plan.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}
	tests := []struct {
		name string
		r    engine.Result
		want bool
	}{
		{"all met", engine.Result{TTFT: 400 * time.Millisecond, TPOT: 40 * time.Millisecond, E2E: 5 * time.Second}, true},
		{"ttft missed", engine.Result{TTFT: 600 * time.Millisecond, TPOT: 40 * time.Millisecond, E2E: 5 * time.Second}, false},
		{"tpot missed", engine.Result{TTFT: 400 * time.Millisecond, TPOT: 60 * time.Millisecond, E2E: 5 * time.Second}, false},
		{"e2e missed", engine.Result{TTFT: 400 * time.Millisecond, E2E: 11 * time.Second}, false},
		{"one token, no tpot", engine.Result{TTFT: 400 * time.Millisecond, E2E: time.Second}, true},
		{"failed", engine.Result{TTFT: time.Millisecond, E2E: time.Millisecond, Err: &engine.Error{Class: engine.ErrTimeoutIdle}}, false},
		{"not streamed", engine.Result{E2E: time.Second}, false},
	}
	for _, tt := range tests {
		if got := sloMet(slo, &tt.r); got != tt.want {
			t.Errorf("%s: sloMet = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !sloMet(plan.SLO{}, &engine.Result{}) || !(plan.SLO{}).IsZero() {
		t.Error("an empty SLO must accept any success")
	}
}
