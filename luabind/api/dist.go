package api

import (
	"github.com/llmload/llmload/engine/dataset"
	lua "github.com/yuin/gopher-lua"
)

// distValue is a length distribution as scripts hold it: made by llm.dist.*
// and read by llm.synthetic.
type distValue struct {
	dist dataset.Dist
}

// distTable is llm.dist: the distributions synthetic prompt lengths follow.
func (m *Module) distTable(L *lua.LState) *lua.LTable {
	return L.SetFuncs(L.CreateTable(0, 4), map[string]lua.LGFunction{
		"fixed":     m.distFixed,
		"normal":    m.distNormal,
		"lognormal": m.distLognormal,
		"uniform":   m.distUniform,
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

func pushDist(L *lua.LState, name string, d dataset.Dist, err error) int {
	if err != nil {
		L.RaiseError("%s: %v", name, err)
	}
	ud := L.NewUserData()
	ud.Value = &distValue{dist: d}
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__metatable", lua.LString("llmload.dist"))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(d.String()))
		return 1
	}))
	L.SetMetatable(ud, mt)
	L.Push(ud)
	return 1
}
