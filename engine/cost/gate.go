package cost

import (
	"context"
	"time"

	"github.com/llmload/llmload/engine"
)

// Gate is the engine.Client every VU sends through when the plan is
// priced: it reserves a request's worst case on its Meter before handing
// it on, and books its cost when it returns. All of its work happens
// before the inner client's t0 or after its result, so no timing includes
// it. A request the meter refuses is never sent: its result is canceled
// and NotSent, which no sample records. Safe for concurrent use.
type Gate struct {
	next  engine.Client
	meter *Meter
}

// NewGate wraps next with m.
func NewGate(next engine.Client, m *Meter) *Gate { return &Gate{next: next, meter: m} }

// Chat sends req through the meter; the stage it is booked in is the one
// WithLedger attached to ctx (none: setup and teardown).
func (g *Gate) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	h, ok := g.meter.Reserve(req)
	if !ok {
		return g.refused(req)
	}
	res := g.next.Chat(ctx, req)
	g.meter.Settle(ledgerFrom(ctx), h, req, res)
	return res
}

// refused is the result of a request the budget kept from being sent.
func (g *Gate) refused(req *engine.ChatRequest) *engine.Result {
	msg := "spend budget reached"
	if stop := g.meter.Stopped(); stop != nil {
		msg = stop.Error()
	}
	api := req.Endpoint
	if api == "" {
		api = engine.EndpointChat
	}
	return &engine.Result{Start: time.Now(), API: api, NotSent: true,
		Err: &engine.Error{Class: engine.ErrCanceled, Message: msg}}
}
