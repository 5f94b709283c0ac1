package api

import (
	"math"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// thinkConstant implements llm.think.constant(d) -> function that sleeps d.
// Like every think function it returns early when the VU's context ends.
func (m *Module) thinkConstant(L *lua.LState) int {
	d := checkDuration(L, 1)
	return m.pushThink(L, func() time.Duration { return d })
}

// thinkBetween implements llm.think.between(a, b) -> function that sleeps
// a duration drawn uniformly from [a, b].
func (m *Module) thinkBetween(L *lua.LState) int {
	a, b := checkDuration(L, 1), checkDuration(L, 2)
	if a > b {
		L.ArgError(2, "upper bound "+b.String()+" is below the lower bound "+a.String())
	}
	span := int64(b - a)
	if span < math.MaxInt64 {
		span++ // inclusive of b
	}
	return m.pushThink(L, func() time.Duration {
		return a + time.Duration(m.rng.Int64N(span))
	})
}

// thinkExponential implements llm.think.exponential(mean) -> function that
// sleeps an exponentially distributed duration with that mean, the gaps of
// a Poisson arrival process.
func (m *Module) thinkExponential(L *lua.LState) int {
	mean := checkDuration(L, 1)
	if mean <= 0 {
		L.ArgError(1, "mean must be > 0")
	}
	return m.pushThink(L, func() time.Duration {
		return time.Duration(math.Min(m.rng.ExpFloat64()*float64(mean), maxThink))
	})
}

// maxThink caps an exponential draw far beyond any run so the conversion
// to a Duration cannot overflow.
const maxThink = float64(1 << 62)

func (m *Module) pushThink(L *lua.LState, draw func() time.Duration) int {
	L.Push(L.NewFunction(func(L *lua.LState) int {
		return m.sleepFor(L, "think", draw())
	}))
	return 1
}

// thinkNormal implements llm.think.normal(mean, stddev) -> function that
// sleeps a normally distributed duration, clamped at 0 because a negative
// draw cannot be slept.
func (m *Module) thinkNormal(L *lua.LState) int {
	mean, stddev := checkDuration(L, 1), checkDuration(L, 2)
	return m.pushThink(L, func() time.Duration {
		return normalDraw(m.rng.NormFloat64(), mean, stddev)
	})
}

// normalDraw scales a standard normal draw z to mean and stddev, clamped
// to [0, maxThink].
func normalDraw(z float64, mean, stddev time.Duration) time.Duration {
	d := float64(mean) + z*float64(stddev)
	return time.Duration(math.Min(math.Max(d, 0), maxThink))
}

// thinkConstantPacing implements llm.think.constant_pacing(d) -> function
// that sleeps until d after the start of the current iteration, so
// iterations start every d however long their requests took (no sleep
// when the iteration already took longer). Calling it outside an
// iteration is an error: there is no start to pace from.
func (m *Module) thinkConstantPacing(L *lua.LState) int {
	d := checkDuration(L, 1)
	if d <= 0 {
		L.ArgError(1, "pace must be > 0")
	}
	L.Push(L.NewFunction(func(L *lua.LState) int {
		if m.Phase != phaseIteration {
			L.RaiseError("llm.think.constant_pacing: the pacer can only be called inside an iteration")
		}
		if m.cfg != nil && m.cfg.Dry != nil {
			// A dry run's iteration takes no time: the pace is what it asks.
			m.cfg.Dry.Pace = max(m.cfg.Dry.Pace, d)
			return 0
		}
		return m.sleepFor(L, "llm.think.constant_pacing", time.Until(m.IterStart.Add(d)))
	}))
	return 1
}
