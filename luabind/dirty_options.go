package luabind

import (
	"sort"
	"strings"

	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var dirtyKeys = []string{"ratio", "kinds"}

// dirtyOptions reads options.dirty = { ratio = 0.1, kinds = { empty = 2,
// ... } }; without kinds every kind has weight 1.
func (d *decoder) dirtyOptions(path string, v lua.LValue) api.DirtyConfig {
	f := d.Record(path, v, dirtyKeys)
	var c api.DirtyConfig
	if f == nil {
		return c
	}
	if r := f["ratio"]; r == nil {
		d.Errorf(luaval.Child(path, "ratio"), "required (the share of requests to malform, in [0, 1])")
	} else if c.Ratio = d.Number(luaval.Child(path, "ratio"), r, 0); c.Ratio > 1 {
		d.Errorf(luaval.Child(path, "ratio"), "must be in [0, 1], got %v", c.Ratio)
		c.Ratio = 0
	}
	c.Weights = map[string]float64{}
	if k := f["kinds"]; k != nil {
		d.dirtyKinds(luaval.Child(path, "kinds"), k, c.Weights)
		mix(&c)
		return c
	}
	text := api.DirtyConfig{Ratio: c.Ratio, Weights: map[string]float64{}}
	for _, name := range dirty.Names() {
		c.Weights[name] = 1
		if !dirty.IsMedia(name) {
			text.Weights[name] = 1
		}
	}
	mix(&c)
	mix(&text)
	c.Text = &text
	return c
}

// mix lists c's kinds, sorted, and sums their weights.
func mix(c *api.DirtyConfig) {
	for name, w := range c.Weights {
		c.Kinds = append(c.Kinds, name)
		c.Total += w
	}
	sort.Strings(c.Kinds)
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
			d.Errorf(luaval.KeyPath(path, k), "%s", api.UnknownDirtyKind(k.String()))
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
	if s.DirtyMix.Ratio == 0 && len(s.DirtyMix.Weights) == 0 {
		return 0, nil
	}
	kinds = make(map[string]float64, len(s.DirtyMix.Weights))
	for k, w := range s.DirtyMix.Weights {
		kinds[k] = w
	}
	return s.DirtyMix.Ratio, kinds
}
