package luabind

import (
	"testing"

	"github.com/llmload/llmload/luabind/api"
	lua "github.com/yuin/gopher-lua"
)

// TestVUKeepsOptionsOnlyWhenRead: a VU drops the options table after its
// top level unless a function names it, however it does.
func TestVUKeepsOptionsOnlyWhenRead(t *testing.T) {
	const head = "options = { vus = 1, duration = \"1s\", seed = 7 }\nout = {}\n"
	tests := []struct {
		name, body, want string
		kept             bool
	}{
		{"not read", "function iteration(vu) end\nfunction look(vu) out.v = \"dropped\" end\n", "dropped", false},
		{"read as a global", "function iteration(vu) end\nfunction look(vu) out.v = options.seed end\n", "7", true},
		{"read through _G", "function iteration(vu) end\nfunction look(vu) out.v = _G[\"options\"].seed end\n", "7", true},
		{"read in a nested function", "function iteration(vu) end\nfunction look(vu) local f = function() return options.seed end out.v = f() end\n", "7", true},
		{"read at the top level only", "local note = options.seed\nfunction iteration(vu) end\nfunction look(vu) out.v = note end\n", "7", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVU(t, mustCompile(t, writeScript(t, "o.lua", head+tt.body), Options{}), api.RunnerConfig{}, 1)
			mustRun(t, v, "look")
			if got := out(t, v, "v").String(); got != tt.want {
				t.Errorf("out.v = %q, want %q", got, tt.want)
			}
			if kept := v.L.GetGlobal("options") != lua.LNil; kept != tt.kept {
				t.Errorf("options kept: %v", kept)
			}
		})
	}
}
