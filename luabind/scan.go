package luabind

import (
	"fmt"
	"slices"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/sandbox"
	"github.com/yuin/gopher-lua/ast"
)

// apiMembers are the module members that send requests, by the endpoint
// they send to.
var apiMembers = map[string]string{
	"chat": engine.EndpointChat, "complete": engine.EndpointChat, "conversation": engine.EndpointChat,
	"respond": engine.EndpointResponses, "messages": engine.EndpointMessages, "embed": engine.EndpointEmbeddings,
	"transcribe": engine.EndpointTranscriptions, "speak": engine.EndpointSpeech,
}

// scanAPIs finds the endpoints a chunk sends to, for the preflight: the
// members of apiMembers read from the module (llm.respond, ...; a
// completion is checked as chat). The module is the names bound to
// require("llmload"), or llm when the chunk binds none it can see. It
// returns nil when the script sends only chat requests, the preflight's
// default.
func scanAPIs(chunk []ast.Stmt) []string {
	names := moduleNames(chunk)
	found := map[string]bool{}
	inspectStmts(chunk, func(n ast.PositionHolder) bool {
		get, ok := n.(*ast.AttrGetExpr)
		if !ok {
			return true
		}
		obj, isIdent := get.Object.(*ast.IdentExpr)
		key, isStr := get.Key.(*ast.StringExpr)
		if isIdent && isStr && names[obj.Value] && apiMembers[key.Value] != "" {
			found[apiMembers[key.Value]] = true
		}
		return true
	})
	if len(found) == 0 || (len(found) == 1 && found[engine.EndpointChat]) {
		return nil
	}
	return slices.DeleteFunc(engine.Endpoints(), func(api string) bool { return !found[api] })
}

// moduleNames are the names a chunk binds to require("llmload"), {llm}
// when it binds none.
func moduleNames(chunk []ast.Stmt) map[string]bool {
	names := map[string]bool{}
	bind := func(lhs []string, rhs []ast.Expr) {
		for i, e := range rhs {
			if i < len(lhs) && requiresModule(e) {
				names[lhs[i]] = true
			}
		}
	}
	inspectStmts(chunk, func(n ast.PositionHolder) bool {
		switch s := n.(type) {
		case *ast.LocalAssignStmt:
			bind(s.Names, s.Exprs)
		case *ast.AssignStmt:
			var lhs []string
			for _, e := range s.Lhs {
				id, _ := e.(*ast.IdentExpr)
				lhs = append(lhs, identName(id))
			}
			bind(lhs, s.Rhs)
		}
		return true
	})
	if len(names) == 0 {
		names["llm"] = true
	}
	return names
}

func identName(id *ast.IdentExpr) string {
	if id == nil {
		return ""
	}
	return id.Value
}

// requiresModule reports a call require("llmload").
func requiresModule(e ast.Expr) bool {
	call, ok := e.(*ast.FuncCallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	fn, isIdent := call.Func.(*ast.IdentExpr)
	arg, isStr := call.Args[0].(*ast.StringExpr)
	return isIdent && fn.Value == "require" && isStr && arg.Value == sandbox.ModuleName
}

// targetUse is a request call whose table names its target with a
// literal string: llm.chat { target = "b", ... }.
type targetUse struct {
	line     int
	function string // "llm.chat"
	target   string
}

// literalTargets finds the request calls of src that name a target
// literally, so that a misspelt one is an error at compile time rather
// than a script error in every iteration of the run.
func literalTargets(chunk []ast.Stmt) []targetUse {
	names := moduleNames(chunk)
	var uses []targetUse
	inspectStmts(chunk, func(n ast.PositionHolder) bool {
		call, ok := n.(*ast.FuncCallExpr)
		if !ok || call.Func == nil || len(call.Args) != 1 {
			return true
		}
		get, ok := call.Func.(*ast.AttrGetExpr)
		if !ok {
			return true
		}
		obj, isIdent := get.Object.(*ast.IdentExpr)
		key, isStr := get.Key.(*ast.StringExpr)
		tbl, isTable := call.Args[0].(*ast.TableExpr)
		if !isIdent || !isStr || !isTable || !names[obj.Value] || apiMembers[key.Value] == "" {
			return true
		}
		for _, f := range tbl.Fields {
			k, kOK := f.Key.(*ast.StringExpr)
			v, vOK := f.Value.(*ast.StringExpr)
			if kOK && vOK && k.Value == "target" {
				uses = append(uses, targetUse{line: f.Value.Line(), function: obj.Value + "." + key.Value, target: v.Value})
			}
		}
		return true
	})
	return uses
}

// checkTargetUses reports the first literal target that the plan's
// targets do not include.
func checkTargetUses(path string, uses []targetUse, targets []string) error {
	for _, u := range uses {
		if err := plan.CheckTargetName(targets, u.target); err != nil {
			return fmt.Errorf("%s:%d: %s: target: %w", path, u.line, u.function, err)
		}
	}
	return nil
}
