package luabind

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	lua "github.com/yuin/gopher-lua"
)

const (
	// ShorthandScenario names the one scenario options.vus/duration or options.stages describe.
	ShorthandScenario = "default"
	// ShorthandExec is the global function the shorthand scenario's iterations call.
	ShorthandExec = "iteration"
)

var (
	optionKeys   = []string{"target", "warmup", "seed", "scenarios", "stages", "vus", "duration"}
	reservedKeys = []string{"thresholds", "dirty", "slo"}
	targetKeys   = []string{"base_url", "api_key", "model", "connect_timeout", "ttft_timeout", "idle_timeout", "timeout"}
	warmupKeys   = []string{"requests", "duration"}
	scenarioKeys = []string{"executor", "exec", "vus", "duration", "stages", "start_vus",
		"graceful_stop", "graceful_ramp_down", "tags"}
	stageKeys = []string{"name", "target", "duration", "ramp"}
	executors = []string{engine.ExecutorConstantVUs, engine.ExecutorRampingVUs}
)

// decodedOptions is the plan an options table describes, with what the
// caller needs to finish it.
type decodedOptions struct {
	plan      engine.Plan // Script and, unless seedSet, Seed left unset
	seedSet   bool        // the script chose a nonzero options.seed
	shorthand bool        // the scenario came from options.vus/duration or options.stages
}

// decodeOptions turns the script's global options table into a plan.
func (d *decoder) decodeOptions(v lua.LValue) decodedOptions {
	var out decodedOptions
	if v == lua.LNil {
		d.errorf("options", "not defined (set options.scenarios, or options.vus and options.duration "+
			"with a global function %s(vu))", ShorthandExec)
		return out
	}
	f := d.record("options", v, append(append([]string(nil), optionKeys...), reservedKeys...))
	if f == nil {
		return out
	}
	for _, k := range reservedKeys {
		if f[k] != nil {
			d.errorf(child("options", k), "not supported yet")
		}
	}
	if t := f["target"]; t != nil {
		out.plan.Target = d.target("options.target", t)
	}
	if w := f["warmup"]; w != nil {
		out.plan.Warmup = d.warmup("options.warmup", w)
	}
	if s := f["seed"]; s != nil {
		// 0 asks for a derived seed, as Options.Seed 0 does.
		out.plan.Seed, _ = d.integer("options.seed", s)
		out.seedSet = out.plan.Seed != 0
	}
	out.shorthand = f["scenarios"] == nil
	out.plan.Scenarios = d.scenarios(f)
	return out
}

func (d *decoder) target(path string, v lua.LValue) engine.Target {
	f := d.record(path, v, targetKeys)
	var t engine.Target
	strs := []struct {
		key string
		dst *string
	}{{"base_url", &t.BaseURL}, {"api_key", &t.APIKey}, {"model", &t.Model}}
	for _, sf := range strs {
		if v := f[sf.key]; v != nil {
			*sf.dst = d.str(child(path, sf.key), v)
		}
	}
	durs := []struct {
		key string
		dst *time.Duration
	}{{"connect_timeout", &t.ConnectTimeout}, {"ttft_timeout", &t.TTFTTimeout},
		{"idle_timeout", &t.IdleTimeout}, {"timeout", &t.TotalTimeout}}
	for _, df := range durs {
		if v := f[df.key]; v != nil {
			*df.dst = d.positiveDuration(child(path, df.key), v)
		}
	}
	return t
}

func (d *decoder) warmup(path string, v lua.LValue) engine.Warmup {
	f := d.record(path, v, warmupKeys)
	var w engine.Warmup
	if f["requests"] != nil && f["duration"] != nil {
		d.errorf(path, "set requests or duration, not both")
	}
	if r := f["requests"]; r != nil {
		w.Requests = d.count(child(path, "requests"), r, 0)
	}
	if du := f["duration"]; du != nil {
		w.Duration = d.positiveDuration(child(path, "duration"), du)
	}
	return w
}

