// Package luaval turns Lua values into Go values for every part of luabind:
// a Decoder that reads tables into typed fields and records each problem
// with the path of its key, read-only views of shared tables (setup data,
// the shared libraries) and conversions to JSON-ready and plain Go values.
package luaval

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// maxDecodeErrors bounds how many problems one validation reports; past
// that the rest are usually consequences of the first ones.
const maxDecodeErrors = 20

// Decoder reads Lua tables into Go values. It records every problem with
// the full path of the offending key and goes on, so one `llmload check`
// shows all of a scenario's mistakes at once.
type Decoder struct {
	Errs []string
}

// Errorf records a problem at path; past maxDecodeErrors it drops it.
func (d *Decoder) Errorf(path, format string, args ...any) {
	if len(d.Errs) < maxDecodeErrors {
		d.Errs = append(d.Errs, path+": "+fmt.Sprintf(format, args...))
	}
}

// Err joins the recorded problems, each prefixed with the script path.
func (d *Decoder) Err(script string) error {
	if len(d.Errs) == 0 {
		return nil
	}
	lines := make([]string, len(d.Errs))
	for i, e := range d.Errs {
		lines[i] = script + ": " + e
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}

// Child is the path of key below path: "options.target".
func Child(path, key string) string { return path + "." + key }

// Index is the path of a list element: "options.stages[2]".
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// KeyPath names key below path the way a user would write it in Lua.
func KeyPath(path string, key lua.LValue) string {
	if s, ok := key.(lua.LString); ok {
		return Child(path, string(s))
	}
	return fmt.Sprintf("%s[%s]", path, key.String())
}

// Record returns v's fields by name after checking it is a table whose keys
// are all in valid; unknown keys are reported with a suggestion. It returns
// nil when v is not a table.
func (d *Decoder) Record(path string, v lua.LValue, valid []string) map[string]lua.LValue {
	tbl, ok := Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	fields, clean := map[string]lua.LValue{}, true
	// Every request passes here: read in the table's own order, and sort
	// the keys (for errors in a stable order) only when one is wrong.
	tbl.ForEach(func(k, val lua.LValue) {
		if s, isStr := k.(lua.LString); isStr && Contains(valid, string(s)) {
			fields[string(s)] = val
		} else {
			clean = false
		}
	})
	if clean {
		return fields
	}
	for _, k := range SortedKeys(tbl) {
		s, isStr := k.(lua.LString)
		if !isStr || !Contains(valid, string(s)) {
			name := k.String()
			d.Errorf(KeyPath(path, k), "%s", UnknownKey(name, valid))
			continue
		}
		fields[string(s)] = tbl.RawGet(k)
	}
	return fields
}

// List returns the items of a Lua sequence, reporting any other key.
func (d *Decoder) List(path string, v lua.LValue) []lua.LValue {
	tbl, ok := Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected a list (table), got %s", v.Type())
		return nil
	}
	n := tbl.Len()
	inList := func(k lua.LValue) bool {
		i, isNum := k.(lua.LNumber)
		return isNum && float64(i) == math.Trunc(float64(i)) && i >= 1 && int(i) <= n
	}
	clean := true
	tbl.ForEach(func(k, _ lua.LValue) { clean = clean && inList(k) })
	if !clean {
		for _, k := range SortedKeys(tbl) {
			if !inList(k) {
				d.Errorf(KeyPath(path, k), "unexpected key in a list")
			}
		}
	}
	items := make([]lua.LValue, n)
	for i := range items {
		items[i] = tbl.RawGetInt(i + 1)
	}
	return items
}

// Str reads a string (a number is refused, not converted).
func (d *Decoder) Str(path string, v lua.LValue) string {
	s, ok := v.(lua.LString)
	if !ok {
		d.Errorf(path, "expected string, got %s", v.Type())
	}
	return string(s)
}

// Boolean reads a boolean.
func (d *Decoder) Boolean(path string, v lua.LValue) bool {
	b, ok := v.(lua.LBool)
	if !ok {
		d.Errorf(path, "expected boolean, got %s", v.Type())
	}
	return bool(b)
}

