package luabind

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// ParamError is a --set key the scenario never reads: the run would go
// ahead with the default, so it is refused before any load. The caller
// treats it as a usage error.
type ParamError struct {
	Key  string
	Read []string // the keys the scenario reads, sorted
	msg  string
}

// Error names the key, the keys the script reads and the nearest of them.
func (e *ParamError) Error() string { return e.msg }

// paramUse is what a scenario's source shows of its llm.param calls.
type paramUse struct {
	keys map[string]bool // keys given as string literals
	// dynamic is the line of a call with a computed key, or of llm.param
	// taken as a value; 0 when there is none. Such a script may read any
	// key, so unknown keys are not refused.
	dynamic int
}

// scanParams finds the llm.param keys in a chunk. Any x.param counts, as
// the module may be bound to any name; a false match only makes the check
// more lenient.
func scanParams(chunk []ast.Stmt) paramUse {
	u := paramUse{keys: map[string]bool{}}
	var visit func(n ast.PositionHolder) bool
	visit = func(n ast.PositionHolder) bool {
		e, _ := n.(ast.Expr)
		switch e := e.(type) {
		case *ast.FuncCallExpr:
			if !isParam(e.Func) {
				return true
			}
			if k, ok := firstArg(e).(*ast.StringExpr); ok {
				u.keys[k.Value] = true
			} else {
				u.dynamicAt(e.Line())
			}
			// The call is accounted for: visit the module expression and
			// the arguments, not the x.param callee on its own.
			inspectExprs(append([]ast.Expr{e.Func.(*ast.AttrGetExpr).Object}, e.Args...), visit)
			return false
		case *ast.AttrGetExpr:
			if isParam(e) {
				u.dynamicAt(e.Line())
			}
		}
		return true
	}
	inspectStmts(chunk, visit)
	return u
}

func firstArg(call *ast.FuncCallExpr) ast.Expr {
	if len(call.Args) == 0 {
		return nil
	}
	return call.Args[0]
}

func (u *paramUse) dynamicAt(line int) {
	if u.dynamic == 0 {
		u.dynamic = max(line, 1)
	}
}

func isParam(e ast.Expr) bool {
	get, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	k, ok := get.Key.(*ast.StringExpr)
	return ok && k.Value == "param"
}

// checkParams refuses a --set key the script cannot read: neither a
// literal llm.param key in the source nor a key its top level read.
func (s *Script) checkParams(use paramUse, readAtInit map[string]bool) error {
	if use.dynamic > 0 || len(s.params) == 0 {
		return nil
	}
	known := maps.Clone(use.keys)
	maps.Copy(known, readAtInit)
	read := slices.Sorted(maps.Keys(known))
	for _, key := range slices.Sorted(maps.Keys(s.params)) {
		if known[key] {
			continue
		}
		msg := fmt.Sprintf("--set %s: no llm.param in %s reads this key", key, s.path)
		if best, ok := nearest(key, read); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		if len(read) == 0 {
			msg += "; it reads no parameters"
		} else {
			msg += "; the keys it reads: " + strings.Join(read, ", ")
		}
		return &ParamError{Key: key, Read: read, msg: msg}
	}
	return nil
}
