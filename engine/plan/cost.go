package plan

// DefaultCurrency is the currency of prices that name none.
const DefaultCurrency = "USD"

// Cost is what a scenario's tokens cost (options.cost), so that a run can
// estimate what it spends and stop at a budget. Prices are per million
// tokens of Currency; the zero Cost prices nothing and caps nothing.
type Cost struct {
	InputPerMTok  float64
	OutputPerMTok float64
	// CachedInputPerMTok prices the prompt tokens the server served from
	// its prefix cache (Result.CachedTokens); luabind sets it to
	// InputPerMTok when the script gives none.
	CachedInputPerMTok float64
	Currency           string // an ISO 4217 code; "" means DefaultCurrency
	// Budget stops the run before its estimated spend would pass it;
	// 0 caps nothing.
	Budget float64
}

// Priced reports whether any token has a price: without one there is no
// spend to estimate.
func (c Cost) Priced() bool {
	return c.InputPerMTok > 0 || c.OutputPerMTok > 0 || c.CachedInputPerMTok > 0
}

// CurrencyCode is Currency, or DefaultCurrency when it is empty.
func (c Cost) CurrencyCode() string {
	if c.Currency == "" {
		return DefaultCurrency
	}
	return c.Currency
}
