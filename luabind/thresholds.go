package luabind

import (
	"fmt"
	"math"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// thresholdKeys are the named keys of a threshold given as a table; its
// list part holds the conditions.
var thresholdKeys = []string{"abort_on_fail", "delay_abort_eval"}

// thresholds reads options.thresholds into specs sorted by expression (the
// order sortedKeys gives string keys).
func (d *decoder) thresholds(path string, v lua.LValue) []plan.ThresholdSpec {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	var specs []plan.ThresholdSpec
	for _, k := range luaval.SortedKeys(tbl) {
		expr, isStr := k.(lua.LString)
		if !isStr || expr == "" {
			d.Errorf(luaval.KeyPath(path, k), "keys must be metric expressions such as %q", "ttft.p99")
			continue
		}
		p := thresholdPath(path, string(expr))
		if spec, ok := d.threshold(p, string(expr), tbl.RawGet(k)); ok {
			specs = append(specs, spec)
		}
	}
	return specs
}

// thresholdPath names one threshold the way it is written in Lua, since its
// key usually holds dots: options.thresholds["ttft.p99"].
func thresholdPath(path, expr string) string { return fmt.Sprintf("%s[%q]", path, expr) }

// threshold reads one value: a condition string, or a table of conditions
// with abort_on_fail and delay_abort_eval.
func (d *decoder) threshold(path, expr string, v lua.LValue) (plan.ThresholdSpec, bool) {
	spec := plan.ThresholdSpec{Expr: expr}
	switch x := luaval.Plain(v).(type) {
	case lua.LString:
		spec.Conditions = []string{d.condition(path, x)}
		return spec, true
	case *lua.LTable:
		return d.thresholdTable(path, spec, x)
	}
	d.Errorf(path, "expected a condition string such as %q, or a table of them, got %s", "< 1s", v.Type())
	return spec, false
}

func (d *decoder) thresholdTable(path string, spec plan.ThresholdSpec, tbl *lua.LTable) (plan.ThresholdSpec, bool) {
	n := seqLen(tbl)
	before := len(d.Errs)
	for _, k := range luaval.SortedKeys(tbl) {
		switch key := k.(type) {
		case lua.LNumber:
			if float64(key) != math.Trunc(float64(key)) || key < 1 || int(key) > n {
				d.Errorf(luaval.KeyPath(path, k), "unexpected key (list the conditions first, then abort_on_fail or delay_abort_eval)")
			}
		case lua.LString:
			d.thresholdOption(path, string(key), tbl.RawGet(k), &spec)
		default:
			d.Errorf(luaval.KeyPath(path, k), "%s", luaval.UnknownKey(k.String(), thresholdKeys))
		}
	}
	for i := 1; i <= n; i++ {
		spec.Conditions = append(spec.Conditions, d.condition(luaval.Index(path, i), tbl.RawGetInt(i)))
	}
	if n == 0 {
		d.Errorf(path, "needs at least one condition, such as %q", "< 1s")
	}
	if spec.DelayAbortEval > 0 && !spec.AbortOnFail {
		d.Errorf(luaval.Child(path, "delay_abort_eval"), "only valid with abort_on_fail = true")
	}
	return spec, len(d.Errs) == before
}

func (d *decoder) thresholdOption(path, key string, v lua.LValue, spec *plan.ThresholdSpec) {
	switch key {
	case "abort_on_fail":
		spec.AbortOnFail = d.Boolean(luaval.Child(path, key), v)
	case "delay_abort_eval":
		spec.DelayAbortEval, _ = d.Duration(luaval.Child(path, key), v)
	default:
		d.Errorf(luaval.Child(path, key), "%s", luaval.UnknownKey(key, thresholdKeys))
	}
}

// condition reads one condition string; the threshold package judges it.
func (d *decoder) condition(path string, v lua.LValue) string {
	s := d.Str(path, v)
	if _, isStr := v.(lua.LString); isStr && s == "" {
		d.Errorf(path, "must not be empty")
	}
	return s
}

// checkThresholds parses every threshold against the built-in metrics,
// the script's custom metrics and the plan's stages, so a typo fails
// before load rather than as a gate that never sees data.
func (d *decoder) checkThresholds(p plan.Plan) {
	if len(p.Thresholds) == 0 {
		return
	}
	known := threshold.KnownOf(p)
	for _, spec := range p.Thresholds {
		if _, err := threshold.Parse(spec, known); err != nil {
			d.Errorf(thresholdPath("options.thresholds", spec.Expr), "%v", err)
		}
	}
}

// seqLen is the length of tbl's sequence 1..n without holes; unlike the
// # operator it does not depend on how the table was built.
func seqLen(tbl *lua.LTable) int {
	n := 0
	for tbl.RawGetInt(n+1) != lua.LNil {
		n++
	}
	return n
}
