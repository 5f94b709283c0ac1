package luabind

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var (
	// commonScenarioKeys apply to every executor.
	commonScenarioKeys = []string{"executor", "exec", "tags", "env", "start_time", "graceful_stop", "target"}
	// executorKeys are the keys each executor adds to the common ones.
	executorKeys = map[string][]string{
		plan.ExecutorConstantVUs: {"vus", "duration"},
		plan.ExecutorRampingVUs:  {"stages", "start_vus", "graceful_ramp_down"},
		plan.ExecutorConstantArrivalRate: {"rate", "time_unit", "duration",
			"pre_allocated_vus", "max_vus", "arrival", "burstiness"},
		plan.ExecutorRampingArrivalRate: {"start_rate", "time_unit", "stages",
			"pre_allocated_vus", "max_vus", "arrival", "burstiness"},
		plan.ExecutorSharedIterations: {"vus", "iterations", "max_duration"},
		plan.ExecutorPerVUIterations:  {"vus", "iterations", "max_duration"},
		plan.ExecutorTrace: {"trace", "speedup", "time_offset", "limit", "sessions", "warm_turns",
			"pre_allocated_vus", "max_vus"},
		plan.ExecutorCapacity: {"load", "start", "max", "growth", "precision", "warmup", "window",
			"max_window", "good_share", "conditions", "min_samples", "idle_timeout", "pre_allocated_vus", "max_vus",
			"arrival", "burstiness"},
	}
	// executors lists the executor names in the order the docs give them.
	executors = []string{plan.ExecutorConstantVUs, plan.ExecutorRampingVUs,
		plan.ExecutorConstantArrivalRate, plan.ExecutorRampingArrivalRate,
		plan.ExecutorSharedIterations, plan.ExecutorPerVUIterations, plan.ExecutorTrace,
		plan.ExecutorCapacity}
	scenarioKeys = allScenarioKeys()
	stageKeys    = []string{"name", "target", "duration", "ramp"}
	arrivals     = []string{plan.ArrivalPoisson, plan.ArrivalConstant, plan.ArrivalGamma}
)

// executorDecoders read the keys specific to each executor.
var executorDecoders = map[string]func(*decoder, string, map[string]lua.LValue, *plan.Scenario){
	plan.ExecutorConstantVUs:         (*decoder).constantVUs,
	plan.ExecutorRampingVUs:          (*decoder).rampingVUs,
	plan.ExecutorConstantArrivalRate: (*decoder).constantArrivalRate,
	plan.ExecutorRampingArrivalRate:  (*decoder).rampingArrivalRate,
	plan.ExecutorSharedIterations:    (*decoder).iterationCount,
	plan.ExecutorPerVUIterations:     (*decoder).iterationCount,
	plan.ExecutorTrace:               (*decoder).trace,
	plan.ExecutorCapacity:            (*decoder).capacity,
}

