package luabind

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/luaval"
	"github.com/yuin/gopher-lua/ast"
)

// mediaUse is a content part, or an llm.transcribe audio, whose source
// the source code spells out: checked at Compile, so that a missing or
// wrong file fails before any load and not in every iteration of it.
type mediaUse struct {
	line     int
	kind     string // the part's type as written
	path     string // "" when the part names no literal path
	maxBytes int
	// synthetic is a literal synthetic = { width = ..., ... } of numbers,
	// nil when there is none.
	synthetic map[string]float64
}

// partSourceKeys are the keys that make a table with a type a content
// part (and not, say, a tool's {type = "function"}).
var partSourceKeys = []string{"path", "data", "url", "synthetic", "pool", "image", "audio"}

// literalMedia finds the content parts of a chunk written as table
// constructors, and the literal audio = "path" of llm.transcribe calls.
func literalMedia(chunk []ast.Stmt) []mediaUse {
	names := moduleNames(chunk)
	var uses []mediaUse
	inspectStmts(chunk, func(n ast.PositionHolder) bool {
		switch e := n.(type) {
		case *ast.TableExpr:
			if u, ok := partUse(e); ok {
				uses = append(uses, u)
			}
		case *ast.FuncCallExpr:
			get, ok := e.Func.(*ast.AttrGetExpr)
			if !ok || len(e.Args) != 1 {
				return true
			}
			obj, isIdent := get.Object.(*ast.IdentExpr)
			key, isStr := get.Key.(*ast.StringExpr)
			tbl, isTable := e.Args[0].(*ast.TableExpr)
			if !isIdent || !isStr || !isTable || !names[obj.Value] || key.Value != "transcribe" {
				return true
			}
			for _, f := range tbl.Fields {
				k, kOK := f.Key.(*ast.StringExpr)
				v, vOK := f.Value.(*ast.StringExpr)
				if kOK && vOK && k.Value == "audio" {
					uses = append(uses, mediaUse{line: f.Value.Line(), kind: engine.PartAudio, path: v.Value})
				}
			}
		}
		return true
	})
	return uses
}

// partUse reads a table constructor that is a content part.
func partUse(t *ast.TableExpr) (mediaUse, bool) {
	var u mediaUse
	isPart := false
	for _, f := range t.Fields {
		k, ok := f.Key.(*ast.StringExpr)
		if !ok {
			continue
		}
		switch v := f.Value.(type) {
		case *ast.StringExpr:
			switch k.Value {
			case "type":
				u.kind, u.line = v.Value, v.Line()
			case "path":
				u.path = v.Value
			}
		case *ast.TableExpr:
			if k.Value == "synthetic" {
				u.synthetic = literalNumbers(v)
			}
		case *ast.NumberExpr:
			if k.Value == "max_bytes" {
				n, err := strconv.Atoi(v.Value)
				if err != nil || n < 1 {
					return u, false // the run's decoder names it
				}
				u.maxBytes = n
			}
		}
		if luaval.Contains(partSourceKeys, k.Value) {
			isPart = true
		}
	}
	return u, isPart && u.kind != ""
}

// literalNumbers are the fields of t that are number literals.
func literalNumbers(t *ast.TableExpr) map[string]float64 {
	out := map[string]float64{}
	for _, f := range t.Fields {
		k, kOK := f.Key.(*ast.StringExpr)
		v, vOK := f.Value.(*ast.NumberExpr)
		if !kOK || !vOK {
			continue
		}
		if n, err := strconv.ParseFloat(v.Value, 64); err == nil {
			out[k.Value] = n
		}
	}
	return out
}

// checkSynthetic checks a literal synthetic spec's sizes, as far as the
// source spells them out.
func checkSynthetic(u mediaUse) error {
	n := u.synthetic
	switch u.kind {
	case engine.PartImage:
		w, wOK := n["width"]
		h, hOK := n["height"]
		if !wOK || !hOK {
			return nil
		}
		return media.ImageSpec{Width: int(w), Height: int(h)}.Check()
	case engine.PartAudio:
		if sec, ok := n["seconds"]; ok {
			return media.AudioSpec{Seconds: sec}.Check()
		}
	}
	return nil
}

// checkMediaUses reports the first literal part of an unknown type, or
// whose file is missing or not of its type, naming the line and field.
func checkMediaUses(prog *api.Program, uses []mediaUse) error {
	path := prog.Path
	known := []string{engine.PartText, engine.PartImage, engine.PartAudio, engine.PartVideo}
	for _, u := range uses {
		if !luaval.Contains(known, u.kind) {
			return fmt.Errorf("%s:%d: content part: type: unknown part type %q (known: %s)", path, u.line, u.kind, strings.Join(known, ", "))
		}
		if u.synthetic != nil {
			if err := checkSynthetic(u); err != nil {
				return fmt.Errorf("%s:%d: %s part: synthetic: %w", path, u.line, u.kind, err)
			}
		}
		if u.path == "" || u.kind == engine.PartText {
			continue
		}
		it, err := media.Load(api.ResolveData(filepath.Dir(path), u.path), u.maxBytes)
		if err != nil {
			return fmt.Errorf("%s:%d: %s part: path: %w", path, u.line, u.kind, err)
		}
		if it.Kind != u.kind {
			return fmt.Errorf("%s:%d: %s part: path: %s: a %s file, not %s", path, u.line, u.kind, u.path, it.Format, u.kind)
		}
		api.NoteProgramFile(prog, u.path) // it travels with the script
	}
	return nil
}
