package result

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

func TestWarnings(t *testing.T) {
	open := func(target, achieved, secs float64, dropped int64, lagP99 float64) metrics.StageSummary {
		return metrics.StageSummary{Scenario: "s", Stage: "r", TargetRate: target, AchievedRate: achieved,
			DurationS: secs, DroppedIterations: dropped, ScheduleLag: metrics.Dist{Count: 10, P99: lagP99}}
	}
	tests := []struct {
		name  string
		stage metrics.StageSummary
		want  []string
	}{
		{"closed model", metrics.StageSummary{Stage: "c1", VUs: 4, ScheduleLag: metrics.Dist{Count: 1, P99: 50}}, nil},
		{"on schedule", open(100, 99.5, 60, 0, 0.4), nil},
		{"Poisson noise at low counts", open(1, 0.7, 10, 0, 0.4), nil},
		{"late starts", open(100, 100, 60, 0, 12), []string{"fell behind its schedule", "12.0 ms"}},
		{"dropped", open(100, 90, 60, 600, 0.4), []string{"600 iterations dropped", "achieved 90.00 iterations/s of the 100.00/s target (90%)"}},
		{"healthy client", metrics.StageSummary{Stage: "c1", VUs: 4, Client: &engine.ClientCheck{CPUPercent: 30, Cores: 2}}, nil},
		{"client-bound, closed model", metrics.StageSummary{Scenario: "s", Stage: "c64", VUs: 64,
			Client: &engine.ClientCheck{CPUPercent: 199, Cores: 2, Bound: true, Reasons: []string{"CPU at 199% of 2 cores", "GC pauses p99 3.00 ms"}}},
			[]string{"s/c64: llmload itself was the bottleneck (CPU at 199% of 2 cores; GC pauses p99 3.00 ms)", "several llmload processes"}},
		{"machine-busy, llmload at 7% CPU", metrics.StageSummary{Scenario: "s", Stage: "c8", VUs: 8,
			Client: &engine.ClientCheck{CPUPercent: 7, Cores: 2, MachineBusy: true, MachineReasons: []string{"the machine's CPU was over 90% busy in 6 of 10 samples"}}},
			[]string{"s/c8: the machine running llmload was busy with other processes (the machine's CPU was over 90% busy in 6 of 10 samples)", "rerun on a quiet machine"}},
		{"slipped window", metrics.StageSummary{Scenario: "s", Stage: "c1", VUs: 1, Complete: true, PlannedS: 20, DurationS: 23},
			[]string{"s/c1: the window was 23.0 s, planned 20 s (+15%)"}},
		{"load changed late", metrics.StageSummary{Scenario: "s", Stage: "c1", VUs: 1, Complete: true, PlannedS: 20, DurationS: 20, LateS: 3},
			[]string{"s/c1: the stage controller changed the load 3.0 s late at a boundary of the planned 20 s window (15% of it)"}},
		{"window on plan", metrics.StageSummary{Scenario: "s", Stage: "c1", VUs: 1, Complete: true, PlannedS: 20, DurationS: 20.1}, nil},
		{"cut window is no slip", metrics.StageSummary{Scenario: "s", Stage: "c1", VUs: 1, PlannedS: 20, DurationS: 3}, nil},
		{"one dropped iteration", open(100, 99.9, 60, 1, 0.4), []string{"s/r: 1 iteration dropped"}},
		{"client-bound without reasons", metrics.StageSummary{Scenario: "s", Stage: "x", Client: &engine.ClientCheck{Bound: true}},
			[]string{"s/x: llmload itself was the bottleneck (its self-check flagged the stage)"}},
	}
	for _, tt := range tests {
		got := strings.Join(warnings([]metrics.StageSummary{tt.stage}), "\n")
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: unexpected warnings:\n%s", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warnings lack %q:\n%s", tt.name, w, got)
			}
		}
	}
}

