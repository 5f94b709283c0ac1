package luabind

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// balanceValues are what options.balance may say.
var balanceValues = []string{plan.BalanceRoundRobin, plan.BalanceRandom, plan.BalanceWeighted}

// targetName is what a target may be called: it labels figures, CSV
// columns and threshold filters (ttft{target:b}), so it stays plain.
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// targets reads options.targets: several endpoints, as a table of name →
// target, or a list of targets each with its name. Every entry is an
// options.target of its own, whose unset keys are options.target's
// (shared), plus its weight. The result is sorted by name.
func (d *decoder) targets(path string, v lua.LValue, shared lua.LValue, dir string) []plan.Target {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "want a table of targets by name (targets = { a = { base_url = ... }, b = { ... } }), got %s", v.Type())
		return nil
	}
	var out []plan.Target
	seen := map[string]string{} // lower-cased name → the entry's path
	add := func(name, entryPath string, entry lua.LValue) {
		if !targetName.MatchString(name) {
			d.Errorf(entryPath, "target name %q: use letters, digits, '_', '.' and '-' (at most 64, starting with a letter or digit)", name)
			return
		}
		if first, dup := seen[strings.ToLower(name)]; dup {
			d.Errorf(entryPath, "a second target named %q (the first is %s): each target needs its own name", name, first)
			return
		}
		seen[strings.ToLower(name)] = entryPath
		if t, ok := d.oneTarget(entryPath, entry, shared, dir); ok {
			t.Name = name
			out = append(out, t)
		}
	}
	if n := tbl.Len(); n > 0 {
		for i := 1; i <= n; i++ {
			entryPath := luaval.KeyPath(path, lua.LNumber(i))
			entry := tbl.RawGetInt(i)
			et, ok := luaval.Plain(entry).(*lua.LTable)
			if !ok {
				d.Errorf(entryPath, "want a target table, got %s", entry.Type())
				continue
			}
			name, isStr := et.RawGetString("name").(lua.LString)
			if !isStr || name == "" {
				d.Errorf(luaval.Child(entryPath, "name"), "each target of a list needs a name (or write targets = { a = {...} })")
				continue
			}
			add(string(name), entryPath, entry)
		}
	} else {
		tbl.ForEach(func(k, entry lua.LValue) {
			name, isStr := k.(lua.LString)
			if !isStr {
				d.Errorf(luaval.KeyPath(path, k), "target names are strings (targets = { a = {...} })")
				return
			}
			add(string(name), luaval.Child(path, string(name)), entry)
		})
	}
	if len(out) == 0 && len(seen) == 0 {
		d.Errorf(path, "no targets: name at least one (targets = { a = { base_url = ... } })")
	}
	slices.SortFunc(out, func(a, b plan.Target) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// oneTarget decodes one entry of options.targets over options.target's
// keys: the entry's own keys win.
func (d *decoder) oneTarget(path string, entry, shared lua.LValue, dir string) (plan.Target, bool) {
	et, ok := luaval.Plain(entry).(*lua.LTable)
	if !ok {
		d.Errorf(path, "want a target table (base_url, api_key, model, weight, ...), got %s", entry.Type())
		return plan.Target{}, false
	}
	merged := &lua.LTable{}
	if st, ok := luaval.Plain(shared).(*lua.LTable); ok {
		st.ForEach(func(k, v lua.LValue) {
			// on_unreachable is the run's, not a target's.
			if k.String() != "on_unreachable" {
				merged.RawSet(k, v)
			}
		})
	}
	var weight lua.LValue = lua.LNil
	et.ForEach(func(k, v lua.LValue) {
		switch k.String() {
		case "weight":
			weight = v
		case "name":
		default:
			merged.RawSet(k, v)
		}
	})
	t := d.target(path, merged, dir)
	t.Weight = 1
	if weight != lua.LNil {
		t.Weight = d.PositiveNumber(luaval.Child(path, "weight"), weight)
	}
	return t, true
}

// balance reads options.balance, which only several targets need.
func (d *decoder) balance(path string, v lua.LValue, targets int) string {
	s := d.Str(path, v)
	if _, isStr := v.(lua.LString); !isStr {
		return ""
	}
	if !slices.Contains(balanceValues, s) {
		msg := fmt.Sprintf("%q: want %s", s, strings.Join(balanceValues, ", "))
		if best, ok := luaval.Nearest(s, balanceValues); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		d.Errorf(path, "%s", msg)
		return ""
	}
	if targets == 0 {
		d.Errorf(path, "spreads requests across options.targets, which is not set")
	}
	return s
}

// checkScenarioTargets reports a scenario that names a target the plan
// does not have.
func (d *decoder) checkScenarioTargets(p plan.Plan) {
	for _, sc := range p.Scenarios {
		if sc.Target == "" {
			continue
		}
		path := luaval.Child(luaval.Child("options.scenarios", sc.Name), "target")
		if err := plan.CheckTargetName(plan.TargetNames(p.Targets), sc.Target); err != nil {
			d.Errorf(path, "%v", err)
		}
	}
}
