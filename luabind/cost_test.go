package luabind

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
)

func TestCostOptions(t *testing.T) {
	tests := []struct {
		name, cost string
		want       plan.Cost
	}{
		{"prices and a budget", `{ input_per_mtok = 3, output_per_mtok = 15, cached_input_per_mtok = 0.3, currency = "EUR", budget = 25 }`,
			plan.Cost{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, Currency: "EUR", Budget: 25}},
		{"cached defaults to the input price, currency to USD", `{ input_per_mtok = 0.5, output_per_mtok = 1.5 }`,
			plan.Cost{InputPerMTok: 0.5, OutputPerMTok: 1.5, CachedInputPerMTok: 0.5, Currency: "USD"}},
		{"a free input", `{ input_per_mtok = 0, output_per_mtok = 2, budget = 1 }`,
			plan.Cost{OutputPerMTok: 2, Currency: "USD", Budget: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", cost = `+tt.cost+` }`))
			s, err := Compile(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Plan().Cost; got != tt.want {
				t.Errorf("cost = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCostOptionsErrors(t *testing.T) {
	tests := []struct {
		name, cost, want string
	}{
		{"a budget with no price", `{ budget = 25 }`,
			"options.cost.budget: spend cannot be estimated without prices: set options.cost.input_per_mtok and output_per_mtok (per million tokens, in options.cost.currency)"},
		{"no prices", `{ currency = "USD" }`, "options.cost: no prices: set input_per_mtok and output_per_mtok"},
		{"input price missing", `{ output_per_mtok = 15 }`, "options.cost.input_per_mtok: required with output_per_mtok"},
		{"output price missing", `{ input_per_mtok = 3 }`, "options.cost.output_per_mtok: required with input_per_mtok"},
		{"negative price", `{ input_per_mtok = -3, output_per_mtok = 15 }`, "options.cost.input_per_mtok: must be ≥ 0, got -3"},
		{"NaN price", `{ input_per_mtok = 3, output_per_mtok = 0/0 }`, "options.cost.output_per_mtok: must be a finite number"},
		{"negative cached price", `{ input_per_mtok = 3, output_per_mtok = 15, cached_input_per_mtok = -1 }`,
			"options.cost.cached_input_per_mtok: must be ≥ 0, got -1"},
		{"price not a number", `{ input_per_mtok = "3", output_per_mtok = 15 }`, "options.cost.input_per_mtok: expected number, got string"},
		{"unknown key", `{ input_per_mtok = 3, output_per_mtok = 15, budjet = 25 }`, "options.cost.budjet: unknown key (did you mean budget?)"},
		{"unknown price key", `{ input_per_mtok = 3, ouput_per_mtok = 15 }`, "options.cost.ouput_per_mtok: unknown key (did you mean output_per_mtok?)"},
		{"lower-case currency", `{ input_per_mtok = 3, output_per_mtok = 15, currency = "usd" }`,
			`options.cost.currency: "usd": want a 3-letter ISO 4217 code in capitals (did you mean USD?)`},
		{"currency symbol", `{ input_per_mtok = 3, output_per_mtok = 15, currency = "$" }`,
			`options.cost.currency: "$": want a 3-letter ISO 4217 code such as USD, EUR or CNY`},
		{"zero budget", `{ input_per_mtok = 3, output_per_mtok = 15, budget = 0 }`, "options.cost.budget: must be > 0, got 0"},
		{"negative budget", `{ input_per_mtok = 3, output_per_mtok = 15, budget = -5 }`, "options.cost.budget: must be > 0, got -5"},
		{"a budget at zero prices", `{ input_per_mtok = 0, output_per_mtok = 0, budget = 5 }`,
			"options.cost.budget: every price is 0, so nothing is spent and the budget can never be reached"},
		{"not a table", `25`, "options.cost: expected table, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", cost = `+tt.cost+` }`))
			_, err := Compile(path, Options{})
			if err == nil {
				t.Fatalf("Compile succeeded, want error containing %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", got, tt.want)
			}
		})
	}
}
