package main

import (
	"strings"
	"testing"
)

// TestCheckPrintsTheWorstCaseSpend holds check's worst case of a small
// plan against a hand computation: 2 warmup requests and 10 shared
// iterations, each one request of "hello world" (2 cl100k_base tokens)
// and 100 max_tokens, at 2 and 10 per million tokens: (2×2 + 100×10) /
// 10⁶ = 0.001004 a request, 12 of them 0.012048.
func TestCheckPrintsTheWorstCaseSpend(t *testing.T) {
	path := writeScript(t, `
local llm = require("llmload")
options = {
  warmup = { requests = 2 },
  cost = { input_per_mtok = 2, output_per_mtok = 10, budget = 1 },
  scenarios = { s = { executor = "shared-iterations", exec = "chat", vus = 2, iterations = 10 } },
}
function chat(vu)
  llm.chat { messages = { { role = "user", content = "hello world" } }, max_tokens = 100 }
end
`)
	stdout, stderr, code := runInProcess(t, "check", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"spend (options.cost): input 2, output 10 USD per million tokens; budget 1 USD",
		"warmup: ≤ 2 iterations (options.warmup.requests) × ≤ 0.00100 USD = ≤ 0.00201 USD",
		"s: ≤ 10 iterations (iterations) × ≤ 0.00100 USD = ≤ 0.0100 USD",
		"each: 1 request, ≤ 2 prompt tokens + 100 max_tokens ≤ 0.00100 USD",
		"worst case: ≤ 0.0120 USD",
		"the budget (1 USD) is above the worst case: it cannot stop this run",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, stdout)
		}
	}
}

// TestCheckExplainsPricesWithoutBudget: prices alone are fine, and check
// says the spend is estimated, not capped; a closed model's worst case is
// unbounded, with an estimate; a budget with no price is refused.
func TestCheckExplainsPricesWithoutBudget(t *testing.T) {
	path := writeScript(t, `
local llm = require("llmload")
options = { vus = 4, duration = "30s", cost = { input_per_mtok = 1, output_per_mtok = 4 } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hello world" } }, max_tokens = 50 }
end
`)
	stdout, stderr, code := runInProcess(t, "check", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"spend is estimated, not capped: set options.cost.budget to stop the run at a cap",
		"default: unbounded (closed model: as many requests as the server answers in 30s with up to 4 VUs); ≈ 120 iterations",
		"worst case: unbounded",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, stdout)
		}
	}
	refused := writeScript(t, `
local llm = require("llmload")
options = { vus = 1, duration = "1s", cost = { budget = 25 } }
function iteration(vu) end
`)
	stdout, stderr, code = runInProcess(t, "check", refused)
	if code != exitError || !strings.Contains(stderr, "options.cost.budget: spend cannot be estimated without prices") {
		t.Errorf("a budget with no price: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
