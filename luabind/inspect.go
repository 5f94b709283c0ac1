package luabind

import "github.com/yuin/gopher-lua/ast"

// inspectStmts calls f for every statement and expression in list, depth
// first, as go/ast.Inspect does; when f returns false the node's children
// are skipped. f receives an ast.Stmt or an ast.Expr.
func inspectStmts(list []ast.Stmt, f func(ast.PositionHolder) bool) {
	for _, s := range list {
		inspectStmt(s, f)
	}
}

func inspectStmt(s ast.Stmt, f func(ast.PositionHolder) bool) {
	if s == nil || !f(s) {
		return
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		inspectExprs(s.Lhs, f)
		inspectExprs(s.Rhs, f)
	case *ast.LocalAssignStmt:
		inspectExprs(s.Exprs, f)
	case *ast.FuncCallStmt:
		inspectExpr(s.Expr, f)
	case *ast.DoBlockStmt:
		inspectStmts(s.Stmts, f)
	case *ast.WhileStmt:
		inspectExpr(s.Condition, f)
		inspectStmts(s.Stmts, f)
	case *ast.RepeatStmt:
		inspectStmts(s.Stmts, f)
		inspectExpr(s.Condition, f)
	case *ast.IfStmt:
		inspectExpr(s.Condition, f)
		inspectStmts(s.Then, f)
		inspectStmts(s.Else, f)
	case *ast.NumberForStmt:
		inspectExprs([]ast.Expr{s.Init, s.Limit, s.Step}, f)
		inspectStmts(s.Stmts, f)
	case *ast.GenericForStmt:
		inspectExprs(s.Exprs, f)
		inspectStmts(s.Stmts, f)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			inspectExprs([]ast.Expr{s.Name.Func, s.Name.Receiver}, f)
		}
		inspectExpr(s.Func, f)
	case *ast.ReturnStmt:
		inspectExprs(s.Exprs, f)
	}
}

func inspectExprs(list []ast.Expr, f func(ast.PositionHolder) bool) {
	for _, e := range list {
		inspectExpr(e, f)
	}
}

func inspectExpr(e ast.Expr, f func(ast.PositionHolder) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *ast.TableExpr:
		for _, fl := range e.Fields {
			inspectExprs([]ast.Expr{fl.Key, fl.Value}, f)
		}
	case *ast.AttrGetExpr:
		inspectExprs([]ast.Expr{e.Object, e.Key}, f)
	case *ast.FuncCallExpr:
		inspectExprs([]ast.Expr{e.Func, e.Receiver}, f)
		inspectExprs(e.Args, f)
	case *ast.LogicalOpExpr:
		inspectExprs([]ast.Expr{e.Lhs, e.Rhs}, f)
	case *ast.RelationalOpExpr:
		inspectExprs([]ast.Expr{e.Lhs, e.Rhs}, f)
	case *ast.StringConcatOpExpr:
		inspectExprs([]ast.Expr{e.Lhs, e.Rhs}, f)
	case *ast.ArithmeticOpExpr:
		inspectExprs([]ast.Expr{e.Lhs, e.Rhs}, f)
	case *ast.UnaryMinusOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.UnaryNotOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.UnaryLenOpExpr:
		inspectExpr(e.Expr, f)
	case *ast.FunctionExpr:
		inspectStmts(e.Stmts, f)
	}
}
