package lint

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestStartBursts(t *testing.T) {
	stage := func(name string, target int, d, ramp time.Duration) plan.Stage {
		return plan.Stage{Name: name, Target: target, Duration: d, Ramp: ramp}
	}
	ramping := func(start int, stages ...plan.Stage) plan.Scenario {
		return plan.Scenario{Name: "s", Executor: plan.ExecutorRampingVUs, Exec: "f", StartVUs: start, Stages: stages}
	}
	tests := []struct {
		name string
		sc   plan.Scenario
		want map[string]int // stage → VUs named in the lint
	}{
		{"constant, a thousands of VUs", plan.Scenario{Name: "s", Executor: plan.ExecutorConstantVUs, Exec: "f",
			Stages: []plan.Stage{stage("s", 2000, time.Minute, 0)}}, map[string]int{"s": 2000}},
		{"constant, hundreds", plan.Scenario{Name: "s", Executor: plan.ExecutorConstantVUs, Exec: "f",
			Stages: []plan.Stage{stage("s", 500, time.Minute, 0)}}, nil},
		{"ramped over 10s", ramping(0, stage("up", 10000, time.Minute, 10*time.Second)), nil},
		{"ramped over 5s", ramping(0, stage("up", 10000, time.Minute, 5*time.Second)), map[string]int{"up": 2000}},
		{"at once", ramping(0, stage("up", 10000, time.Minute, 0)), map[string]int{"up": 10000}},
		{"start VUs", ramping(3000, stage("hold", 3000, time.Minute, 0)), map[string]int{"hold": 3000}},
		{"a later step", ramping(0, stage("a", 100, time.Minute, 10*time.Second), stage("b", 3000, time.Minute, 0),
			stage("c", 0, time.Minute, time.Second)), map[string]int{"b": 2900}},
		{"per-VU iterations", plan.Scenario{Name: "s", Executor: plan.ExecutorPerVUIterations, Exec: "f", VUs: 5000, Iterations: 2,
			Stages: []plan.Stage{{Name: "s", Duration: time.Minute}}}, map[string]int{"s": 5000}},
		{"shared iterations fewer than VUs", plan.Scenario{Name: "s", Executor: plan.ExecutorSharedIterations, Exec: "f", VUs: 5000, Iterations: 100,
			Stages: []plan.Stage{{Name: "s", Duration: time.Minute}}}, nil},
		{"open model", plan.Scenario{Name: "s", Executor: plan.ExecutorConstantArrivalRate, Exec: "f", MaxVUsCap: 20000,
			Stages: []plan.Stage{{Name: "s", Rate: 5000, Duration: time.Minute}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]int{}
			for _, l := range startBursts(plan.Plan{Scenarios: []plan.Scenario{tt.sc}}) {
				if l.ID != StartBurst || l.Severity != Warning || l.Fix == "" {
					t.Errorf("lint %+v", l)
				}
				got[l.Stage] = stageStarts(tt.sc)[stageIndex(tt.sc, l.Stage)]
			}
			if len(got) != len(tt.want) {
				t.Fatalf("flagged %v, want %v", got, tt.want)
			}
			for st, n := range tt.want {
				if got[st] != n {
					t.Errorf("stage %s: %d VUs, want %d", st, got[st], n)
				}
			}
		})
	}
}

func stageIndex(sc plan.Scenario, name string) int {
	for i, st := range sc.Stages {
		if st.Name == name {
			return i
		}
	}
	return -1
}
