package luabind

import (
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// duplicateKeys reports string keys given twice in the table constructor
// of a field named scenarios or thresholds. Lua keeps only the last of
// them without a word, so a copied scenario would silently replace the
// first; only the source still shows both.
func duplicateKeys(path string, chunk []ast.Stmt) error {
	w := &dupWalker{}
	w.stmts(chunk)
	if len(w.errs) == 0 {
		return nil
	}
	lines := make([]string, len(w.errs))
	for i, e := range w.errs {
		lines[i] = path + ":" + e
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}

// dupWalker visits every statement and expression of a chunk.
type dupWalker struct {
	errs []string
}

func (w *dupWalker) stmts(list []ast.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *dupWalker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.assign(s)
	case *ast.LocalAssignStmt:
		w.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		w.expr(s.Expr)
	case *ast.DoBlockStmt:
		w.stmts(s.Stmts)
	case *ast.WhileStmt:
		w.expr(s.Condition)
		w.stmts(s.Stmts)
	case *ast.RepeatStmt:
		w.stmts(s.Stmts)
		w.expr(s.Condition)
	case *ast.IfStmt:
		w.expr(s.Condition)
		w.stmts(s.Then)
		w.stmts(s.Else)
	case *ast.NumberForStmt:
		w.exprs([]ast.Expr{s.Init, s.Limit, s.Step})
		w.stmts(s.Stmts)
	case *ast.GenericForStmt:
		w.exprs(s.Exprs)
		w.stmts(s.Stmts)
	case *ast.FuncDefStmt:
		w.expr(s.Func)
	case *ast.ReturnStmt:
		w.exprs(s.Exprs)
	}
}

// assign also catches options.scenarios = { ... } written as a statement.
func (w *dupWalker) assign(s *ast.AssignStmt) {
	for i, lhs := range s.Lhs {
		w.expr(lhs)
		if get, ok := lhs.(*ast.AttrGetExpr); ok && i < len(s.Rhs) {
			w.field(get.Key, s.Rhs[i])
		}
	}
	w.exprs(s.Rhs)
}

func (w *dupWalker) exprs(list []ast.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w *dupWalker) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.TableExpr:
		for _, f := range e.Fields {
			w.field(f.Key, f.Value)
			w.exprs([]ast.Expr{f.Key, f.Value})
		}
	case *ast.AttrGetExpr:
		w.exprs([]ast.Expr{e.Object, e.Key})
	case *ast.FuncCallExpr:
		w.exprs([]ast.Expr{e.Func, e.Receiver})
		w.exprs(e.Args)
	case *ast.LogicalOpExpr:
		w.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.RelationalOpExpr:
		w.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.StringConcatOpExpr:
		w.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.ArithmeticOpExpr:
		w.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.UnaryMinusOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		w.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		w.expr(e.Expr)
	case *ast.FunctionExpr:
		w.stmts(e.Stmts)
	}
}

// field checks value when key names a scenarios or thresholds table.
func (w *dupWalker) field(key, value ast.Expr) {
	k, isStr := key.(*ast.StringExpr)
	tbl, isTbl := value.(*ast.TableExpr)
	if !isStr || !isTbl {
		return
	}
	switch k.Value {
	case "scenarios":
		w.unique(tbl, "options.scenarios: scenario %q defined twice (first at line %d)")
	case "thresholds":
		w.unique(tbl, "options.thresholds: %q defined twice (first at line %d)")
	}
}

func (w *dupWalker) unique(tbl *ast.TableExpr, format string) {
	first := map[string]int{}
	for _, f := range tbl.Fields {
		k, ok := f.Key.(*ast.StringExpr)
		if !ok {
			continue
		}
		if line, dup := first[k.Value]; dup {
			w.errs = append(w.errs, fmt.Sprintf("%d: "+format, k.Line(), k.Value, line))
			continue
		}
		first[k.Value] = k.Line()
	}
}
