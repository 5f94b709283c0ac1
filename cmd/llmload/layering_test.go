package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/llmload/llmload"

// layerRow is one row of docs/architecture.md's table: | layer | `package` | job |.
var layerRow = regexp.MustCompile("^\\| (\\d+) \\| `([^`]+)` \\| (.+) \\|$")

// readLayers reads the intended layering from the document that states
// it, so that the rule and its description cannot drift apart.
func readLayers(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := layerRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if _, dup := layers[m[2]]; dup {
			t.Errorf("%s:%d: %s listed twice", path, line, m[2])
		}
		layers[m[2]] = n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(layers) == 0 {
		t.Fatalf("%s: no layer table found", path)
	}
	return layers
}

// moduleImports lists each package of the module with the module's
// packages it imports directly (tests excluded: a test may reach across).
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], modulePath+"/")
		pkgs[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				pkgs[pkg] = append(pkgs[pkg], rel)
			} else if imp == modulePath {
				pkgs[pkg] = append(pkgs[pkg], ".")
			}
		}
	}
	// The module's root has no package; "engine" is the seams package.
	return pkgs
}

// TestLayering holds the packages to the layering docs/architecture.md
// states: every import goes to a lower layer, nothing in the engine knows
// Lua, and only cmd/llmload wires a script to a run.
func TestLayering(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	layers := readLayers(t, filepath.Join(root, "docs", "architecture.md"))
	pkgs := moduleImports(t, root)
	for _, v := range checkLayering(layers, pkgs) {
		t.Error(v)
	}
}

// checkLayering returns each way pkgs break layers.
func checkLayering(layers map[string]int, pkgs map[string][]string) []string {
	var bad []string
	for pkg := range layers {
		if _, ok := pkgs[pkg]; !ok {
			bad = append(bad, fmt.Sprintf("docs/architecture.md lists %s, which is not a package", pkg))
		}
	}
	for pkg, imports := range pkgs {
		layer, ok := layers[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is not in docs/architecture.md's layer table: give it a layer and its one job", pkg))
			continue
		}
		engineSide := pkg == "engine" || strings.HasPrefix(pkg, "engine/")
		var script, run bool
		for _, imp := range imports {
			il, known := layers[imp]
			switch {
			case !known:
				continue // reported as a package of its own
			case il >= layer:
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports go to lower layers only", pkg, layer, imp, il))
			}
			if engineSide && (imp == "luabind" || strings.HasPrefix(imp, "luabind/")) {
				bad = append(bad, fmt.Sprintf("%s imports %s: nothing in the engine knows Lua", pkg, imp))
			}
			script = script || imp == "luabind"
			run = run || imp == "engine/run"
		}
		if script && run && pkg != "cmd/llmload" {
			bad = append(bad, fmt.Sprintf("%s imports both luabind and engine/run: only cmd/llmload wires a script to a run", pkg))
		}
	}
	return bad
}

// TestCheckLayeringCatches: the checker itself finds each kind of break.
func TestCheckLayeringCatches(t *testing.T) {
	layers := map[string]int{"engine/plan": 0, "engine": 1, "engine/metrics": 2, "luabind": 7, "engine/run": 8,
		"engine/merge": 9, "cmd/llmload": 10}
	tests := []struct {
		name string
		pkgs map[string][]string
		want string
	}{
		{"upward", map[string][]string{"engine": {"engine/metrics"}}, "imports go to lower layers only"},
		{"sideways", map[string][]string{"engine/metrics": {"engine/metrics"}}, "imports go to lower layers only"},
		{"engine knows Lua", map[string][]string{"engine/merge": {"luabind"}}, "nothing in the engine knows Lua"},
		{"second wiring", map[string][]string{"engine/merge": {"luabind", "engine/run"}}, "only cmd/llmload wires"},
		{"unlisted", map[string][]string{"engine/new": nil}, "not in docs/architecture.md's layer table"},
		{"listed, gone", map[string][]string{}, "which is not a package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := map[string][]string{}
			for pkg := range layers {
				all[pkg] = nil
			}
			if tt.name == "listed, gone" {
				delete(all, "engine/merge")
			}
			for pkg, imps := range tt.pkgs {
				all[pkg] = imps
			}
			found := false
			for _, v := range checkLayering(layers, all) {
				found = found || strings.Contains(v, tt.want)
			}
			if !found {
				t.Errorf("no %q in %v", tt.want, checkLayering(layers, all))
			}
		})
	}
	if bad := checkLayering(layers, map[string][]string{"engine/plan": nil, "engine": {"engine/plan"},
		"engine/metrics": {"engine"}, "luabind": {"engine"}, "engine/run": {"engine/metrics"},
		"engine/merge": {"engine/run"}, "cmd/llmload": {"luabind", "engine/run"}}); len(bad) > 0 {
		t.Errorf("a sound graph: %v", bad)
	}
}