func allScenarioKeys() []string {
	keys := append([]string(nil), commonScenarioKeys...)
	for _, ex := range executors {
		for _, k := range executorKeys[ex] {
			if !luaval.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func (d *decoder) namedScenarios(path string, v lua.LValue) []plan.Scenario {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	var out []plan.Scenario
	for _, k := range luaval.SortedKeys(tbl) {
		name, isStr := k.(lua.LString)
		if !isStr || name == "" {
			d.Errorf(luaval.KeyPath(path, k), "scenario names must be non-empty strings")
			continue
		}
		out = append(out, d.scenario(luaval.Child(path, string(name)), string(name), tbl.RawGet(k)))
	}
	if len(out) == 0 && len(d.Errs) == 0 {
		d.Errorf(path, "no scenarios defined")
	}
	d.checkStartTimes(path, out)
	d.checkRates(path, out)
	return out
}

func (d *decoder) newScenario(name, exec string) plan.Scenario {
	return plan.Scenario{Name: name, Exec: exec,
		GracefulStop: plan.DefaultGracefulStop, GracefulRampDown: plan.DefaultGracefulStop}
}

func (d *decoder) scenario(path, name string, v lua.LValue) plan.Scenario {
	sc := d.newScenario(name, "")
	f := d.Record(path, v, scenarioKeys)
	if f == nil {
		return sc
	}
	sc.Exec = d.required(path, f, "exec")
	sc.Executor = d.required(path, f, "executor")
	if decode, ok := executorDecoders[sc.Executor]; ok {
		d.notFor(path, f, sc.Executor)
		decode(d, path, f, &sc)
	} else if sc.Executor != "" {
		d.Errorf(luaval.Child(path, "executor"), "unknown executor %q (valid: %s)", sc.Executor, strings.Join(executors, ", "))
	}
	d.scenarioExtras(path, f, &sc)
	return sc
}

func (d *decoder) scenarioExtras(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	if g := f["graceful_stop"]; g != nil {
		sc.GracefulStop, _ = d.Duration(luaval.Child(path, "graceful_stop"), g)
	}
	if g := f["graceful_ramp_down"]; g != nil {
		sc.GracefulRampDown, _ = d.Duration(luaval.Child(path, "graceful_ramp_down"), g)
	}
	if s := f["start_time"]; s != nil {
		sc.StartTime, _ = d.Duration(luaval.Child(path, "start_time"), s)
	}
	if t := f["tags"]; t != nil {
		sc.Tags = d.StringMap(luaval.Child(path, "tags"), t)
	}
	if e := f["env"]; e != nil {
		sc.Env = d.StringMap(luaval.Child(path, "env"), e)
	}
	if t := f["target"]; t != nil {
		sc.Target = d.Str(luaval.Child(path, "target"), t)
	}
}

// notFor reports keys that the executor does not use, which would
// otherwise be silently ignored, naming the executors that do use them.
func (d *decoder) notFor(path string, f map[string]lua.LValue, executor string) {
	valid := append(append([]string(nil), commonScenarioKeys...), executorKeys[executor]...)
	for _, k := range sortedFieldNames(f) {
		if luaval.Contains(valid, k) {
			continue
		}
		var users []string
		for _, ex := range executors {
			if luaval.Contains(executorKeys[ex], k) {
				users = append(users, ex)
			}
		}
		d.Errorf(luaval.Child(path, k), "not valid for executor %s (it applies to %s)", executor, strings.Join(users, ", "))
	}
}

func sortedFieldNames(f map[string]lua.LValue) []string {
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// required reads a non-empty string field that must be present.
func (d *decoder) required(path string, f map[string]lua.LValue, key string) string {
	v := f[key]
	if v == nil {
		d.Errorf(luaval.Child(path, key), "required")
		return ""
	}
	s := d.Str(luaval.Child(path, key), v)
	if s == "" {
		d.Errorf(luaval.Child(path, key), "must not be empty")
	}
	return s
}

// requiredDuration reads a duration > 0 that must be present.
func (d *decoder) requiredDuration(path string, f map[string]lua.LValue, key string) time.Duration {
	if v := f[key]; v != nil {
		return d.PositiveDuration(luaval.Child(path, key), v)
	}
	d.Errorf(luaval.Child(path, key), "required")
	return 0
}

func (d *decoder) constantVUs(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	sc.Stages = d.constantStage(path, sc.Name, f)
}

func (d *decoder) rampingVUs(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	sc.Stages = d.requiredStages(path, f, false)
	if s := f["start_vus"]; s != nil {
		sc.StartVUs = d.Count(luaval.Child(path, "start_vus"), s, 0)
	}
}

// constantStage is the one stage of a constant-vus scenario, named after it.
func (d *decoder) constantStage(path, name string, f map[string]lua.LValue) []plan.Stage {
	st := plan.Stage{Name: name}
	if v := f["vus"]; v != nil {
		st.Target = d.Count(luaval.Child(path, "vus"), v, 1)
	} else {
		d.Errorf(luaval.Child(path, "vus"), "required")
	}
	st.Duration = d.requiredDuration(path, f, "duration")
	return []plan.Stage{st}
}

// constantArrivalRate holds one rate for the scenario's duration, as one
// stage named after the scenario.
func (d *decoder) constantArrivalRate(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	st := plan.Stage{Name: sc.Name}
	if v := f["rate"]; v != nil {
		st.Rate = d.PositiveNumber(luaval.Child(path, "rate"), v)
	} else {
		d.Errorf(luaval.Child(path, "rate"), "required")
	}
	st.Duration = d.requiredDuration(path, f, "duration")
	sc.Stages = []plan.Stage{st}
	d.arrivalRate(path, f, sc)
}

func (d *decoder) rampingArrivalRate(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	if v := f["start_rate"]; v != nil {
		sc.StartRate = d.Number(luaval.Child(path, "start_rate"), v, 0)
	}
	sc.Stages = d.requiredStages(path, f, true)
	d.arrivalRate(path, f, sc)
}

// arrivalRate reads what both arrival-rate executors share: the time
// unit, the VU pool and the arrival process.
func (d *decoder) arrivalRate(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	sc.TimeUnit = plan.DefaultTimeUnit
	if v := f["time_unit"]; v != nil {
		sc.TimeUnit = d.PositiveDuration(luaval.Child(path, "time_unit"), v)
	}
	d.vuPool(path, f, sc, "arrival", 0, 0)
	d.arrival(path, f, sc)
}

// vuPool reads an open model's VUs: pre_allocated_vus, ready before the
// first arrival (required when defPre is 0), and max_vus, the most it
// may grow to (defMax when not given, or pre_allocated_vus when that is 0).
func (d *decoder) vuPool(path string, f map[string]lua.LValue, sc *plan.Scenario, first string, defPre, defMax int) {
	sc.PreAllocatedVUs = defPre
	if v := f["pre_allocated_vus"]; v != nil {
		sc.PreAllocatedVUs = d.Count(luaval.Child(path, "pre_allocated_vus"), v, 1)
	} else if defPre == 0 {
		d.Errorf(luaval.Child(path, "pre_allocated_vus"), "required (the VUs started before the first %s)", first)
	}
	sc.MaxVUsCap = max(defMax, sc.PreAllocatedVUs)
	if v := f["max_vus"]; v != nil {
		sc.MaxVUsCap = d.Count(luaval.Child(path, "max_vus"), v, 1)
		if sc.MaxVUsCap > 0 && sc.PreAllocatedVUs > 0 && sc.MaxVUsCap < sc.PreAllocatedVUs {
			d.Errorf(luaval.Child(path, "max_vus"), "%d is below pre_allocated_vus %d", sc.MaxVUsCap, sc.PreAllocatedVUs)
		}
	}
}

// arrival reads the arrival process; burstiness shapes only gamma, so
// giving it with another process is a mistake, not a no-op.
func (d *decoder) arrival(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	sc.Arrival = plan.ArrivalPoisson
	if v := f["arrival"]; v != nil {
		sc.Arrival = d.Str(luaval.Child(path, "arrival"), v)
		if _, isStr := v.(lua.LString); isStr && !luaval.Contains(arrivals, sc.Arrival) {
			d.Errorf(luaval.Child(path, "arrival"), "unknown arrival %q (valid: %s)", sc.Arrival, strings.Join(arrivals, ", "))
		}
	}
	if sc.Arrival == plan.ArrivalGamma {
		sc.Burstiness = 1
	}
	if v := f["burstiness"]; v != nil {
		b := d.PositiveNumber(luaval.Child(path, "burstiness"), v)
		if sc.Arrival != plan.ArrivalGamma {
			d.Errorf(luaval.Child(path, "burstiness"), "only valid with arrival = %q (got %q)", plan.ArrivalGamma, sc.Arrival)
			return
		}
		sc.Burstiness = b
	}
}

// iterationCount reads shared-iterations and per-vu-iterations: VUs run a
// number of iterations within one stage bounded by max_duration.
func (d *decoder) iterationCount(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	sc.VUs, sc.Iterations = 1, 1
	if v := f["vus"]; v != nil {
		sc.VUs = d.Count(luaval.Child(path, "vus"), v, 1)
	}
	if v := f["iterations"]; v != nil {
		sc.Iterations = d.Count(luaval.Child(path, "iterations"), v, 1)
	}
	if sc.Executor == plan.ExecutorSharedIterations && sc.Iterations > 0 && sc.Iterations < sc.VUs {
		d.Errorf(luaval.Child(path, "iterations"), "%d iterations shared by %d VUs would leave VUs idle (set iterations ≥ vus)",
			sc.Iterations, sc.VUs)
	}
	st := plan.Stage{Name: sc.Name, Target: sc.VUs, Duration: plan.DefaultMaxDuration}
	if v := f["max_duration"]; v != nil {
		st.Duration = d.PositiveDuration(luaval.Child(path, "max_duration"), v)
	}
	sc.Stages = []plan.Stage{st}
}

func (d *decoder) requiredStages(path string, f map[string]lua.LValue, open bool) []plan.Stage {
	if f["stages"] == nil {
		d.Errorf(luaval.Child(path, "stages"), "required")
		return nil
	}
	return d.stages(luaval.Child(path, "stages"), f["stages"], open)
}

// stages reads a list of stages; open-model stages have a rate as their
// target, closed-model ones a number of VUs.
func (d *decoder) stages(path string, v lua.LValue, open bool) []plan.Stage {
	items := d.List(path, v)
	if items != nil && len(items) == 0 {
		d.Errorf(path, "needs at least one stage")
	}
	out := make([]plan.Stage, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		st := d.stage(luaval.Index(path, i+1), i+1, item, open)
		if seen[st.Name] {
			d.Errorf(luaval.Index(path, i+1)+".name", "stage name %q is used twice", st.Name)
		}
		seen[st.Name] = true
		out = append(out, st)
	}
	return out
}

func (d *decoder) stage(path string, pos int, v lua.LValue, open bool) plan.Stage {
	st := plan.Stage{Name: fmt.Sprintf("stage_%d", pos)}
	f := d.Record(path, v, stageKeys)
	if f == nil {
		return st
	}
	if n := f["name"]; n != nil {
		if st.Name = d.Str(luaval.Child(path, "name"), n); st.Name == "" {
			d.Errorf(luaval.Child(path, "name"), "must not be empty")
		}
	}
	if r := f["ramp"]; r != nil {
		st.Ramp, _ = d.Duration(luaval.Child(path, "ramp"), r)
	}
	if open {
		st.Rate = d.stageRate(luaval.Child(path, "target"), f["target"], st.Ramp > 0)
	} else {
		st.Target = d.stageTarget(luaval.Child(path, "target"), f["target"], st.Ramp > 0)
	}
	st.Duration = d.requiredDuration(path, f, "duration")
	if st.Duration > 0 && st.Ramp > st.Duration {
		d.Errorf(luaval.Child(path, "ramp"), "%s is longer than the stage's duration %s", st.Ramp, st.Duration)
	}
	return st
}

// stageTarget allows 0 VUs only when ramping down to it: a stage that holds
// 0 VUs measures nothing.
func (d *decoder) stageTarget(path string, v lua.LValue, ramped bool) int {
	if v == nil {
		d.Errorf(path, "required")
		return 0
	}
	n, ok := d.Integer(path, v)
	switch {
	case !ok:
	case n < 0:
		d.Errorf(path, "must be ≥ 0, got %d", n)
	case n == 0 && !ramped:
		d.Errorf(path, "must be ≥ 1, got 0 (0 is allowed only with a ramp, to ramp down)")
	case n > math.MaxInt32:
		d.Errorf(path, "must be ≤ %d, got %d", math.MaxInt32, n)
	default:
		return int(n)
	}
	return 0
}

// stageRate is stageTarget for arrival rates, which may be fractional.
func (d *decoder) stageRate(path string, v lua.LValue, ramped bool) float64 {
	if v == nil {
		d.Errorf(path, "required")
		return 0
	}
	r := d.Number(path, v, 0)
	if r == 0 && !ramped {
		if _, isNum := v.(lua.LNumber); isNum {
			d.Errorf(path, "must be > 0, got 0 (0 is allowed only with a ramp, to ramp down)")
		}
	}
	return r
}

// checkStartTimes reports a scenario that would start after every other
// scenario has ended: the run is over by then, so it would never run.
func (d *decoder) checkStartTimes(path string, scs []plan.Scenario) {
	if len(scs) < 2 {
		return
	}
	for i, sc := range scs {
		var lastEnd time.Duration
		for j, other := range scs {
			if j != i {
				lastEnd = max(lastEnd, other.StartTime+other.Duration())
			}
		}
		if sc.StartTime > lastEnd {
			d.Errorf(luaval.Child(luaval.Child(path, sc.Name), "start_time"), "starts at %s but every other scenario ends by %s "+
				"(the run would be over; shorten start_time or lengthen another scenario)",
				plan.FormatDuration(sc.StartTime), plan.FormatDuration(lastEnd))
		}
	}
}

// MaxRatePerSecond bounds arrival rates: far beyond what one process can
// start (measured: a few thousand per second on 2 cores), and low enough
// that a typo such as 1e9 is an error instead of a stage that never ends.
const MaxRatePerSecond = 100_000

// checkRates rejects arrival rates no llmload process could deliver.
func (d *decoder) checkRates(path string, scs []plan.Scenario) {
	for _, sc := range scs {
		if !plan.OpenModel(sc.Executor) {
			continue
		}
		rates := []float64{sc.StartRate}
		for _, st := range sc.Stages {
			rates = append(rates, st.Rate)
		}
		for _, r := range rates {
			if ps := sc.RatePerSecond(r); ps > MaxRatePerSecond {
				d.Errorf(luaval.Child(path, sc.Name), "a rate of %.4g iterations/s is beyond the %d/s one llmload process can start; "+
					"split the load across processes", ps, MaxRatePerSecond)
				break
			}
		}
	}
}