// scenarios reads options.scenarios, sorted by name because Lua tables
// have no order, or the single scenario of a shorthand.
func (d *decoder) scenarios(f map[string]lua.LValue) []engine.Scenario {
	short := presentKeys(f, "stages", "vus", "duration")
	if f["scenarios"] != nil {
		for _, k := range short {
			d.errorf(child("options", k), "cannot be combined with options.scenarios "+
				"(move it into a scenario)")
		}
		return d.namedScenarios("options.scenarios", f["scenarios"])
	}
	if len(short) == 0 {
		d.errorf("options", "no scenarios (set options.scenarios, or options.vus and options.duration, "+
			"or options.stages, with a global function %s(vu))", ShorthandExec)
		return nil
	}
	sc := d.newScenario(ShorthandScenario, ShorthandExec)
	if f["stages"] != nil {
		for _, k := range presentKeys(f, "vus", "duration") {
			d.errorf(child("options", k), "cannot be combined with options.stages")
		}
		sc.Executor = engine.ExecutorRampingVUs
		sc.Stages = d.stages("options.stages", f["stages"])
		return []engine.Scenario{sc}
	}
	sc.Executor = engine.ExecutorConstantVUs
	sc.Stages = d.constantStage("options", sc.Name, f)
	return []engine.Scenario{sc}
}

