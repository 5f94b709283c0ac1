package luabind

import (
	"fmt"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/verdict"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

const (
	// ShorthandScenario names the one scenario options.vus/duration or options.stages describe.
	ShorthandScenario = "default"
	// ShorthandExec is the global function the shorthand scenario's iterations call.
	ShorthandExec = "iteration"
)

var (
	optionKeys = []string{"target", "targets", "balance", "warmup", "seed", "scenarios", "stages", "vus", "duration", "thresholds", "slo",
		"dirty", "cost", "lints", "export"}
	// onUnreachableValues are what options.target.on_unreachable may say.
	onUnreachableValues = []string{verdict.OnUnreachableFail, verdict.OnUnreachableWarn}
	warmupKeys          = []string{"requests", "duration"}
	sloKeys             = []string{"ttft", "tpot", "e2e", "task"}
)

// decodedOptions is the plan an options table describes, with what the
// caller needs to finish it.
type decodedOptions struct {
	plan      plan.Plan // Script and, unless seedSet, Seed left unset
	seedSet   bool      // the script chose a nonzero options.seed
	shorthand bool      // the scenario came from options.vus/duration or options.stages
	dirty     api.DirtyConfig
	// onUnreachable is options.target.on_unreachable, "" when not set.
	onUnreachable string
	// traces are the trace scenarios' traces and prompters.
	traces []*api.ScenarioTrace
}

// decoder decodes the options table: the generic Decoder, with the trace
// scenarios decoded so far, for prepareTraces.
type decoder struct {
	luaval.Decoder

	traces []*api.ScenarioTrace
}

// decodeOptions turns the script's global options table into a plan.
// scriptDir, the script's directory, is what a relative
// options.target.tokenizer path is relative to, as for every data file;
// without it, the working directory.
func (d *decoder) decodeOptions(v lua.LValue, scriptDir ...string) decodedOptions {
	var out decodedOptions
	if v == lua.LNil {
		d.Errorf("options", "not defined (set options.scenarios, or options.vus and options.duration "+
			"with a global function %s(vu))", ShorthandExec)
		return out
	}
	f := d.Record("options", v, optionKeys)
	if f == nil {
		return out
	}
	out.plan.Target.Tokenizer = plan.DefaultTokenizer
	if t := f["target"]; t != nil {
		dir := ""
		if len(scriptDir) > 0 {
			dir = scriptDir[0]
		}
		out.plan.Target = d.target("options.target", t, dir)
		out.onUnreachable = d.onUnreachable("options.target.on_unreachable", t)
	}
	if ts := f["targets"]; ts != nil {
		dir := ""
		if len(scriptDir) > 0 {
			dir = scriptDir[0]
		}
		out.plan.Targets = d.targets("options.targets", ts, f["target"], dir)
	}
	if b := f["balance"]; b != nil {
		out.plan.Balance = d.balance("options.balance", b, len(out.plan.Targets))
	}
	if w := f["warmup"]; w != nil {
		out.plan.Warmup = d.warmup("options.warmup", w)
	}
	if s := f["seed"]; s != nil {
		// 0 asks for a derived seed, as Options.Seed 0 does.
		out.plan.Seed, _ = d.Integer("options.seed", s)
		out.seedSet = out.plan.Seed != 0
	}
	out.shorthand = f["scenarios"] == nil
	out.plan.Scenarios = d.scenarios(f)
	if t := f["thresholds"]; t != nil {
		out.plan.Thresholds = d.thresholds("options.thresholds", t)
	}
	if o := f["slo"]; o != nil {
		out.plan.SLO = d.slo("options.slo", o)
	}
	if dc := f["dirty"]; dc != nil {
		out.dirty = d.dirtyOptions("options.dirty", dc)
	}
	if c := f["cost"]; c != nil {
		out.plan.Cost = d.cost("options.cost", c)
	}
	if e := f["export"]; e != nil {
		out.plan.Export = d.export("options.export", e)
	}
	d.checkGoodShare(out.plan)
	d.checkScenarioTargets(out.plan)
	d.prepareTraces(out.plan)
	out.traces = d.traces
	return out
}

// checkGoodShare reports a capacity search judged on good_share without an
// SLO to judge requests against.
func (d *decoder) checkGoodShare(p plan.Plan) {
	for _, sc := range p.Scenarios {
		if sc.Capacity != nil && sc.Capacity.GoodShare > 0 && p.SLO.RequestZero() {
			d.Errorf(luaval.Child(luaval.Child("options.scenarios", sc.Name), "good_share"), "counts the requests that meet options.slo, which is not set (e.g. slo = { ttft = \"1s\" })")
		}
	}
}

// onUnreachable reads what a run does when the target stops answering;
// "" when the target table does not say.
func (d *decoder) onUnreachable(path string, target lua.LValue) string {
	tbl, ok := luaval.Plain(target).(*lua.LTable)
	if !ok {
		return "" // target() reported it
	}
	v := tbl.RawGetString("on_unreachable")
	if v == lua.LNil {
		return ""
	}
	return d.oneOf(path, v, onUnreachableValues)
}

// slo reads the objectives goodput counts against; each must be > 0,
// since a zero objective would mean "not checked" and hide a mistake.
func (d *decoder) slo(path string, v lua.LValue) plan.SLO {
	f := d.Record(path, v, sloKeys)
	var o plan.SLO
	for _, sf := range []struct {
		key string
		dst *time.Duration
	}{{"ttft", &o.TTFT}, {"tpot", &o.TPOT}, {"e2e", &o.E2E}, {"task", &o.Task}} {
		if v := f[sf.key]; v != nil {
			*sf.dst = d.PositiveDuration(luaval.Child(path, sf.key), v)
		}
	}
	return o
}

func (d *decoder) warmup(path string, v lua.LValue) plan.Warmup {
	f := d.Record(path, v, warmupKeys)
	var w plan.Warmup
	if f["requests"] != nil && f["duration"] != nil {
		d.Errorf(path, "set requests or duration, not both")
	}
	if r := f["requests"]; r != nil {
		w.Requests = d.Count(luaval.Child(path, "requests"), r, 0)
	}
	if du := f["duration"]; du != nil {
		w.Duration = d.PositiveDuration(luaval.Child(path, "duration"), du)
	}
	return w
}

// scenarios reads options.scenarios, sorted by name because Lua tables
// have no order, or the single scenario of a shorthand.
func (d *decoder) scenarios(f map[string]lua.LValue) []plan.Scenario {
	short := presentKeys(f, "stages", "vus", "duration")
	if f["scenarios"] != nil {
		for _, k := range short {
			d.Errorf(luaval.Child("options", k), "cannot be combined with options.scenarios "+
				"(move it into a scenario)")
		}
		return d.namedScenarios("options.scenarios", f["scenarios"])
	}
	if len(short) == 0 {
		d.Errorf("options", "no scenarios (set options.scenarios, or options.vus and options.duration, "+
			"or options.stages, with a global function %s(vu))", ShorthandExec)
		return nil
	}
	sc := d.newScenario(ShorthandScenario, ShorthandExec)
	if f["stages"] != nil {
		for _, k := range presentKeys(f, "vus", "duration") {
			d.Errorf(luaval.Child("options", k), "cannot be combined with options.stages")
		}
		sc.Executor = plan.ExecutorRampingVUs
		sc.Stages = d.stages("options.stages", f["stages"], false)
		return []plan.Scenario{sc}
	}
	sc.Executor = plan.ExecutorConstantVUs
	sc.Stages = d.constantStage("options", sc.Name, f)
	return []plan.Scenario{sc}
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
func (d *decoder) checkExecs(scs []plan.Scenario, shorthand bool, funcs []string) {
	for _, sc := range scs {
		if sc.Exec == "" || luaval.Contains(funcs, sc.Exec) {
			continue
		}
		if shorthand {
			d.Errorf("options", "the shorthand calls a global function %s(vu), which the script does not define", sc.Exec)
			continue
		}
		msg := fmt.Sprintf("no global function %q in the script", sc.Exec)
		if best, ok := luaval.Nearest(sc.Exec, funcs); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		d.Errorf(luaval.Child(luaval.Child("options.scenarios", sc.Name), "exec"), "%s", msg)
	}
}
