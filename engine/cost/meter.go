package cost

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// Meter is a run's running spend: what ended requests cost, and what the
// requests in flight may still cost — the worst case each reserved when
// it was sent, replaced by its actual cost when it ends. With a budget it
// refuses to send a request whose worst case would take the committed
// spend (spent plus reserved) over the budget, and then every request
// after it, and tells its stop function once. So, as long as every
// reservation bounds its request, the spend never passes the budget; it
// stops at most the in-flight requests' reservations short of it. Safe
// for concurrent use.
type Meter struct {
	cost   plan.Cost
	budget float64
	count  Counter
	onStop func(*BudgetReached)

	mu        sync.Mutex
	spent     float64
	reserved  float64 // worst cases of the requests in flight
	inFlight  int
	maxOutput int     // the longest answer so far: an unbounded request's reservation
	maxHold   float64 // the largest reservation: one request's worst case
	unbounded int64   // requests sent with nothing bounding their answer
	refused   int64
	stop      *BudgetReached
	ledgers   map[ledgerKey]*Ledger
	order     []*Ledger
	life      Ledger
	inputFrom map[string]int64
	outFrom   map[string]int64
}

// Option configures a Meter.
type Option func(*Meter)

// WithBudget caps the spend at budget (≤ 0: no cap) and calls onStop,
// once, when the meter first refuses a request or its estimate reaches
// the budget; onStop may be nil.
func WithBudget(budget float64, onStop func(*BudgetReached)) Option {
	return func(m *Meter) { m.budget, m.onStop = max(budget, 0), onStop }
}

// WithCounter counts the prompt of a request whose answer did not say,
// instead of billing its InputBound.
func WithCounter(count Counter) Option { return func(m *Meter) { m.count = count } }

// NewMeter returns a meter at c's prices, capped at c.Budget unless an
// option says otherwise.
func NewMeter(c plan.Cost, opts ...Option) *Meter {
	m := &Meter{cost: c, budget: max(c.Budget, 0), ledgers: map[ledgerKey]*Ledger{},
		inputFrom: map[string]int64{}, outFrom: map[string]int64{}}
	m.life.key.stage = LifecycleStage
	for _, o := range opts {
		o(m)
	}
	return m
}

// LifecycleStage labels the requests sent outside any iteration: by the
// script's setup() and teardown().
const LifecycleStage = "setup/teardown"

// BudgetReached is the cause of a run the budget stopped.
type BudgetReached struct {
	Budget   float64
	Currency string
	// Committed is the spend, plus the worst case of the requests in
	// flight, when the meter stopped.
	Committed float64
	// Next is the worst case of the request refused, 0 when the estimate
	// of ended requests itself reached the budget.
	Next     float64
	InFlight int
}

// Error says the budget stopped the run, and why then.
func (b *BudgetReached) Error() string {
	if b.Next == 0 {
		return fmt.Sprintf("spend budget reached: an estimated %s %s of %s %s", Money(b.Committed), b.Currency, Amount(b.Budget), b.Currency)
	}
	return fmt.Sprintf("spend budget reached: %s %s committed (spent, and the worst case of %s in flight) of %s %s; the next request could cost up to %s %s more",
		Money(b.Committed), b.Currency, requests(b.InFlight), Amount(b.Budget), b.Currency, Money(b.Next), b.Currency)
}

func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// Hold is one request's reservation.
type Hold struct{ worst float64 }

// Reserve reserves req's worst case — InputBound prompt tokens and
// OutputBound output tokens, or the longest answer seen so far when
// nothing bounds it — and reports whether req may be sent: false once
// the budget has stopped the meter, or when the reservation would take
// the committed spend over the budget (which stops it).
func (m *Meter) Reserve(req *engine.ChatRequest) (Hold, bool) {
	in := InputBound(req)
	out, bounded := OutputBound(req)
	m.mu.Lock()
	if !bounded {
		out = m.maxOutput
	}
	h := Hold{Worst(m.cost, in, out)}
	if m.stop != nil {
		m.refused++
		m.mu.Unlock()
		return Hold{}, false
	}
	if m.budget > 0 && m.spent+m.reserved+h.worst > m.budget {
		m.refused++
		stop := m.stopLocked(h.worst)
		m.mu.Unlock()
		m.notify(stop)
		return Hold{}, false
	}
	m.reserved += h.worst
	m.inFlight++
	m.maxHold = max(m.maxHold, h.worst)
	if !bounded {
		m.unbounded++
	}
	m.mu.Unlock()
	return h, true
}

// stopLocked stops the meter; next is the refused request's worst case.
func (m *Meter) stopLocked(next float64) *BudgetReached {
	m.stop = &BudgetReached{Budget: m.budget, Currency: m.cost.CurrencyCode(), Committed: m.spent + m.reserved,
		Next: next, InFlight: m.inFlight}
	return m.stop
}

func (m *Meter) notify(stop *BudgetReached) {
	if m.onStop != nil {
		m.onStop(stop)
	}
}

