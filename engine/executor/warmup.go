package executor

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
)

// warmup runs the plan's warmup iterations with the first scenario's exec
// function, on as many VUs as the scenario will hold (at most one per warmup
// request), so several connections and the server's caches are warm when
// measuring starts, and the warmup takes about one request's time.
func (e *Engine) warmup(ctx context.Context, vus []*vuHandle) error {
	w := e.plan.Warmup
	if (w.Requests <= 0 && w.Duration <= 0) || len(e.scenarios) == 0 {
		return nil
	}
	if w.Requests > 0 {
		if w.Requests = e.warmupRequests(); w.Requests == 0 {
			return nil // the other segments run the few warmup requests
		}
	}
	e.phase.Store(PhaseWarmup)
	sc := e.scenarios[0].base().sc
	n := min(max(sc.MaxVUs(), 1), len(vus))
	if w.Requests > 0 {
		n = min(n, w.Requests)
	}
	wctx := ctx
	if w.Duration > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, w.Duration)
		defer cancel()
	}
	var left atomic.Int64
	left.Store(int64(w.Requests))
	var wg sync.WaitGroup
	for _, v := range vus[:n] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil && (w.Requests <= 0 || left.Add(-1) >= 0) {
				e.iterate(wctx, nil, v, engine.Iteration{
					Scenario: sc.Name, Stage: WarmupStage, Exec: sc.Exec, Warmup: true,
				})
				e.warmupDone.Add(1)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// warmupRequests is the segment's share of the warmup's requests.
func (e *Engine) warmupRequests() int { return e.seg.Share(e.plan.Warmup.Requests) }