// A sweep on a busy machine flags every stage: one warning names them all,
// each with its figures, and gives the advice once.
func TestWarningsGroupStagesOfOneCause(t *testing.T) {
	busy := func(stage string, cpu, own float64) metrics.StageSummary {
		return metrics.StageSummary{Scenario: "sweep", Stage: stage, Client: &engine.ClientCheck{MachineBusy: true, MachineMeasured: true,
			MachineCPUPercent: cpu, OwnSharePercent: own, RunQueue: 3.2, MachineReasons: []string{"long reason"}}}
	}
	bound := metrics.StageSummary{Scenario: "sweep", Stage: "c16", Client: &engine.ClientCheck{Bound: true, Reasons: []string{"CPU at 190% of 2 cores"}}}
	// Beside a local server, each stage's figures split the machine's CPU.
	besideServer := busy("c8", 99, 6)
	besideServer.Client.Server = &engine.ServerCPU{MachinePercent: 97, OwnPercent: 6, ServerPercent: 30, OtherPercent: 61}
	got := warnings([]metrics.StageSummary{busy("c1", 100, 1), busy("c4", 98, 3), besideServer, bound})
	want := []string{
		"sweep/c16: llmload itself was the bottleneck (CPU at 190% of 2 cores): its latencies",
		"sweep/c1, sweep/c4, sweep/c8: the machine running llmload was busy with other processes (sweep/c1: machine CPU 100% busy, " +
			"llmload 1% of it, run queue 3.2; sweep/c4: machine CPU 98% busy, llmload 3% of it, run queue 3.2; " +
			"sweep/c8: machine CPU 99% busy (mean 97%: llmload 6%, the local server 30%, other processes 61%), run queue 3.2): their latencies",
	}
	if len(got) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("warning %d = %q, want it to start %q", i, got[i], w)
		}
	}
}

func TestConnectWarning(t *testing.T) {
	dist := func(p50, p99 float64) metrics.Dist { return metrics.Dist{Count: 100, P50: p50, P99: p99} }
	for _, tt := range []struct {
		name    string
		connect metrics.Dist
		want    string // "" for no warning
	}{
		{"none measured", metrics.Dist{}, ""},
		{"reused connections", dist(0.05, 40), ""},
		{"cold connections over a WAN", dist(0.2, 350), ""},
		{"no reuse", dist(180, 420), "most requests opened a connection of their own"},
		{"dropped SYNs", dist(0.3, 1030), "accept queue overflowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := connectWarning("s/c1", &metrics.StageSummary{Connect: tt.connect})
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("warning %q, want one containing %q", got, tt.want)
			}
			if got != "" && !strings.HasPrefix(got, "s/c1: requests waited ") {
				t.Errorf("warning %q does not name the stage first", got)
			}
		})
	}
}

// TestBufferedWarning: streams that arrive in one piece, long answers
// with TTFT ≈ E2E and no gaps between their events, are flagged as a
// buffering proxy; a streamed server, short answers or too few requests
// are not.
func TestBufferedWarning(t *testing.T) {
	stage := func(ok, tokens int64, ttft, e2e, itl, tpot float64) *metrics.StageSummary {
		return &metrics.StageSummary{OK: ok, OutputTokens: tokens,
			TTFT: metrics.Dist{Count: ok, P50: ttft}, E2E: metrics.Dist{Count: ok, P50: e2e},
			ITL: metrics.Dist{Count: ok * 10, P50: itl}, TPOT: metrics.Dist{Count: ok, P50: tpot}}
	}
	for _, tt := range []struct {
		name string
		s    *metrics.StageSummary
		want string // "" for no warning
	}{
		{"buffered whole", stage(50, 50*64, 1290, 1300, 0.01, 0.2), "TTFT ≈ E2E"},
		{"buffered a buffer at a time", stage(50, 50*32, 131, 206, 0.02, 2.4), "arrived in bursts"},
		{"streamed", stage(50, 50*64, 200, 1300, 17, 17), ""},
		{"one-token answers", stage(50, 50*2, 300, 301, 0, 0), ""},
		{"too few requests", stage(3, 3*64, 1290, 1300, 0, 0), ""},
		{"a simulator without delays", stage(50, 50*64, 0.4, 0.5, 0, 0), ""},
		{"late first token, then a stream", stage(50, 50*64, 1250, 1300, 0.8, 0.8), ""},
		{"not streamed", &metrics.StageSummary{OK: 50, OutputTokens: 3200, E2E: metrics.Dist{Count: 50, P50: 1300}}, ""},
	} {
		got := bufferedWarning("s/c1", tt.s)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: warning %q, want %q", tt.name, got, tt.want)
		}
		if tt.want != "" && (!strings.HasPrefix(got, "s/c1: ") || !strings.Contains(got, "proxy_buffering off")) {
			t.Errorf("%s: warning %q should name the stage and buffering", tt.name, got)
		}
	}
}
