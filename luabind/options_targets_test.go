package luabind

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
)

// TestTargetsErrors: every malformed options.targets, options.balance and
// target choice is a compile error naming its path, before any load.
func TestTargetsErrors(t *testing.T) {
	const one = `vus = 1, duration = "1s"`
	for _, tc := range []struct{ name, options, want string }{
		{"not a table", `{ ` + one + `, targets = "a" }`, "options.targets: want a table of targets by name"},
		{"empty", `{ ` + one + `, targets = {} }`, "options.targets: no targets"},
		{"entry not a table", `{ ` + one + `, targets = { a = "http://x" } }`, "options.targets.a: want a target table"},
		{"bad name", `{ ` + one + `, targets = { ["a b"] = {} } }`, `target name "a b": use letters`},
		{"list without name", `{ ` + one + `, targets = { { base_url = "http://x/v1" } } }`, "options.targets[1].name: each target of a list needs a name"},
		{"two of one name", `{ ` + one + `, targets = { { name = "a" }, { name = "a" } } }`,
			`options.targets[2]: a second target named "a" (the first is options.targets[1])`},
		{"names differing in case", `{ ` + one + `, targets = { { name = "a" }, { name = "A" } } }`, `a second target named "A"`},
		{"zero weight", `{ ` + one + `, targets = { a = { weight = 0 } } }`, "options.targets.a.weight: must be > 0"},
		{"negative weight", `{ ` + one + `, targets = { a = { weight = -2 } } }`, "options.targets.a.weight: must be > 0"},
		{"unknown key", `{ ` + one + `, targets = { a = { base_ulr = "http://x/v1" } } }`, "options.targets.a.base_ulr: unknown key (did you mean base_url?)"},
		{"bad timeout", `{ ` + one + `, targets = { a = { timeout = 5 } } }`, "options.targets.a.timeout: 5 is not a duration"},
		{"balance unknown", `{ ` + one + `, targets = { a = {} }, balance = "round-robin" }`, `options.balance: "round-robin": want round_robin, random, weighted (did you mean round_robin?)`},
		{"balance without targets", `{ ` + one + `, balance = "random" }`, "options.balance: spreads requests across options.targets, which is not set"},
		{"scenario names an unknown target", `{ targets = { a = {}, b = {} }, scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s", target = "c" } } }`,
			`options.scenarios.s.target: no target named "c" (targets: a, b)`},
		{"scenario target without targets", `{ scenarios = { s = { executor = "constant-vus", exec = "chat", vus = 1, duration = "1s", target = "c" } } }`,
			`options.scenarios.s.target: "c": the scenario has one target`},
		{"threshold names an unknown target", `{ ` + one + `, targets = { a = {} }, thresholds = { ["ttft{target:b}.p99"] = "< 1s" } }`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(tc.options))
			_, err := Compile(path, Options{})
			if tc.want == "" {
				return // checked where thresholds are parsed (engine/threshold)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestTargetsInherit: each target is options.target with its own keys on
// top, sorted by name, weight 1 unless set; the list form reads the same.
func TestTargetsInherit(t *testing.T) {
	for _, targets := range []string{
		`{ b = { base_url = "http://b/v1", model = "mb", weight = 3 }, a = { base_url = "http://a/v1" } }`,
		`{ { name = "b", base_url = "http://b/v1", model = "mb", weight = 3 }, { name = "a", base_url = "http://a/v1" } }`,
	} {
		path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", balance = "weighted",
			target = { model = "shared", api_key = "k", ttft_timeout = "5s" }, targets = `+targets+` }`))
		s, err := Compile(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := s.Plan()
		if len(p.Targets) != 2 || p.Balance != plan.BalanceWeighted {
			t.Fatalf("targets %+v, balance %q", p.Targets, p.Balance)
		}
		a, b := p.Targets[0], p.Targets[1]
		if a.Name != "a" || a.BaseURL != "http://a/v1" || a.Model != "shared" || a.APIKey != "k" || a.Weight != 1 || a.TTFTTimeout.Seconds() != 5 {
			t.Errorf("a = %+v: want options.target's model, key and timeout, weight 1", a)
		}
		if b.Name != "b" || b.Model != "mb" || b.Weight != 3 || b.APIKey != "k" {
			t.Errorf("b = %+v: want its own model and weight, the shared key", b)
		}
	}
}

// TestRequestTarget: a request naming a target the plan does not have is
// a script error naming the targets, raised where the call is.
func TestRequestTarget(t *testing.T) {
	src := "local llm = require('llmload')\n" +
		`options = { vus = 1, duration = "1s", targets = { a = {}, b = {} } }` + "\n" +
		"function iteration(vu) llm.chat { messages = { { role = 'user', content = 'x' } }, target = 'c' } end\n"
	path := writeScript(t, "x.lua", src)
	_, err := Compile(path, Options{})
	if err == nil || !strings.Contains(err.Error(), `llm.chat: target: no target named "c" (targets: a, b)`) {
		t.Errorf("error = %v, want the dry run to name the unknown target", err)
	}
}
