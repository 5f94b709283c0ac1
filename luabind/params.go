package luabind

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmload/llmload/luabind/luaval"
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

// Params are the llm.param calls a script's source shows, found without
// running it: what --set can change, and what each falls back to.
type Params struct {
	// Reads are the calls with a literal key, in source order.
	Reads []ParamRead
	// Dynamic is the line of a call with a computed key, or of llm.param
	// taken as a value; 0 when there is none. Such a script may read any
	// key, so unknown keys are not refused.
	Dynamic int
}

// ParamRead is one llm.param(key [, default]) call with a literal key.
type ParamRead struct {
	Key  string
	Line int
	// Default is the literal default as --set would spell it: a string's
	// contents, a number as written, true or false. It is "" unless
	// DefaultKind is DefaultLiteral.
	Default     string
	DefaultKind DefaultKind
}

// DefaultKind says what an llm.param call falls back to without --set.
type DefaultKind int

// The kinds of default: none (the call returns nil), a literal, or an
// expression whose value only running the script would tell.
const (
	DefaultNone DefaultKind = iota
	DefaultLiteral
	DefaultComputed
)

// Keys are the distinct literal keys, sorted.
func (p Params) Keys() []string {
	keys := make([]string, 0, len(p.Reads))
	for _, r := range p.Reads {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ScanParams parses and compiles src, the scenario at path, without
// running it, and returns its llm.param calls, so a tool can list the
// keys a scenario reads without loading its data. Its errors are
// Compile's for the same source ("path:line: message").
func ScanParams(path string, src []byte) (Params, error) {
	_, found, err := compileChunk(path, src)
	return found.params, err
}

// scanParams finds the llm.param calls in a chunk. Any x.param counts, as
// the module may be bound to any name; a false match only makes the check
// more lenient.
func scanParams(chunk []ast.Stmt) Params {
	var p Params
	var visit func(n ast.PositionHolder) bool
	visit = func(n ast.PositionHolder) bool {
		e, _ := n.(ast.Expr)
		switch e := e.(type) {
		case *ast.FuncCallExpr:
			if !isParam(e.Func) {
				return true
			}
			if k, ok := firstArg(e).(*ast.StringExpr); ok {
				p.Reads = append(p.Reads, paramRead(k.Value, e))
			} else {
				p.dynamicAt(e.Line())
			}
			// The call is accounted for: visit the module expression and
			// the arguments, not the x.param callee on its own.
			inspectExprs(append([]ast.Expr{e.Func.(*ast.AttrGetExpr).Object}, e.Args...), visit)
			return false
		case *ast.AttrGetExpr:
			if isParam(e) {
				p.dynamicAt(e.Line())
			}
		}
		return true
	}
	inspectStmts(chunk, visit)
	return p
}

func paramRead(key string, call *ast.FuncCallExpr) ParamRead {
	r := ParamRead{Key: key, Line: max(call.Line(), 1)}
	if len(call.Args) < 2 {
		return r
	}
	r.Default, r.DefaultKind = literal(call.Args[1])
	return r
}

// literal spells a constant expression as --set would give it.
func literal(e ast.Expr) (string, DefaultKind) {
	switch e := e.(type) {
	case *ast.NilExpr:
		return "", DefaultNone
	case *ast.StringExpr:
		return e.Value, DefaultLiteral
	case *ast.NumberExpr:
		return e.Value, DefaultLiteral
	case *ast.TrueExpr:
		return "true", DefaultLiteral
	case *ast.FalseExpr:
		return "false", DefaultLiteral
	case *ast.UnaryMinusOpExpr:
		if n, ok := e.Expr.(*ast.NumberExpr); ok {
			return "-" + n.Value, DefaultLiteral
		}
	}
	return "", DefaultComputed
}

func firstArg(call *ast.FuncCallExpr) ast.Expr {
	if len(call.Args) == 0 {
		return nil
	}
	return call.Args[0]
}

func (p *Params) dynamicAt(line int) {
	if p.Dynamic == 0 {
		p.Dynamic = max(line, 1)
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
func (s *Script) checkParams(use Params, readAtInit map[string]bool) error {
	if use.Dynamic > 0 || len(s.Params) == 0 {
		return nil
	}
	known := maps.Clone(readAtInit)
	if known == nil {
		known = map[string]bool{}
	}
	for _, k := range use.Keys() {
		known[k] = true
	}
	read := slices.Sorted(maps.Keys(known))
	for _, key := range slices.Sorted(maps.Keys(s.Params)) {
		if known[key] {
			continue
		}
		msg := fmt.Sprintf("--set %s: no llm.param in %s reads this key", key, s.Path)
		if best, ok := luaval.Nearest(key, read); ok {
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
