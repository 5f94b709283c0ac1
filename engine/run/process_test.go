package run

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/selfcheck"
)

// The drift is judged over the longest stage that holds its load: a ramp
// adds VUs, so its growth is the plan's, not a leak.
func TestSteadiestStage(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	st := func(sc, name string, from, to time.Duration) metrics.StageSummary {
		return metrics.StageSummary{Scenario: sc, Stage: name, Start: t0.Add(from), End: t0.Add(to)}
	}
	p := plan.Plan{Scenarios: []plan.Scenario{
		{Name: "a", Stages: []plan.Stage{{Name: "up", Ramp: 10 * time.Minute}, {Name: "hold"}, {Name: "short"}}},
		{Name: "b", Stages: []plan.Stage{{Name: "other"}}},
	}}
	tests := []struct {
		name   string
		stages []metrics.StageSummary
		want   string
	}{
		{"the longest steady stage", []metrics.StageSummary{st("a", "up", 0, 10*time.Minute), st("a", "hold", 10*time.Minute, 15*time.Minute),
			st("a", "short", 15*time.Minute, 16*time.Minute)}, "a/hold"},
		{"any scenario's", []metrics.StageSummary{st("a", "hold", 0, time.Minute), st("b", "other", 0, 2*time.Minute)}, "b/other"},
		{"only a ramp", []metrics.StageSummary{st("a", "up", 0, 10*time.Minute)}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if s := steadiestStage(tt.stages, p); s != nil {
				got = s.Scenario + "/" + s.Stage
			}
			if got != tt.want {
				t.Errorf("judged over %q, want %q", got, tt.want)
			}
		})
	}
}

// A day's samples are thinned to result.MaxHeldPoints, in MB where the
// process gives bytes, and a growing heap is judged and warned about.
func TestAddHeld(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var held []selfcheck.Resources
	const n = 24 * 3600
	for i := range n {
		held = append(held, selfcheck.Resources{At: t0.Add(time.Duration(i) * time.Second), RSS: 100 << 20,
			HeapLive: int64(20<<20 + i*256), Goroutines: 50, OpenFiles: -1})
	}
	p := &result.Process{}
	addHeld(p, held, t0.Add(-time.Second), t0, t0.Add(n*time.Second))
	if len(p.Held) > result.MaxHeldPoints || len(p.Held) < result.MaxHeldPoints/2 {
		t.Errorf("%d points kept, want at most and about %d", len(p.Held), result.MaxHeldPoints)
	}
	if h := p.Held[0]; h.T != 1 || h.RSSMB != 100 || h.HeapLiveMB != 20 || h.Goroutines != 50 || h.OpenFiles != -1 {
		t.Errorf("first point %+v", h)
	}
	d := p.Drift
	if d == nil || d.OpenFiles != nil || d.RSSMB == nil || d.RSSMB.Growing || d.HeapLiveMB == nil || !d.HeapLiveMB.Growing {
		t.Fatalf("drift %+v: want the heap growing, RSS flat, open files unmeasured", d)
	}
	if w := driftWarning(p); !strings.Contains(w, "llmload's own live heap grew by more than 10%") {
		t.Errorf("warning %q", w)
	}
	p.WithSimulator = true
	if w := driftWarning(p); w != "" {
		t.Errorf("warning %q with the simulator in the process", w)
	}
	p.WithSimulator = false
	p.Drift.HeapLiveMB.Growing = false
	if w := driftWarning(p); w != "" {
		t.Errorf("warning %q on a flat process", w)
	}
	if w := driftWarning(nil); w != "" {
		t.Errorf("warning %q without a process", w)
	}
}
