package luaval

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// MaxExactInt is the largest integer a Lua number holds exactly.
const MaxExactInt = 1 << 53

// Limits on a request's extra: generous for any request body, small enough
// that a runaway table fails fast instead of stalling a VU.
const (
	maxJSONDepth  = 32
	maxJSONValues = 100_000
)

// jsonWalker converts Lua values into values encoding/json can marshal.
type jsonWalker struct {
	d      *Decoder
	open   map[*lua.LTable]bool // tables on the current path, to catch cycles
	values int
}

// JsonObject converts a Lua table with string keys into a JSON object.
func (d *Decoder) JsonObject(path string, v lua.LValue) map[string]any {
	tbl, ok := Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	if isSequence(SortedKeys(tbl)) {
		d.Errorf(path, "expected a table with string keys, got a list")
		return nil
	}
	w := &jsonWalker{d: d, open: map[*lua.LTable]bool{}}
	obj, _ := w.table(path, tbl, 1).(map[string]any)
	return obj
}

// value converts one Lua value: integral numbers become int64 so large ids
// print without an exponent.
func (w *jsonWalker) value(path string, v lua.LValue, depth int) any {
	if w.values++; w.values > maxJSONValues {
		if w.values == maxJSONValues+1 {
			w.d.Errorf(path, "more than %d values", maxJSONValues)
		}
		return nil
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil
	case lua.LBool:
		return bool(x)
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return w.number(path, float64(x))
	case *lua.LTable:
		return w.table(path, PlainTable(x), depth+1)
	}
	w.d.Errorf(path, "a %s cannot be sent as JSON", v.Type())
	return nil
}

func (w *jsonWalker) number(path string, f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.d.Errorf(path, "%v cannot be sent as JSON", f)
		return nil
	}
	if f == math.Trunc(f) && math.Abs(f) <= MaxExactInt {
		return int64(f)
	}
	return f
}

// table makes a list from a table keyed 1..n and an object from one keyed
// by strings; an empty table becomes an empty object.
func (w *jsonWalker) table(path string, tbl *lua.LTable, depth int) any {
	switch {
	case w.open[tbl]:
		w.d.Errorf(path, "a table cannot contain itself")
		return nil
	case depth > maxJSONDepth:
		w.d.Errorf(path, "nested deeper than %d tables", maxJSONDepth)
		return nil
	}
	w.open[tbl] = true
	defer delete(w.open, tbl)
	keys := SortedKeys(tbl)
	if isSequence(keys) {
		list := make([]any, len(keys))
		for i := range list {
			list[i] = w.value(Index(path, i+1), tbl.RawGetInt(i+1), depth)
		}
		return list
	}
	obj := make(map[string]any, len(keys))
	for _, k := range keys {
		s, ok := k.(lua.LString)
		if !ok {
			w.d.Errorf(KeyPath(path, k), "JSON object keys must be strings (or use a list 1..n)")
			continue
		}
		obj[string(s)] = w.value(Child(path, string(s)), tbl.RawGet(k), depth)
	}
	return obj
}

// isSequence tells whether sorted keys are exactly 1..n, n ≥ 1.
func isSequence(keys []lua.LValue) bool {
	for i, k := range keys {
		if n, ok := k.(lua.LNumber); !ok || float64(n) != float64(i+1) {
			return false
		}
	}
	return len(keys) > 0
}
