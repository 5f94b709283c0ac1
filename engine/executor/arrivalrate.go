package executor

import (
	"context"
	"time"

	"github.com/llmload/llmload/engine"
)

// arrivalRateRun drives an open-model scenario (constant-arrival-rate,
// ramping-arrival-rate): one scheduler goroutine sleeps until each intended
// start and hands the iteration to the scenario's VUs (openPool), which
// drop it when none is idle.
type arrivalRateRun struct {
	*scenarioBase
	profile *rateProfile
	gen     *arrivals
	pool    *openPool
}

func (r *arrivalRateRun) prepare() error {
	if err := r.needStages(); err != nil {
		return err
	}
	if err := checkOpenSplit(r.sc, r.eng.seg); err != nil {
		return err
	}
	p, err := newRateProfile(r.sc)
	if err != nil {
		return err
	}
	r.profile = p
	r.gen, err = newArrivals(p, r.sc, r.eng.plan.Seed)
	return err
}

// initialVUs is only the (segment's share of the) pre-allocated VUs: the
// cap may be thousands, made on demand.
func (r *arrivalRateRun) initialVUs() int { return r.eng.seg.Share(max(r.sc.PreAllocatedVUs, 0)) }

func (r *arrivalRateRun) progress(st *ScenarioStatus) {
	r.pool.progress(st)
	if start := r.start.Load(); start != 0 && !r.done.Load() {
		st.Rate = rateShare(r.eng.seg, r.profile.rateAt(time.Since(time.Unix(0, start))))
	}
}

func (r *arrivalRateRun) run(ctx context.Context) { r.runOpen(ctx, r) }

// window is stage i's window in the rate profile.
func (r *arrivalRateRun) window(i int) (start, end time.Duration) {
	return r.profile.stageStart(i), r.profile.stageEnds[i]
}

// next is the segment's next arrival. Every segment draws the whole
// sequence, with the same seed, and keeps its own, so together they
// dispatch exactly the unsegmented schedule.
func (r *arrivalRateRun) next() (arrival, bool) {
	for {
		a, ok := r.gen.next()
		if !ok || r.eng.seg.Owns(a.seq) {
			return a, ok
		}
	}
}

// dispatch hands the iteration of a, due at at, to the pool.
func (r *arrivalRateRun) dispatch(a arrival, at time.Time) {
	it := engine.Iteration{Scenario: r.sc.Name, Stage: r.sc.Stages[a.stage].Name, Exec: r.sc.Exec, Scheduled: at}
	r.pool.dispatch(openJob{it: it})
}
