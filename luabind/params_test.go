package luabind

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownSetKeys(t *testing.T) {
	const head = "local llm = require(\"llmload\")\noptions = { vus = llm.param(\"vus\", 1), duration = llm.param(\"stage_duration\", \"1s\") }\n"
	tests := []struct {
		name   string
		body   string
		params map[string]string
		want   string // "" means accepted
	}{
		{"known keys", "function iteration() end", map[string]string{"vus": "2", "stage_duration": "2s"}, ""},
		{"typo", "function iteration() end", map[string]string{"stage_duraton": "2s"},
			`s.lua reads this key (did you mean stage_duration?); the keys it reads: stage_duration, vus`},
		{"far off", "function iteration() end", map[string]string{"zzz": "1"}, "s.lua reads this key; the keys it reads: stage_duration, vus"},
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
