package run

import (
	"context"
	"errors"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/tokenize"
)

// spend meters a priced run (options.cost): every VU request passes its
// gate, booked in the stage its iteration belongs to, and a budget stops
// the run like an abort_on_fail threshold, with a *cost.BudgetReached
// cause. A nil spend (no prices) meters nothing and wraps nothing.
type spend struct{ meter *cost.Meter }

// newSpend makes the run's meter, which cancels the run when the budget
// stops it. A segment (--segment i/n) stops at its share of the budget,
// 1/n, so that the segments together stay within it.
func (c *Config) newSpend(cancel context.CancelCauseFunc) *spend {
	pc := c.Plan.Cost
	if !pc.Priced() {
		return nil
	}
	budget := pc.Budget
	if seg := c.Plan.Segment; !seg.Whole() {
		budget /= float64(seg.Count)
	}
	opts := []cost.Option{cost.WithBudget(budget, func(b *cost.BudgetReached) { cancel(b) })}
	if tok := c.Plan.Target.Tokenizer; tok != openai.TokenizerNone {
		// The plan's tokenizer was loaded when the script compiled; a
		// failure here only leaves uncounted prompts at their bound.
		if codec, err := tokenize.Get(tok); err == nil {
			opts = append(opts, cost.WithCounter(cost.TokenizerCounter(codec)))
		}
	}
	if note := cost.Note(pc); note != "" {
		c.log("%s", note)
	}
	return &spend{cost.NewMeter(pc, opts...)}
}

// client is next behind the budget gate.
func (s *spend) client(next engine.Client) engine.Client {
	if s == nil {
		return next
	}
	return cost.NewGate(next, s.meter)
}

// summary is the spend so far; nil without prices.
func (s *spend) summary() *cost.Summary {
	if s == nil {
		return nil
	}
	return s.meter.Summary()
}

// budgetStop is what the budget stopped the run with, if it did.
func budgetStop(e *ending) *cost.BudgetReached {
	var b *cost.BudgetReached
	if errors.As(e.cause, &b) {
		return b
	}
	return nil
}

// wrap labels each iteration's context with its stage's ledger, so the
// gate books a request where its sample goes; setup and teardown, which
// run outside iterations, are booked apart. r is returned as it is
// without prices.
func (s *spend) wrap(r engine.Runner) engine.Runner {
	if s == nil {
		return r
	}
	w := meteredRunner{r, s.meter}
	if lc, ok := r.(engine.Lifecycle); ok {
		return meteredLifecycle{w, lc}
	}
	return w
}

type meteredRunner struct {
	r engine.Runner
	m *cost.Meter
}

func (w meteredRunner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	vu, err := w.r.NewVU(ctx, id)
	if err != nil {
		return nil, err
	}
	return meteredVU{vu, w.m}, nil
}

// meteredLifecycle keeps the runner's engine.Lifecycle visible to the
// executor, which looks for it with a type assertion.
type meteredLifecycle struct {
	meteredRunner
	lc engine.Lifecycle
}

func (w meteredLifecycle) Setup(ctx context.Context) error    { return w.lc.Setup(ctx) }
func (w meteredLifecycle) Teardown(ctx context.Context) error { return w.lc.Teardown(ctx) }

type meteredVU struct {
	vu engine.VU
	m  *cost.Meter
}

func (v meteredVU) RunIteration(ctx context.Context, it engine.Iteration) error {
	return v.vu.RunIteration(cost.WithLedger(ctx, v.m.Ledger(it.Scenario, it.Stage, it.Warmup)), it)
}

func (v meteredVU) Close() error { return v.vu.Close() }
