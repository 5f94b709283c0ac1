package luabind

import (
	"strings"
	"testing"
)

func TestDuplicateKeys(t *testing.T) {
	const fns = "\nfunction chat(vu) end\n"
	tests := []struct {
		name, src string
		want      []string // "" entries: none; line-qualified messages otherwise
	}{
		{"scenario twice", `options = {
  scenarios = {
    chat = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s" },
    other = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s" },
    chat = { executor = "constant-vus", exec = "chat", vus = 2, duration = "1s" },
  },
}` + fns, []string{`:5: options.scenarios: scenario "chat" defined twice (first at line 3)`}},
		{"bracket and name forms", `options = { scenarios = {
  ["a b"] = {},
  ["a b"] = {},
  chat = {},
  ["chat"] = {},
} }` + fns, []string{`:3: options.scenarios: scenario "a b" defined twice (first at line 2)`,
			`:5: options.scenarios: scenario "chat" defined twice (first at line 4)`}},
		{"assignment form", `options = {}
options.scenarios = {
  s = {},
  s = {},
}` + fns, []string{`:4: options.scenarios: scenario "s" defined twice (first at line 3)`}},
		{"inside a function", `local function make()
  return { scenarios = { a = {}, a = {} } }
end
options = make()` + fns, []string{`:2: options.scenarios: scenario "a" defined twice (first at line 2)`}},
		{"threshold twice", `options = { vus = 1, duration = "1s",
  thresholds = {
    ["ttft.p99"] = "< 1s",
    checks = "rate > 0.9",
    ["ttft.p99"] = "< 2s",
  } }` + fns, []string{`:5: options.thresholds: "ttft.p99" defined twice (first at line 3)`}},
		{"duplicate elsewhere is fine", `local t = { a = 1, a = 2 }
options = { scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s",
  tags = { x = "1", x = "2" } } } }` + fns, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "s.lua", tt.src)
			_, err := Compile(path, Options{})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile succeeded, want %q", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if got, want := len(lines), len(tt.want); got != want {
				t.Fatalf("error has %d lines, want %d: %q", got, want, err)
			}
			for i, w := range tt.want {
				if got, want := lines[i], path+w; got != want {
					t.Errorf("line %d = %q, want %q", i, got, want)
				}
			}
		})
	}
}
