package luabind

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestUnknownSetKeys(t *testing.T) {
	const head = "local llm = require(\"llmload\")\noptions = { vus = llm.param(\"vus\", 1), duration = llm.param(\"duration\", \"1s\") }\n"
	tests := []struct {
		name   string
		body   string
		params map[string]string
		want   string // "" means accepted
	}{
		{"known keys", "function iteration() end", map[string]string{"vus": "2", "duration": "2s"}, ""},
		{"typo", "function iteration() end", map[string]string{"duraton": "2s"},
			`s.lua reads this key (did you mean duration?); the keys it reads: duration, vus`},
		{"far off", "function iteration() end", map[string]string{"zzz": "1"}, "s.lua reads this key; the keys it reads: duration, vus"},
		{"read only in an iteration", "function iteration() local n = llm.param(\"name\") end", map[string]string{"name": "x"}, ""},
		{"read in a nested function", "local function f() return llm.param(\"deep\", 1) end\nfunction iteration() f() end",
			map[string]string{"deep": "2"}, ""},
		{"computed key: lenient", "function iteration(vu) local v = llm.param(\"k\" .. vu.id) end", map[string]string{"anything": "1"}, ""},
		{"param as a value: lenient", "local p = llm.param\nfunction iteration() p(\"x\") end", map[string]string{"anything": "1"}, ""},
		{"other module name", "local m = require(\"llmload\")\nfunction iteration() m.param(\"model_size\") end",
			map[string]string{"model_size": "7b"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "s.lua", head+tt.body)
			_, err := Compile(path, Options{Params: tt.params, Env: func(string) (string, bool) { return "", false }})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("Compile err = %v, want a ParamError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestUnknownSetKeyWhenTheScriptReadsNone(t *testing.T) {
	path := writeScript(t, "s.lua", "options = { vus = 1, duration = \"1s\" }\nfunction iteration() end")
	_, err := Compile(path, Options{Params: map[string]string{"vus": "2"}})
	if err == nil || !strings.Contains(err.Error(), "it reads no parameters") {
		t.Errorf("err = %v, want it to say the script reads no parameters", err)
	}
}

func TestScanParams(t *testing.T) {
	lit := func(key string, line int, def string) ParamRead {
		return ParamRead{Key: key, Line: line, Default: def, DefaultKind: DefaultLiteral}
	}
	tests := []struct {
		name    string
		src     string
		reads   []ParamRead
		dynamic int
	}{
		{"literal defaults", "local llm = require(\"llmload\")\nlocal d = llm.param(\"duration\", \"4s\")\n" +
			"local n = llm.param(\"vus\", 4) + llm.param(\"ratio\", 0.10)\nlocal b = llm.param(\"on\", true)\nlocal m = llm.param(\"lag\", -1)",
			[]ParamRead{lit("duration", 2, "4s"), lit("vus", 3, "4"), lit("ratio", 3, "0.10"), lit("on", 4, "true"), lit("lag", 5, "-1")}, 0},
		{"empty string", `local u = llm.param("metrics_url", "")`, []ParamRead{lit("metrics_url", 1, "")}, 0},
		{"no default, nil default", "local a = llm.param(\"a\")\nlocal b = llm.param(\"b\", nil)",
			[]ParamRead{{Key: "a", Line: 1}, {Key: "b", Line: 2}}, 0},
		{"computed default", "local x = 3\nlocal a = llm.param(\"a\", x * 2)",
			[]ParamRead{{Key: "a", Line: 2, DefaultKind: DefaultComputed}}, 0},
		{"inside a function, nested in a call", "function it()\n  f(llm.param(\"k\", llm.param(\"inner\", 1)))\nend",
			[]ParamRead{{Key: "k", Line: 2, DefaultKind: DefaultComputed}, lit("inner", 2, "1")}, 0},
		{"computed key", "local a = llm.param(\"a\", 1)\nlocal b = llm.param(\"k\" .. a)", []ParamRead{lit("a", 1, "1")}, 2},
		{"param as a value", "local p = llm.param\n", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ScanParams("s.lua", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Reads, tt.reads) || got.Dynamic != tt.dynamic {
				t.Errorf("ScanParams = %+v, dynamic %d; want %+v, dynamic %d", got.Reads, got.Dynamic, tt.reads, tt.dynamic)
			}
		})
	}
}

func TestScanParamsKeysAndErrors(t *testing.T) {
	p, err := ScanParams("s.lua", []byte("local a = llm.param(\"vus\", 1)\nlocal b = llm.param(\"duration\", \"1s\")\nlocal c = llm.param(\"vus\", 2)"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Keys(), []string{"duration", "vus"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	for src, want := range map[string]string{
		"local a = \nlocal b = llm.param(\"x\")":       "s.lua:2: ",
		"options = { scenarios = { a = {}, a = {} } }": "s.lua:1: ",
	} {
		if _, err := ScanParams("s.lua", []byte(src)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ScanParams(%q) err = %v, want it to start with %q", src, err, want)
		}
	}
}