// Integer reads a number that must be whole; ok is false otherwise.
func (d *Decoder) Integer(path string, v lua.LValue) (int64, bool) {
	n, ok := v.(lua.LNumber)
	if !ok {
		d.Errorf(path, "expected integer, got %s", v.Type())
		return 0, false
	}
	f := float64(n)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		d.Errorf(path, "expected integer, got %v", n)
		return 0, false
	}
	return int64(f), true
}

// Count is an integer of at least lowest that fits an int32, as VU and
// request counts do.
func (d *Decoder) Count(path string, v lua.LValue, lowest int64) int {
	n, ok := d.Integer(path, v)
	if !ok {
		return 0
	}
	if n < lowest || n > math.MaxInt32 {
		d.Errorf(path, "must be ≥ %d, got %d", lowest, n)
		return 0
	}
	return int(n)
}

// Number reads a finite number of at least lowest; fractions are fine,
// as rates need them.
func (d *Decoder) Number(path string, v lua.LValue, lowest float64) float64 {
	n, ok := v.(lua.LNumber)
	if !ok {
		d.Errorf(path, "expected number, got %s", v.Type())
		return 0
	}
	f := float64(n)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		d.Errorf(path, "must be a finite number, got %v", n)
	case f < lowest:
		d.Errorf(path, "must be ≥ %v, got %v", lowest, n)
	default:
		return f
	}
	return 0
}

// PositiveNumber is a finite number that must be > 0.
func (d *Decoder) PositiveNumber(path string, v lua.LValue) float64 {
	n, ok := v.(lua.LNumber)
	if ok && !(n > 0) {
		d.Errorf(path, "must be > 0, got %v", n)
		return 0
	}
	return d.Number(path, v, 0)
}

// Duration reads a Go duration string such as "1m30s"; numbers are
// rejected because "seconds or minutes?" is exactly the mistake the string
// form prevents.
func (d *Decoder) Duration(path string, v lua.LValue) (time.Duration, bool) {
	switch x := v.(type) {
	case lua.LString:
		dur, err := time.ParseDuration(string(x))
		if err != nil {
			d.Errorf(path, "%q is not a duration (use e.g. \"5m\")", string(x))
			return 0, false
		}
		if dur < 0 {
			d.Errorf(path, "must not be negative, got %s", dur)
			return 0, false
		}
		return dur, true
	case lua.LNumber:
		d.Errorf(path, "%v is not a duration (use a string such as \"%vs\")", x, x)
	default:
		d.Errorf(path, "expected duration string, got %s", v.Type())
	}
	return 0, false
}

// PositiveDuration is a duration that must be > 0.
func (d *Decoder) PositiveDuration(path string, v lua.LValue) time.Duration {
	dur, ok := d.Duration(path, v)
	if ok && dur <= 0 {
		d.Errorf(path, "must be > 0, got %s", dur)
	}
	return dur
}

// StringMap reads a table of string (or number) values keyed by strings,
// such as tags.
func (d *Decoder) StringMap(path string, v lua.LValue) map[string]string {
	tbl, ok := Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected table, got %s", v.Type())
		return nil
	}
	out := map[string]string{}
	for _, k := range SortedKeys(tbl) {
		ks, isStr := k.(lua.LString)
		if !isStr {
			d.Errorf(KeyPath(path, k), "keys must be strings, got %s", k.Type())
			continue
		}
		switch val := tbl.RawGet(k).(type) {
		case lua.LString, lua.LNumber, lua.LBool:
			out[string(ks)] = val.String()
		default:
			d.Errorf(KeyPath(path, k), "expected string, got %s", val.Type())
		}
	}
	return out
}

// SortedKeys returns tbl's keys in a stable order (strings by value, then
// numbers by value), because Lua's iteration order is not.
func SortedKeys(tbl *lua.LTable) []lua.LValue {
	var keys []lua.LValue
	tbl.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return keys
}

func keyLess(a, b lua.LValue) bool {
	an, aNum := a.(lua.LNumber)
	bn, bNum := b.(lua.LNumber)
	switch {
	case aNum && bNum:
		return an < bn
	case aNum != bNum:
		return aNum
	case a.Type() != b.Type():
		return a.Type() < b.Type()
	}
	return a.String() < b.String()
}

// Contains reports whether s is in list.
func Contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
