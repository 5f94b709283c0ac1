package luaval

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// LuaToGo converts what setup() returns into plain Go data that any
// LState can rebuild: nil, bool, float64, string, and tables as []any
// (keys exactly 1..n), map[string]any (string keys only, or empty) or
// map[any]any (string and int64 keys mixed or sparse). Functions, userdata,
// coroutines and cycles cannot cross LStates; the error names the path of
// the bad value below "data".
func LuaToGo(v lua.LValue) (any, error) {
	c := &goConverter{open: map[*lua.LTable]bool{}}
	return c.value("data", v)
}

// maxSetupDepth bounds the nesting of setup data, far beyond real data,
// so a runaway structure fails with a message rather than a Go stack.
const maxSetupDepth = 200

type goConverter struct {
	open map[*lua.LTable]bool // tables on the current path, to catch cycles
}

func (c *goConverter) value(path string, v lua.LValue) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		return c.table(path, PlainTable(x))
	}
	return nil, fmt.Errorf("%s: a %s cannot be handed to iterations (return nil, booleans, numbers, strings and tables of them)",
		path, v.Type())
}

func (c *goConverter) table(path string, t *lua.LTable) (any, error) {
	switch {
	case c.open[t]:
		return nil, fmt.Errorf("%s: a table cannot contain itself", path)
	case len(c.open) >= maxSetupDepth:
		return nil, fmt.Errorf("%s: nested deeper than %d tables", path, maxSetupDepth)
	}
	c.open[t] = true
	defer delete(c.open, t)
	keys := SortedKeys(t)
	if isSequence(keys) {
		list := make([]any, len(keys))
		for i := range list {
			var err error
			if list[i], err = c.value(Index(path, i+1), t.RawGetInt(i+1)); err != nil {
				return nil, err
			}
		}
		return list, nil
	}
	return c.mapping(path, t, keys)
}

// mapping converts a table that is not a list; string-keyed ones, by far
// the most common, become map[string]any.
func (c *goConverter) mapping(path string, t *lua.LTable, keys []lua.LValue) (any, error) {
	mixed := map[any]any{}
	strs := map[string]any{}
	for _, k := range keys {
		p := KeyPath(path, k)
		key, err := goMapKey(p, k)
		if err != nil {
			return nil, err
		}
		val, err := c.value(p, t.RawGet(k))
		if err != nil {
			return nil, err
		}
		mixed[key] = val
		if s, isStr := key.(string); isStr {
			strs[s] = val
		}
	}
	if len(strs) == len(mixed) {
		return strs, nil
	}
	return mixed, nil
}

func goMapKey(path string, k lua.LValue) (any, error) {
	switch x := k.(type) {
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) <= MaxExactInt {
			return int64(f), nil
		}
		return nil, fmt.Errorf("%s: keys must be strings or integers, got %v", path, x)
	}
	return nil, fmt.Errorf("%s: keys must be strings or integers, got a %s", path, k.Type())
}
