package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// warmup runs the plan's warmup iterations with the first scenario's exec
// function, on as many VUs as the scenario will hold (at most one per warmup
// request), so several connections and the server's caches are warm when
// measuring starts, and the warmup takes about one request's time. A warmup
// of a duration before an arrival-rate scenario arrives at the rate its
// first stage starts with instead: its VUs running back to back would load
// the server far beyond it, and the requests still queued when the warmup
// ends would be served into the first measured seconds.
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
	if rate := warmupRate(sc); w.Duration > 0 && rate > 0 {
		// Each segment arrives at its share of the rate, as its own
		// arrivals will.
		e.pacedWarmup(wctx, sc, vus[:n], rate/float64(max(e.seg.Count, 1)))
		return ctx.Err()
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

// warmupRate is the arrival rate, per second, a warmup of a duration runs
// at before sc: its first stage's, or the rate a ramp starts from when the
// first stage ramps from one above zero; 0 for a scenario that is not
// arrival-rate.
func warmupRate(sc plan.Scenario) float64 {
	if sc.Executor != plan.ExecutorConstantArrivalRate && sc.Executor != plan.ExecutorRampingArrivalRate || len(sc.Stages) == 0 {
		return 0
	}
	first := sc.Stages[0]
	if first.Ramp > 0 && sc.StartRate > 0 {
		return sc.RatePerSecond(sc.StartRate)
	}
	return sc.RatePerSecond(first.Rate)
}

// pacedWarmup starts an iteration every 1/rate seconds on a free VU of
// vus until ctx ends; an arrival that finds every VU busy is skipped, as
// the server is then slower than the rate and a queue is what the warmup
// must not build.
func (e *Engine) pacedWarmup(ctx context.Context, sc plan.Scenario, vus []*vuHandle, rate float64) {
	free := make(chan *vuHandle, len(vus))
	for _, v := range vus {
		free <- v
	}
	tick := time.NewTicker(max(time.Duration(float64(time.Second)/rate), time.Microsecond))
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case v := <-free:
			wg.Go(func() {
				e.iterate(ctx, nil, v, engine.Iteration{Scenario: sc.Name, Stage: WarmupStage, Exec: sc.Exec, Warmup: true})
				e.warmupDone.Add(1)
				free <- v
			})
		default:
		}
	}
}
