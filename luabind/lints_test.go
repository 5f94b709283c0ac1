package luabind

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/threshold"
)

// lintsOf compiles src, runs it dry and judges its plan, as llmload check
// does.
func lintsOf(t *testing.T, src string) []lint.Lint {
	t.Helper()
	s := mustCompile(t, writeScript(t, "s.lua", src), Options{})
	d, err := s.DryRun(testContext(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Plan()
	var set threshold.Set
	for _, spec := range p.Thresholds {
		th, err := threshold.Parse(spec, threshold.KnownOf(p))
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, th)
	}
	return lint.Check(lint.Input{Plan: p, Thresholds: set, Profiles: d.Profiles, Sampled: d.Tallies(), Ignore: s.LintIgnores()})
}

// scenario is a small Lua scenario whose options and request are spliced in.
func scenario(options, request string) string {
	return `local llm = require("llmload")
local pool = llm.pool { "What is a hash map?", "Name three primes.", "Translate hello into French." }
options = {` + options + `}
function iteration(vu)
  llm.chat { ` + request + ` }
end
`
}

const (
	goodOptions = `warmup = { requests = 2 }, vus = 2, duration = "30s"`
	goodRequest = `messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, pool:next()) } },
    max_tokens = 64, temperature = 0.7, seed = llm.rand_int()`
)

// TestLintScenarios: each lint fires on a small scenario built to trigger
// it, and only there; the one that follows every practice gets only the
// summary's note about its stage length.
func TestLintScenarios(t *testing.T) {
	tests := []struct {
		name, options, request string
		want                   string // "severity id" of every lint, in order
	}{
		{"good practice", goodOptions, goodRequest, "info short-stage"},
		{"no warmup", `vus = 2, duration = "30s"`, goodRequest, "warning no-warmup; info short-stage"},
		{"no max_tokens", goodOptions, strings.Replace(goodRequest, "max_tokens = 64,", "", 1),
			"warning no-max-tokens; info short-stage"},
		{"a pool without a unique prefix", goodOptions,
			`messages = { { role = "user", content = pool:next() } }, max_tokens = 64, temperature = 0.7, seed = llm.rand_int()`,
			"warning repeated-prefix; info short-stage"},
		{"temperature 0 on repeated prompts", goodOptions,
			`messages = { { role = "user", content = pool:next() } }, max_tokens = 64, temperature = 0`,
			"warning repeated-prefix; warning repeated-sampling; info short-stage"},
		{"one fixed seed on repeated prompts", goodOptions,
			`messages = { { role = "user", content = pool:next() } }, max_tokens = 64, seed = 42`,
			"warning repeated-prefix; warning repeated-sampling; info short-stage"},
		{"temperature 0 on unique prompts", goodOptions, strings.Replace(goodRequest, "temperature = 0.7", "temperature = 0", 1),
			"info short-stage"},
		{"a p99 threshold on a short stage", goodOptions + `, thresholds = { ["ttft.p99"] = "< 1s" }`, goodRequest,
			"warning short-stage; info short-stage"},
		{"ignored with a reason", `lints = { ignore = { ["no-warmup"] = "the server was warmed by the previous job" } },
			vus = 2, duration = "30s"`, goodRequest, "warning no-warmup ignored; info short-stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := lintsOf(t, scenario(tt.options, tt.request))
			var got []string
			for _, l := range ls {
				s := string(l.Severity) + " " + l.ID
				if l.Ignored != "" {
					s += " ignored"
				}
				got = append(got, s)
			}
			if strings.Join(got, "; ") != tt.want {
				t.Errorf("lints = %q, want %q\n%+v", strings.Join(got, "; "), tt.want, ls)
			}
		})
	}
}

// TestLintScenarioDryRunFails: a scenario whose iterations cannot run on
// canned answers is told so, and its requests are left to the run.
func TestLintScenarioDryRunFails(t *testing.T) {
	ls := lintsOf(t, `local llm = require("llmload")
options = { warmup = { requests = 1 }, vus = 1, duration = "1m" }
function iteration(vu)
  local res = llm.chat { messages = { { role = "user", content = "a number" } } }
  local n = tonumber(res.text) + 1
end
`)
	if len(ls) == 0 || ls[0].ID != lint.DryRun || !strings.Contains(ls[0].Message, "s.lua:5:") {
		t.Errorf("lints = %+v, want the dry run's stop first", ls)
	}
	for _, l := range ls {
		if l.ID == lint.NoMaxTokens {
			t.Errorf("judged requests the dry run did not finish building? %+v", l)
		}
	}
}

func TestLintOptionsErrors(t *testing.T) {
	tests := []struct{ name, lints, want string }{
		{"unknown key", `{ ignor = {} }`, "options.lints.ignor: unknown key (did you mean ignore?)"},
		{"not a table", `{ ignore = "no-warmup" }`, "options.lints.ignore: expected a table of lint ids and reasons"},
		{"misspelt id", `{ ignore = { ["no-warmpu"] = "why" } }`,
			`options.lints.ignore["no-warmpu"]: unknown lint "no-warmpu" (did you mean no-warmup?) (lints: dry-run, no-max-tokens, no-warmup, repeated-prefix, repeated-sampling, short-stage, start-burst)`},
		{"a list", `{ ignore = { "no-warmup" } }`, `options.lints.ignore[1]: expected ["lint-id"] = "reason", got a number key`},
		{"no reason", `{ ignore = { ["no-warmup"] = true } }`, `options.lints.ignore["no-warmup"]: needs a reason`},
		{"empty reason", `{ ignore = { ["no-warmup"] = "  " } }`, `options.lints.ignore["no-warmup"]: needs a reason`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "s.lua", `options = { vus = 1, duration = "1s", lints = `+tt.lints+` }
function iteration() end`)
			_, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
	s := mustCompile(t, writeScript(t, "s.lua", `options = { vus = 1, duration = "1s",
  lints = { ignore = { ["short-stage"] = " a demo " } } }
function iteration() end`), Options{})
	if got := s.LintIgnores(); len(got) != 1 || got["short-stage"] != "a demo" {
		t.Errorf("LintIgnores = %v", got)
	}
	if got := mustCompile(t, writeScript(t, "s.lua", scenario(goodOptions, goodRequest)), Options{}).LintIgnores(); got != nil {
		t.Errorf("LintIgnores without options.lints = %v", got)
	}
}
