package luabind

import (
	"sort"
	"strings"

	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var dirtyKeys = []string{"ratio", "kinds"}

// dirtyOptions reads options.dirty = { ratio = 0.1, kinds = { empty = 2,
// ... } }; without kinds every kind has weight 1.
func (d *decoder) dirtyOptions(path string, v lua.LValue) dirtyConfig {
	f := d.Record(path, v, dirtyKeys)
	var c dirtyConfig
	if f == nil {
		return c
	}
	if r := f["ratio"]; r == nil {
		d.Errorf(luaval.Child(path, "ratio"), "required (the share of requests to malform, in [0, 1])")
	} else if c.ratio = d.Number(luaval.Child(path, "ratio"), r, 0); c.ratio > 1 {
		d.Errorf(luaval.Child(path, "ratio"), "must be in [0, 1], got %v", c.ratio)
		c.ratio = 0
	}
	c.weights = map[string]float64{}
	if k := f["kinds"]; k != nil {
		d.dirtyKinds(luaval.Child(path, "kinds"), k, c.weights)
	} else {
		for _, name := range dirty.Names() {
			c.weights[name] = 1
		}
	}
	for name, w := range c.weights {
		c.kinds = append(c.kinds, name)
		c.total += w
	}
	sort.Strings(c.kinds)
	return c
}

// dirtyKinds reads kinds = { name = weight, ... } into weights.
func (d *decoder) dirtyKinds(path string, v lua.LValue, weights map[string]float64) {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table of kind = weight, got %s", v.Type())
		return
	}
	for _, k := range luaval.SortedKeys(tbl) {
		name, isStr := k.(lua.LString)
		if !isStr || !dirty.Valid(string(name)) {
			d.Errorf(luaval.KeyPath(path, k), "%s", unknownDirtyKind(k.String()))
			continue
		}
		if w := d.PositiveNumber(luaval.KeyPath(path, k), tbl.RawGet(k)); w > 0 {
			weights[string(name)] = w
		}
	}
	if len(weights) == 0 && len(d.Errs) == 0 {
		d.Errorf(path, "needs at least one kind (valid: %s)", strings.Join(dirty.Names(), ", "))
	}
}

// Dirty returns options.dirty: the share of requests malformed and each
// kind's weight; 0 and nil when the script sets none. The map is a copy.
func (s *Script) Dirty() (ratio float64, kinds map[string]float64) {
	if s.dirty.ratio == 0 && len(s.dirty.weights) == 0 {
		return 0, nil
	}
	kinds = make(map[string]float64, len(s.dirty.weights))
	for k, w := range s.dirty.weights {
		kinds[k] = w
	}
	return s.dirty.ratio, kinds
}
