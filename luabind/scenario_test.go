package luabind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// oneScenario compiles a script whose only scenario s has the given body.
func oneScenario(t *testing.T, body string) (*Script, error) {
	t.Helper()
	path := writeScript(t, "x.lua", script(`{ scenarios = { s = { exec = "chat", `+body+` } } }`))
	return Compile(path, Options{})
}

func TestExecutors(t *testing.T) {
	base := plan.Scenario{Name: "s", Exec: "chat",
		GracefulStop: plan.DefaultGracefulStop, GracefulRampDown: plan.DefaultGracefulStop}
	with := func(f func(*plan.Scenario)) plan.Scenario {
		sc := base
		f(&sc)
		return sc
	}
	tests := []struct {
		name, body string
		want       plan.Scenario
	}{
		{"constant-arrival-rate defaults", `executor = "constant-arrival-rate", rate = 2.5, duration = "1m", pre_allocated_vus = 4`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorConstantArrivalRate
				sc.Stages = []plan.Stage{{Name: "s", Rate: 2.5, Duration: time.Minute}}
				sc.TimeUnit, sc.PreAllocatedVUs, sc.MaxVUsCap, sc.Arrival = time.Second, 4, 4, plan.ArrivalPoisson
			})},
		{"constant-arrival-rate full", `executor = "constant-arrival-rate", rate = 30, time_unit = "1m", duration = "2m",
			pre_allocated_vus = 2, max_vus = 10, arrival = "gamma", burstiness = 0.5, start_time = "10s",
			graceful_stop = "5s", env = { MODEL = "m2" }, tags = { kind = "open" }`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorConstantArrivalRate
				sc.Stages = []plan.Stage{{Name: "s", Rate: 30, Duration: 2 * time.Minute}}
				sc.TimeUnit, sc.PreAllocatedVUs, sc.MaxVUsCap = time.Minute, 2, 10
				sc.Arrival, sc.Burstiness = plan.ArrivalGamma, 0.5
				sc.StartTime, sc.GracefulStop = 10*time.Second, 5*time.Second
				sc.Env, sc.Tags = map[string]string{"MODEL": "m2"}, map[string]string{"kind": "open"}
			})},
		{"gamma default burstiness", `executor = "constant-arrival-rate", rate = 1, duration = "1m", pre_allocated_vus = 1, arrival = "gamma"`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorConstantArrivalRate
				sc.Stages = []plan.Stage{{Name: "s", Rate: 1, Duration: time.Minute}}
				sc.TimeUnit, sc.PreAllocatedVUs, sc.MaxVUsCap = time.Second, 1, 1
				sc.Arrival, sc.Burstiness = plan.ArrivalGamma, 1
			})},
		{"ramping-arrival-rate", `executor = "ramping-arrival-rate", start_rate = 1, pre_allocated_vus = 8, max_vus = 64,
			arrival = "constant", stages = { { name = "r2", target = 2, duration = "1m" },
			{ name = "r10", target = 10.5, duration = "2m", ramp = "30s" }, { target = 0, duration = "10s", ramp = "10s" } }`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorRampingArrivalRate
				sc.StartRate = 1
				sc.Stages = []plan.Stage{{Name: "r2", Rate: 2, Duration: time.Minute},
					{Name: "r10", Rate: 10.5, Duration: 2 * time.Minute, Ramp: 30 * time.Second},
					{Name: "stage_3", Rate: 0, Duration: 10 * time.Second, Ramp: 10 * time.Second}}
				sc.TimeUnit, sc.PreAllocatedVUs, sc.MaxVUsCap, sc.Arrival = time.Second, 8, 64, plan.ArrivalConstant
			})},
		{"shared-iterations defaults", `executor = "shared-iterations"`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorSharedIterations
				sc.VUs, sc.Iterations = 1, 1
				sc.Stages = []plan.Stage{{Name: "s", Target: 1, Duration: plan.DefaultMaxDuration}}
			})},
		{"shared-iterations", `executor = "shared-iterations", vus = 4, iterations = 100, max_duration = "5m"`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorSharedIterations
				sc.VUs, sc.Iterations = 4, 100
				sc.Stages = []plan.Stage{{Name: "s", Target: 4, Duration: 5 * time.Minute}}
			})},
		{"per-vu-iterations", `executor = "per-vu-iterations", vus = 8, iterations = 3`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorPerVUIterations
				sc.VUs, sc.Iterations = 8, 3
				sc.Stages = []plan.Stage{{Name: "s", Target: 8, Duration: plan.DefaultMaxDuration}}
			})},
		{"constant-vus with start_time", `executor = "constant-vus", vus = 2, duration = "1m", start_time = "0s"`,
			with(func(sc *plan.Scenario) {
				sc.Executor = plan.ExecutorConstantVUs
				sc.Stages = []plan.Stage{{Name: "s", Target: 2, Duration: time.Minute}}
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := oneScenario(t, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(s.Plan().Scenarios[0])
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("scenario =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestExecutorErrors(t *testing.T) {
	const car = `executor = "constant-arrival-rate", duration = "1m", pre_allocated_vus = 2, `
	const rar = `executor = "ramping-arrival-rate", pre_allocated_vus = 2, `
	tests := []struct {
		name, body, want string
	}{
		{"rate zero", car + `rate = 0`, "options.scenarios.s.rate: must be > 0, got 0"},
		{"rate negative", car + `rate = -1`, "options.scenarios.s.rate: must be > 0, got -1"},
		{"rate string", car + `rate = "10/s"`, "options.scenarios.s.rate: expected number, got string"},
		{"rate infinite", car + `rate = 1/0`, "options.scenarios.s.rate: must be a finite number, got +Inf"},
		{"rate missing", `executor = "constant-arrival-rate", duration = "1m", pre_allocated_vus = 2`,
			"options.scenarios.s.rate: required"},
		{"duration missing", `executor = "constant-arrival-rate", rate = 1, pre_allocated_vus = 2`,
			"options.scenarios.s.duration: required"},
		{"pre_allocated missing", `executor = "constant-arrival-rate", rate = 1, duration = "1m"`,
			"options.scenarios.s.pre_allocated_vus: required"},
		{"pre_allocated zero", `executor = "constant-arrival-rate", rate = 1, duration = "1m", pre_allocated_vus = 0`,
			"options.scenarios.s.pre_allocated_vus: must be ≥ 1, got 0"},
		{"max_vus below", car + `rate = 1, max_vus = 1`, "options.scenarios.s.max_vus: 1 is below pre_allocated_vus 2"},
		{"unknown arrival", car + `rate = 1, arrival = "uniform"`,
			`options.scenarios.s.arrival: unknown arrival "uniform" (valid: poisson, constant, gamma)`},
		{"burstiness without gamma", car + `rate = 1, burstiness = 2`,
			`options.scenarios.s.burstiness: only valid with arrival = "gamma" (got "poisson")`},
		{"burstiness with constant", car + `rate = 1, arrival = "constant", burstiness = 2`,
			`options.scenarios.s.burstiness: only valid with arrival = "gamma" (got "constant")`},
		{"burstiness zero", car + `rate = 1, arrival = "gamma", burstiness = 0`, "options.scenarios.s.burstiness: must be > 0, got 0"},
		{"time_unit zero", car + `rate = 1, time_unit = "0s"`, "options.scenarios.s.time_unit: must be > 0, got 0s"},
		{"stages without duration", rar + `stages = { { target = 5 } }`, "options.scenarios.s.stages[1].duration: required"},
		{"rate stage zero", rar + `stages = { { target = 0, duration = "1m" } }`,
			"options.scenarios.s.stages[1].target: must be > 0, got 0 (0 is allowed only with a ramp, to ramp down)"},
		{"rate stage negative", rar + `stages = { { target = -1, duration = "1m", ramp = "1s" } }`,
			"options.scenarios.s.stages[1].target: must be ≥ 0, got -1"},
		{"ramping stages missing", rar + `start_rate = 1`, "options.scenarios.s.stages: required"},
		{"start_rate negative", rar + `start_rate = -1, stages = { { target = 1, duration = "1m" } }`,
			"options.scenarios.s.start_rate: must be ≥ 0, got -1"},
		{"vus in arrival rate", car + `rate = 1, vus = 3`,
			"options.scenarios.s.vus: not valid for executor constant-arrival-rate (it applies to constant-vus, shared-iterations, per-vu-iterations)"},
		{"stages in constant arrival", car + `rate = 1, stages = {}`,
			"options.scenarios.s.stages: not valid for executor constant-arrival-rate (it applies to ramping-vus, ramping-arrival-rate)"},
		{"rate in ramping-vus", `executor = "ramping-vus", rate = 1, stages = { { target = 1, duration = "1s" } }`,
			"options.scenarios.s.rate: not valid for executor ramping-vus (it applies to constant-arrival-rate)"},
		{"iterations in constant-vus", `executor = "constant-vus", vus = 1, duration = "1s", iterations = 3`,
			"options.scenarios.s.iterations: not valid for executor constant-vus"},
		{"duration in shared-iterations", `executor = "shared-iterations", duration = "1m"`,
			"options.scenarios.s.duration: not valid for executor shared-iterations (it applies to constant-vus, constant-arrival-rate)"},
		{"iterations zero", `executor = "per-vu-iterations", iterations = 0`, "options.scenarios.s.iterations: must be ≥ 1, got 0"},
		{"iterations below vus", `executor = "shared-iterations", vus = 4, iterations = 2`,
			"options.scenarios.s.iterations: 2 iterations shared by 4 VUs would leave VUs idle"},
		{"max_duration zero", `executor = "shared-iterations", max_duration = "0s"`, "options.scenarios.s.max_duration: must be > 0, got 0s"},
		{"start_time negative", `executor = "constant-vus", vus = 1, duration = "1s", start_time = "-1s"`,
			"options.scenarios.s.start_time: must not be negative, got -1s"},
		{"env value table", `executor = "constant-vus", vus = 1, duration = "1s", env = { A = {} }`,
			"options.scenarios.s.env.A: expected string, got table"},
		{"env not table", `executor = "constant-vus", vus = 1, duration = "1s", env = "A=1"`,
			"options.scenarios.s.env: expected table, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oneScenario(t, tt.body)
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestStartTimes(t *testing.T) {
	const early = `early = { executor = "constant-vus", exec = "chat", vus = 1, duration = "2m", start_time = "1m" }`
	tests := []struct {
		name, scenarios, want string // want "": valid
	}{
		{"single late scenario", `late = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1m", start_time = "1h" }`, ""},
		{"starts when the other ends", early + `, late = { executor = "shared-iterations", exec = "chat", start_time = "3m" }`, ""},
		{"starts after every other", early + `, late = { executor = "shared-iterations", exec = "chat", start_time = "5m" }`,
			"options.scenarios.late.start_time: starts at 5m but every other scenario ends by 3m"},
		{"chained", early + `, mid = { executor = "constant-vus", exec = "chat", vus = 1, duration = "5m", start_time = "2m" },
			late = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1m", start_time = "6m" }`, ""},
		{"max_duration counts", `a = { executor = "per-vu-iterations", exec = "chat", max_duration = "1h" },
			b = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1m", start_time = "30m" }`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(`{ scenarios = { `+tt.scenarios+` } }`))
			_, err := Compile(path, Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Compile: %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("Compile succeeded, want error containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAbsurdRatesAreRejected(t *testing.T) {
	for _, opts := range []string{
		`rate = 1e9, duration = "1s", pre_allocated_vus = 1`,
		`rate = 1, time_unit = "1ns", duration = "1s", pre_allocated_vus = 1`,
	} {
		src := `options = { scenarios = { s = { executor = "constant-arrival-rate", exec = "f", ` + opts + ` } } }
function f() end`
		path := filepath.Join(t.TempDir(), "r.lua")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Compile(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "beyond the 100000/s") {
			t.Errorf("%s: err = %v", opts, err)
		}
	}
}
