package luabind

import (
	"fmt"
	"maps"
	"strings"

	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var lintsKeys = []string{"ignore"}

// lintOptions reads options.lints = { ignore = { ["lint-id"] = "reason" } }
// from the script's options table: each id a lint llmload knows, each
// with a reason, since a silenced check should say why it does not apply
// (the reason is printed beside the lint and kept in the result). Nil
// when the script sets none.
func (d *decoder) lintOptions(options lua.LValue) map[string]string {
	opts, _ := luaval.Plain(options).(*lua.LTable)
	if opts == nil {
		return nil
	}
	v := opts.RawGetString("lints")
	if v == lua.LNil {
		return nil
	}
	const path = "options.lints"
	f := d.Record(path, v, lintsKeys)
	if f["ignore"] == nil {
		return nil
	}
	tbl, ok := luaval.Plain(f["ignore"]).(*lua.LTable)
	if !ok {
		d.Errorf(path+".ignore", `expected a table of lint ids and reasons, e.g. { ["no-warmup"] = "why" }, got %s`, f["ignore"].Type())
		return nil
	}
	out := map[string]string{}
	for _, k := range luaval.SortedKeys(tbl) {
		if id, reason, ok := d.lintIgnore(path+".ignore", k, tbl.RawGet(k)); ok {
			out[id] = reason
		}
	}
	return out
}

// lintIgnore checks one entry of options.lints.ignore.
func (d *decoder) lintIgnore(path string, k, v lua.LValue) (id, reason string, ok bool) {
	s, isStr := k.(lua.LString)
	if !isStr {
		d.Errorf(fmt.Sprintf("%s[%s]", path, k.String()), `expected ["lint-id"] = "reason", got a %s key (%s)`,
			k.Type(), lintIDList())
		return "", "", false
	}
	id, at := string(s), fmt.Sprintf("%s[%q]", path, string(s))
	if !lint.Known(id) {
		msg := fmt.Sprintf("unknown lint %q", id)
		if best, near := luaval.Nearest(id, lint.IDs()); near {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		d.Errorf(at, "%s (%s)", msg, lintIDList())
		return "", "", false
	}
	r, isReason := v.(lua.LString)
	if !isReason || strings.TrimSpace(string(r)) == "" {
		d.Errorf(at, "needs a reason: a string saying why the lint does not apply to this scenario, e.g. [%q] = \"measures the prefix cache on purpose\"", id)
		return "", "", false
	}
	return id, strings.TrimSpace(string(r)), true
}

func lintIDList() string { return "lints: " + strings.Join(lint.IDs(), ", ") }

// LintIgnores is options.lints.ignore: lint id → the reason the script
// gives for silencing it. Nil when it silences none; the caller's copy.
func (s *Script) LintIgnores() map[string]string { return maps.Clone(s.lintIgnore) }
