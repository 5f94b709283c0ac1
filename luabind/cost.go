package luabind

import (
	"regexp"
	"strings"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// costKeys are the keys of options.cost.
var costKeys = []string{"input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "currency", "budget"}

// currencyCode is an ISO 4217 code's shape.
var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// cost reads options.cost = { input_per_mtok =, output_per_mtok =,
// cached_input_per_mtok = ?, currency = ?, budget = ? }: prices per
// million tokens, which must be finite and ≥ 0, and both the input and
// the output price, since a missing one would count that part as free;
// cached_input_per_mtok defaults to input_per_mtok (no discount for
// cache hits), currency to USD. A budget needs prices to estimate the
// spend it caps, and a nonzero one to ever be reached.
func (d *decoder) cost(path string, v lua.LValue) plan.Cost {
	f := d.Record(path, v, costKeys)
	if f == nil {
		return plan.Cost{}
	}
	var c plan.Cost
	prices := 0
	price := func(key string, dst *float64) bool {
		if x := f[key]; x != nil {
			*dst = d.Number(luaval.Child(path, key), x, 0)
			prices++
			return true
		}
		return false
	}
	hasIn := price("input_per_mtok", &c.InputPerMTok)
	hasOut := price("output_per_mtok", &c.OutputPerMTok)
	if !price("cached_input_per_mtok", &c.CachedInputPerMTok) {
		c.CachedInputPerMTok = c.InputPerMTok
	}
	if b := f["budget"]; b != nil {
		c.Budget = d.PositiveNumber(luaval.Child(path, "budget"), b)
	}
	if cur := f["currency"]; cur != nil {
		c.Currency = d.currency(luaval.Child(path, "currency"), cur)
	}
	d.checkPrices(path, c, prices, hasIn, hasOut, f["budget"] != nil)
	if c.Currency == "" {
		c.Currency = plan.DefaultCurrency
	}
	return c
}

// checkPrices reports prices that cannot estimate a spend: none at all,
// one side missing, or a budget that zero prices would never reach.
func (d *decoder) checkPrices(path string, c plan.Cost, prices int, hasIn, hasOut, budget bool) {
	const per = "(per million tokens, in options.cost.currency)"
	switch {
	case prices == 0 && budget:
		d.Errorf(luaval.Child(path, "budget"), "spend cannot be estimated without prices: set options.cost.input_per_mtok and output_per_mtok %s", per)
	case prices == 0:
		d.Errorf(path, "no prices: set input_per_mtok and output_per_mtok %s", per)
	case !hasIn:
		d.Errorf(luaval.Child(path, "input_per_mtok"), "required with output_per_mtok: without it every prompt token would count as free (set 0 if they are)")
	case !hasOut:
		d.Errorf(luaval.Child(path, "output_per_mtok"), "required with input_per_mtok: without it every generated token would count as free (set 0 if they are)")
	case budget && !c.Priced():
		d.Errorf(luaval.Child(path, "budget"), "every price is 0, so nothing is spent and the budget can never be reached")
	}
}

// currency reads an ISO 4217 code: three capital letters.
func (d *decoder) currency(path string, v lua.LValue) string {
	s := d.Str(path, v)
	if _, isStr := v.(lua.LString); !isStr || currencyCode.MatchString(s) {
		return s
	}
	if up := strings.ToUpper(strings.TrimSpace(s)); currencyCode.MatchString(up) {
		d.Errorf(path, "%q: want a 3-letter ISO 4217 code in capitals (did you mean %s?)", s, up)
		return ""
	}
	d.Errorf(path, "%q: want a 3-letter ISO 4217 code such as USD, EUR or CNY", s)
	return ""
}