// Settle releases h, the reservation of req, and books res, its result,
// in l (nil: LifecycleStage) at what UsageOf says it is billed for.
func (m *Meter) Settle(l *Ledger, h Hold, req *engine.ChatRequest, res *engine.Result) {
	u := UsageOf(res, req, m.count)
	p := Price(m.cost, u)
	if l == nil {
		l = &m.life
	}
	m.mu.Lock()
	m.inFlight--
	m.reserved -= h.worst
	if m.inFlight == 0 {
		m.reserved = 0 // no rounding residue outlives the requests
	}
	m.spent += p
	if res != nil && !res.NotSent {
		m.book(l, u, p)
	}
	var stop *BudgetReached
	if m.budget > 0 && m.stop == nil && m.spent >= m.budget {
		stop = m.stopLocked(0)
	}
	m.mu.Unlock()
	if stop != nil {
		m.notify(stop)
	}
}

// book adds one sent request to l and to the source counts.
func (m *Meter) book(l *Ledger, u Usage, p float64) {
	l.requests++
	if !u.Billed {
		l.unbilled++
		return
	}
	l.input += int64(u.Input)
	l.cached += int64(u.Cached)
	l.output += int64(u.Output)
	l.spend += p
	if u.FromUsage() {
		l.fromUsage++
	}
	m.maxOutput = max(m.maxOutput, u.Output)
	m.inputFrom[u.InputFrom]++
	if u.OutputFrom != "" {
		m.outFrom[u.OutputFrom]++
	}
}

// Spent is the estimated spend of the requests that have ended.
func (m *Meter) Spent() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent
}

// Stopped is what stopped the meter, nil while it sends.
func (m *Meter) Stopped() *BudgetReached {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stop
}

// Ledger is the spend of one stage of one scenario (warmup apart), or of
// the requests outside iterations. Its Meter guards its fields.
type Ledger struct {
	key                   ledgerKey
	requests, unbilled    int64
	fromUsage             int64
	input, cached, output int64
	spend                 float64
}

type ledgerKey struct {
	scenario, stage string
	warmup          bool
}

// Ledger returns the ledger of a scenario's stage, made on first use.
func (m *Meter) Ledger(scenario, stage string, warmup bool) *Ledger {
	k := ledgerKey{scenario, stage, warmup}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.ledgers[k]
	if l == nil {
		l = &Ledger{key: k}
		m.ledgers[k] = l
		m.order = append(m.order, l)
	}
	return l
}

type ledgerCtxKey struct{}

// WithLedger returns ctx carrying l, where the Gate books the requests
// sent with ctx.
func WithLedger(ctx context.Context, l *Ledger) context.Context {
	return context.WithValue(ctx, ledgerCtxKey{}, l)
}

// ledgerFrom is the ledger WithLedger attached to ctx, nil when none.
func ledgerFrom(ctx context.Context) *Ledger {
	l, _ := ctx.Value(ledgerCtxKey{}).(*Ledger)
	return l
}

// Summary is the meter's account so far: its prices, the total, the
// source of the counts, each stage's spend (warmup first, then by
// scenario in the order stages ran) and, when it stopped, why.
func (m *Meter) Summary() *Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cost
	s := &Summary{Currency: c.CurrencyCode(), InputPerMTok: c.InputPerMTok, OutputPerMTok: c.OutputPerMTok,
		CachedInputPerMTok: c.CachedInputPerMTok, Budget: c.Budget, Total: m.spent,
		MaxRequest: m.maxHold, Unbounded: m.unbounded, Refused: m.refused, Stages: []StageSpend{}}
	if m.budget != c.Budget {
		s.Cap = m.budget
	}
	for _, l := range m.sortedLedgers() {
		s.Stages = append(s.Stages, l.summary())
	}
	if m.life.requests > 0 {
		life := m.life.summary()
		s.Lifecycle = &life
	}
	s.InputFrom, s.OutputFrom = copyCounts(m.inputFrom), copyCounts(m.outFrom)
	s.total()
	if m.stop != nil {
		st := *m.stop
		s.StoppedByBudget, s.Stop = true, &Stop{Committed: st.Committed, Next: st.Next, InFlight: st.InFlight}
	}
	return s
}

// sortedLedgers puts warmup first, then scenarios by name, each in the
// order its stages ran.
func (m *Meter) sortedLedgers() []*Ledger {
	out := slices.Clone(m.order)
	slices.SortStableFunc(out, func(a, b *Ledger) int {
		if a.key.warmup != b.key.warmup {
			if a.key.warmup {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.key.scenario, b.key.scenario)
	})
	return out
}

func (l *Ledger) summary() StageSpend {
	return StageSpend{Scenario: l.key.scenario, Stage: l.key.stage, Warmup: l.key.warmup, Requests: l.requests,
		Unbilled: l.unbilled, InputTokens: l.input, CachedTokens: l.cached,
		OutputTokens: l.output, Spend: l.spend, FromUsage: l.fromUsage}
}

func copyCounts(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
