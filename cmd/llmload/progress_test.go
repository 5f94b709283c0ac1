package main

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/plan"
)

func TestScenarioProgress(t *testing.T) {
	tests := map[string]struct {
		s    executor.ScenarioStatus
		want string
	}{
		"arrival rate": {s: executor.ScenarioStatus{Name: "open", Executor: plan.ExecutorConstantArrivalRate, Stage: "r4",
			Stages: 1, Elapsed: 5 * time.Second, Total: time.Minute, Rate: 4, BusyVUs: 3, AllocatedVUs: 8, Dropped: 1},
			want: "open stage r4 (1/1) 5s/1m0s, 4.0/s target, 3 of 8 VUs busy, 1 dropped"},
		"trace": {s: executor.ScenarioStatus{Name: "replay", Executor: plan.ExecutorTrace, Stage: "replay", Stages: 1,
			Elapsed: 5 * time.Second, Total: 7 * time.Second, Rate: 8.7, BusyVUs: 17, AllocatedVUs: 32,
			IterationsDone: 26, IterationsTotal: 60},
			want: "replay trace 5s/7s, 26 of 60 records, 8.7/s mean, 17 of 32 VUs busy, 0 dropped"},
		"trace, every record dispatched": {s: executor.ScenarioStatus{Name: "replay", Executor: plan.ExecutorTrace,
			Stages: 1, Elapsed: 7 * time.Second, Total: 7 * time.Second, BusyVUs: 1, AllocatedVUs: 1,
			IterationsDone: 59, IterationsTotal: 60, Dropped: 2},
			want: "replay trace 7s/7s, 59 of 60 records, 1 of 1 VU busy, 2 dropped"},
		"capacity of rates, window": {s: executor.ScenarioStatus{Name: "search", Executor: plan.ExecutorCapacity,
			Stage: "probe-03.2", Stages: 4, StageIndex: 3, Elapsed: 95 * time.Second, Rate: 12.5, BusyVUs: 9, AllocatedVUs: 16,
			Probe: 3, ProbeLoad: 12.5, ProbePart: executor.ProbeWindow},
			want: "search capacity search 1m35s, probe 3 at 12.5 req/s: window probe-03.2, 9 of 16 VUs busy, 0 dropped"},
		"capacity of VUs, warmup": {s: executor.ScenarioStatus{Name: "search", Executor: plan.ExecutorCapacity,
			Stage: "probe-02 warmup", Stages: 2, StageIndex: 1, Elapsed: 42 * time.Second, ActiveVUs: 8, BusyVUs: 8,
			AllocatedVUs: 8, Probe: 2, ProbeLoad: 8, ProbePart: executor.ProbeWarmup},
			want: "search capacity search 42s, probe 2 at 8 VUs: warmup, 8 VUs"},
		"capacity, drain": {s: executor.ScenarioStatus{Name: "search", Executor: plan.ExecutorCapacity,
			Stage: "probe-01 drain", Elapsed: 61 * time.Second, Rate: 1, BusyVUs: 1, AllocatedVUs: 1,
			Probe: 1, ProbeLoad: 1, ProbePart: executor.ProbeDrain},
			want: "search capacity search 1m1s, probe 1 at 1 req/s: drain, 1 of 1 VU busy, 0 dropped"},
		"capacity before its first probe": {s: executor.ScenarioStatus{Name: "search", Executor: plan.ExecutorCapacity},
			want: "search capacity search 0s"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := scenarioProgress(tt.s); got != tt.want {
				t.Errorf("scenarioProgress =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}
