package api

import (
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// distValue is a length distribution as scripts hold it: made by llm.dist.*
// and read by llm.synthetic.
type distValue struct {
	dist dataset.Dist
	// pairs and choice are a choice of {w, h} pairs (image sizes), for
	// which dist is nil.
	pairs  [][2]int
	choice *dataset.Choice
}

// distTable is llm.dist: the distributions synthetic prompt lengths follow.
func (m *Module) distTable(L *lua.LState) *lua.LTable {
	return L.SetFuncs(L.CreateTable(0, 4), map[string]lua.LGFunction{
		"fixed":     m.distFixed,
		"normal":    m.distNormal,
		"lognormal": m.distLognormal,
		"uniform":   m.distUniform,
		"choice":    m.distChoice,
	})
}

// distFixed implements llm.dist.fixed(v) -> dist: always v tokens.
func (m *Module) distFixed(L *lua.LState) int {
	v := float64(L.CheckNumber(1))
	d, err := dataset.Fixed(v)
	return pushDist(L, "llm.dist.fixed", d, err)
}

// distNormal implements llm.dist.normal(mean, sd) -> dist, truncated to
// at least one token.
func (m *Module) distNormal(L *lua.LState) int {
	d, err := dataset.Normal(float64(L.CheckNumber(1)), float64(L.CheckNumber(2)))
	return pushDist(L, "llm.dist.normal", d, err)
}

// distLognormal implements llm.dist.lognormal(mean, sd) -> dist, whose
// mean and standard deviation are those of the lengths themselves (not of
// their logarithm), as request-length statistics are usually quoted.
func (m *Module) distLognormal(L *lua.LState) int {
	d, err := dataset.Lognormal(float64(L.CheckNumber(1)), float64(L.CheckNumber(2)))
	return pushDist(L, "llm.dist.lognormal", d, err)
}

// distUniform implements llm.dist.uniform(lo, hi) -> dist, uniform in
// [lo, hi].
func (m *Module) distUniform(L *lua.LState) int {
	d, err := dataset.Uniform(float64(L.CheckNumber(1)), float64(L.CheckNumber(2)))
	return pushDist(L, "llm.dist.uniform", d, err)
}

// distChoice implements llm.dist.choice{ v1, v2, ..., weights = { w1,
// w2, ... } } -> dist: one of the values, each with its weight (equal
// without weights). The values are numbers (a length distribution) or
// {w, h} pairs (the sizes of synthetic images, as vLLM's resolution
// buckets).
func (m *Module) distChoice(L *lua.LState) int {
	const name = "llm.dist.choice"
	d := &luaval.Decoder{}
	tbl := luaval.PlainTable(L.CheckTable(1))
	var weights []float64
	if w := tbl.RawGetString("weights"); w != lua.LNil {
		for i, v := range d.List(name+".weights", w) {
			weights = append(weights, d.Number(luaval.Index(name+".weights", i+1), v, 0))
		}
	}
	var rest []lua.LValue
	tbl.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok && s != "weights" {
			d.Errorf(luaval.KeyPath(name, k), "unknown key (a choice is a list of values and weights = {...})")
		}
	})
	for i := 1; i <= tbl.Len(); i++ {
		rest = append(rest, tbl.RawGetInt(i))
	}
	if len(rest) == 0 && len(d.Errs) == 0 {
		d.Errorf(name, "give at least one value")
	}
	dv := &distValue{}
	values := make([]float64, len(rest))
	var labels []string
	for i, v := range rest {
		p := luaval.Index(name, i+1)
		if _, isTable := luaval.Plain(v).(*lua.LTable); isTable {
			w, h, ok := pair(d, p, v)
			if ok {
				dv.pairs = append(dv.pairs, [2]int{w, h})
				labels = append(labels, fmt.Sprintf("%dx%d", w, h))
			}
			values[i] = float64(i)
			continue
		}
		values[i] = d.Number(p, v, 0)
	}
	if dv.pairs != nil && len(dv.pairs) != len(rest) && len(d.Errs) == 0 {
		d.Errorf(name, "values are all numbers or all {w, h} pairs")
	}
	if len(d.Errs) > 0 {
		L.RaiseError("%s", strings.Join(d.Errs, "; "))
	}
	c, err := dataset.NewChoice(values, weights, labels)
	if err != nil {
		L.RaiseError("%s: %v", name, err)
	}
	if dv.pairs != nil {
		dv.choice = c
		return pushDistValue(L, dv, c.String())
	}
	dv.dist = c
	return pushDistValue(L, dv, c.String())
}

func pushDist(L *lua.LState, name string, d dataset.Dist, err error) int {
	if err != nil {
		L.RaiseError("%s: %v", name, err)
	}
	return pushDistValue(L, &distValue{dist: d}, d.String())
}

func pushDistValue(L *lua.LState, dv *distValue, label string) int {
	ud := L.NewUserData()
	ud.Value = dv
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__metatable", lua.LString("llmload.dist"))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(label))
		return 1
	}))
	L.SetMetatable(ud, mt)
	L.Push(ud)
	return 1
}