func (d *decoder) namedScenarios(path string, v lua.LValue) []engine.Scenario {
	tbl, ok := v.(*lua.LTable)
	if !ok {
		d.errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	var out []engine.Scenario
	for _, k := range sortedKeys(tbl) {
		name, isStr := k.(lua.LString)
		if !isStr || name == "" {
			d.errorf(keyPath(path, k), "scenario names must be non-empty strings")
			continue
		}
		out = append(out, d.scenario(child(path, string(name)), string(name), tbl.RawGet(k)))
	}
	if len(out) == 0 && len(d.errs) == 0 {
		d.errorf(path, "no scenarios defined")
	}
	return out
}

func (d *decoder) newScenario(name, exec string) engine.Scenario {
	return engine.Scenario{Name: name, Exec: exec,
		GracefulStop: engine.DefaultGracefulStop, GracefulRampDown: engine.DefaultGracefulStop}
}

func (d *decoder) scenario(path, name string, v lua.LValue) engine.Scenario {
	sc := d.newScenario(name, "")
	f := d.record(path, v, scenarioKeys)
	if f == nil {
		return sc
	}
	sc.Exec = d.required(path, f, "exec")
	sc.Executor = d.required(path, f, "executor")
	switch sc.Executor {
	case engine.ExecutorConstantVUs:
		d.notFor(path, f, sc.Executor, "use ramping-vus for stages", "stages", "start_vus", "graceful_ramp_down")
		sc.Stages = d.constantStage(path, name, f)
	case engine.ExecutorRampingVUs:
		d.notFor(path, f, sc.Executor, "give each stage a target and a duration", "vus", "duration")
		sc.Stages = d.rampingStages(path, f)
		if s := f["start_vus"]; s != nil {
			sc.StartVUs = d.count(child(path, "start_vus"), s, 0)
		}
	case "":
	default:
		d.errorf(child(path, "executor"), "unknown executor %q (valid: %s)", sc.Executor, strings.Join(executors, ", "))
	}
	d.scenarioExtras(path, f, &sc)
	return sc
}

func (d *decoder) scenarioExtras(path string, f map[string]lua.LValue, sc *engine.Scenario) {
	if g := f["graceful_stop"]; g != nil {
		sc.GracefulStop, _ = d.duration(child(path, "graceful_stop"), g)
	}
	if g := f["graceful_ramp_down"]; g != nil {
		sc.GracefulRampDown, _ = d.duration(child(path, "graceful_ramp_down"), g)
	}
	if t := f["tags"]; t != nil {
		sc.Tags = d.stringMap(child(path, "tags"), t)
	}
}

// required reads a non-empty string field that must be present.
func (d *decoder) required(path string, f map[string]lua.LValue, key string) string {
	v := f[key]
	if v == nil {
		d.errorf(child(path, key), "required")
		return ""
	}
	s := d.str(child(path, key), v)
	if s == "" {
		d.errorf(child(path, key), "must not be empty")
	}
	return s
}

// notFor reports keys that the executor does not use, which would
// otherwise be silently ignored.
func (d *decoder) notFor(path string, f map[string]lua.LValue, executor, hint string, keys ...string) {
	for _, k := range presentKeys(f, keys...) {
		d.errorf(child(path, k), "not valid for executor %s (%s)", executor, hint)
	}
}

// constantStage is the one stage of a constant-vus scenario, named after it.
func (d *decoder) constantStage(path, name string, f map[string]lua.LValue) []engine.Stage {
	st := engine.Stage{Name: name}
	if v := f["vus"]; v != nil {
		st.Target = d.count(child(path, "vus"), v, 1)
	} else {
		d.errorf(child(path, "vus"), "required")
	}
	if v := f["duration"]; v != nil {
		st.Duration = d.positiveDuration(child(path, "duration"), v)
	} else {
		d.errorf(child(path, "duration"), "required")
	}
	return []engine.Stage{st}
}

func (d *decoder) rampingStages(path string, f map[string]lua.LValue) []engine.Stage {
	if f["stages"] == nil {
		d.errorf(child(path, "stages"), "required")
		return nil
	}
	return d.stages(child(path, "stages"), f["stages"])
}

func (d *decoder) stages(path string, v lua.LValue) []engine.Stage {
	items := d.list(path, v)
	if items != nil && len(items) == 0 {
		d.errorf(path, "needs at least one stage")
	}
	out := make([]engine.Stage, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		st := d.stage(index(path, i+1), i+1, item)
		if seen[st.Name] {
			d.errorf(index(path, i+1)+".name", "stage name %q is used twice", st.Name)
		}
		seen[st.Name] = true
		out = append(out, st)
	}
	return out
}

func (d *decoder) stage(path string, pos int, v lua.LValue) engine.Stage {
	st := engine.Stage{Name: fmt.Sprintf("stage_%d", pos)}
	f := d.record(path, v, stageKeys)
	if f == nil {
		return st
	}
	if n := f["name"]; n != nil {
		if st.Name = d.str(child(path, "name"), n); st.Name == "" {
			d.errorf(child(path, "name"), "must not be empty")
		}
	}
	if r := f["ramp"]; r != nil {
		st.Ramp, _ = d.duration(child(path, "ramp"), r)
	}
	st.Target = d.stageTarget(child(path, "target"), f["target"], st.Ramp > 0)
	if du := f["duration"]; du != nil {
		st.Duration = d.positiveDuration(child(path, "duration"), du)
	} else {
		d.errorf(child(path, "duration"), "required")
	}
	if st.Duration > 0 && st.Ramp > st.Duration {
		d.errorf(child(path, "ramp"), "%s is longer than the stage's duration %s", st.Ramp, st.Duration)
	}
	return st
}

// stageTarget allows 0 VUs only when ramping down to it: a stage that holds
// 0 VUs measures nothing.
func (d *decoder) stageTarget(path string, v lua.LValue, ramped bool) int {
	if v == nil {
		d.errorf(path, "required")
		return 0
	}
	n, ok := d.integer(path, v)
	switch {
	case !ok:
	case n < 0:
		d.errorf(path, "must be ≥ 0, got %d", n)
	case n == 0 && !ramped:
		d.errorf(path, "must be ≥ 1, got 0 (0 is allowed only with a ramp, to ramp down)")
	case n > 1<<31-1:
		d.errorf(path, "must be ≤ %d, got %d", 1<<31-1, n)
	default:
		return int(n)
	}
	return 0
}

// presentKeys returns which of keys f holds, in the order given.
func presentKeys(f map[string]lua.LValue, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if f[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// checkExecs reports scenarios whose exec names no global function of the
// script; funcs lists the script's global functions after init.
func (d *decoder) checkExecs(scs []engine.Scenario, shorthand bool, funcs []string) {
	for _, sc := range scs {
		if sc.Exec == "" || contains(funcs, sc.Exec) {
			continue
		}
		if shorthand {
			d.errorf("options", "the shorthand calls a global function %s(vu), which the script does not define", sc.Exec)
			continue
		}
		msg := fmt.Sprintf("no global function %q in the script", sc.Exec)
		if best, ok := nearest(sc.Exec, funcs); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		d.errorf(child(child("options.scenarios", sc.Name), "exec"), "%s", msg)
	}
}
