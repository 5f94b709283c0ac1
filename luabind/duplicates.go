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
	var errs []string
	inspectStmts(chunk, func(n ast.PositionHolder) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			// options.scenarios = { ... } written as a statement.
			for i, lhs := range n.Lhs {
				if get, ok := lhs.(*ast.AttrGetExpr); ok && i < len(n.Rhs) {
					errs = append(errs, duplicatesIn(get.Key, n.Rhs[i])...)
				}
			}
		case *ast.TableExpr:
			for _, f := range n.Fields {
				errs = append(errs, duplicatesIn(f.Key, f.Value)...)
			}
		}
		return true
	})
	if len(errs) == 0 {
		return nil
	}
	for i, e := range errs {
		errs[i] = path + ":" + e
	}
	return fmt.Errorf("%s", strings.Join(errs, "\n"))
}

// duplicatesIn checks value when key names a scenarios or thresholds table.
func duplicatesIn(key, value ast.Expr) []string {
	k, isStr := key.(*ast.StringExpr)
	tbl, isTbl := value.(*ast.TableExpr)
	if !isStr || !isTbl {
		return nil
	}
	switch k.Value {
	case "scenarios":
		return unique(tbl, "options.scenarios: scenario %q defined twice (first at line %d)")
	case "thresholds":
		return unique(tbl, "options.thresholds: %q defined twice (first at line %d)")
	}
	return nil
}

// unique lists the string keys given twice in tbl, as "line: message".
func unique(tbl *ast.TableExpr, format string) []string {
	var errs []string
	first := map[string]int{}
	for _, f := range tbl.Fields {
		k, ok := f.Key.(*ast.StringExpr)
		if !ok {
			continue
		}
		if line, dup := first[k.Value]; dup {
			errs = append(errs, fmt.Sprintf("%d: "+format, k.Line(), k.Value, line))
			continue
		}
		first[k.Value] = k.Line()
	}
	return errs
}
