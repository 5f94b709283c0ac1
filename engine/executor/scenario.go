package executor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// scenario is one executor family's way of running a scenario. run is
// called at most once, from the scenario's own goroutine, at its start time.
type scenario interface {
	base() *scenarioBase
	// prepare checks what the plan's validation should already have
	// refused, so bad input becomes an error, not a panic.
	prepare() error
	// initialVUs is how many VUs to make before load.
	initialVUs() int
	// run executes the stages and returns once every iteration has ended.
	run(ctx context.Context)
	// progress adds the family's own fields to a status snapshot.
	progress(st *ScenarioStatus)
}

// newScenario picks sc's executor family. Unknown executors get a family
// whose prepare fails, so Run reports them.
func newScenario(sc plan.Scenario, e *Engine) scenario {
	b := &scenarioBase{sc: sc, eng: e}
	b.stage.Store(-1)
	switch sc.Executor {
	case plan.ExecutorConstantVUs, plan.ExecutorRampingVUs:
		return &closedRun{scenarioBase: b}
	case plan.ExecutorConstantArrivalRate, plan.ExecutorRampingArrivalRate:
		r := &arrivalRateRun{scenarioBase: b}
		r.pool = newOpenPool(b, b.currentStage)
		return r
	case plan.ExecutorTrace:
		return newTraceRun(b)
	case plan.ExecutorCapacity:
		return newCapacityRun(b)
	case plan.ExecutorSharedIterations, plan.ExecutorPerVUIterations:
		if len(sc.Stages) == 0 {
			// The plan normally carries the stage; without it the defaults apply.
			b.sc.Stages = []plan.Stage{{Name: sc.Name, Target: sc.VUs, Duration: plan.DefaultMaxDuration}}
		}
		return &iterationsRun{scenarioBase: b, shared: sc.Executor == plan.ExecutorSharedIterations}
	}
	return unknownRun{b}
}

// scenarioBase is what every executor family shares: the scenario, its
// VUs and the progress Status reads.
type scenarioBase struct {
	sc  plan.Scenario
	eng *Engine
	vus []*vuHandle

	// dueAt is when the scenario is due to start (load start + StartTime);
	// set by its goroutine before run.
	dueAt time.Time
	// startAt is when its first stage is scheduled to start; set by begin,
	// before any iteration.
	startAt time.Time

	due   atomic.Int64 // unix nanos at which the scenario starts, 0 before load
	start atomic.Int64 // unix nanos at which its first stage started
	stage atomic.Int32 // index of the current stage, -1 before, len after
	done  atomic.Bool

	// rates, when set, are the stage marks' rates (iterations per second,
	// the segment's own) of an executor whose stages carry none (trace).
	rates []float64
}

func (b *scenarioBase) base() *scenarioBase { return b }

// begin records the scenario's start and returns it: the moment it was due,
// not the moment its goroutine woke, so every boundary that follows is the
// plan's.
func (b *scenarioBase) begin() time.Time {
	b.startAt = b.dueAt
	if b.startAt.IsZero() {
		b.startAt = runclock.Now()
	}
	b.start.Store(b.startAt.UnixNano())
	return b.startAt
}

// stageStarted marks stage i's window opening at at, its scheduled start,
// and returns the mark.
func (b *scenarioBase) stageStarted(i int, at time.Time) engine.StageMark {
	b.stage.Store(int32(i))
	st := b.sc.Stages[i]
	// A segment's mark holds its own share of the load, so the segments'
	// marks sum to the whole plan's.
	seg := b.eng.seg
	m := engine.StageMark{Scenario: b.sc.Name, Stage: st.Name, Index: i, Target: seg.Share(st.Target), At: at, Late: lateSince(at)}
	if !iterationsBound(b.sc.Executor) {
		// An iterations stage ends when its work is done: its Duration is
		// a bound, not a planned window.
		m.Planned = st.Duration
	}
	switch {
	case b.rates != nil:
		m.Target, m.Rate = 0, b.rates[i]
	case plan.OpenModel(b.sc.Executor):
		m.Target, m.Rate = 0, rateShare(seg, b.sc.StageLoads()[i].Mean())
	}
	b.eng.sink.StageStarted(m)
	return m
}

func iterationsBound(executor string) bool {
	return executor == plan.ExecutorSharedIterations || executor == plan.ExecutorPerVUIterations
}

// stageEnded marks m's window closing at end, its scheduled boundary.
// reached says the controller waited until end; when it did not (Ctrl-C,
// an aborting threshold) the window was cut short and closes now.
func (b *scenarioBase) stageEnded(m engine.StageMark, end time.Time, reached bool) {
	m.At, m.Late, m.Cut = end, lateSince(end), false
	if now := runclock.Now(); !reached && now.Before(end) {
		m.At, m.Late, m.Cut = now, 0, true
	}
	b.eng.sink.StageEnded(m)
}

// lateSince is how long ago at was; never negative.
func lateSince(at time.Time) time.Duration { return max(time.Since(at), 0) }

// currentStage is the stage an iteration starting now belongs to.
func (b *scenarioBase) currentStage() string {
	i := int(b.stage.Load())
	return b.sc.Stages[min(max(i, 0), len(b.sc.Stages)-1)].Name
}

// needStages is the common prepare check of staged executors.
func (b *scenarioBase) needStages() error {
	if len(b.sc.Stages) == 0 {
		return fmt.Errorf("scenario %q: no stages", b.sc.Name)
	}
	return nil
}

// unknownRun is a scenario whose executor this package does not know.
type unknownRun struct{ *scenarioBase }

func (u unknownRun) prepare() error {
	return fmt.Errorf("scenario %q: unknown executor %q", u.sc.Name, u.sc.Executor)
}
func (unknownRun) initialVUs() int          { return 0 }
func (unknownRun) run(context.Context)      {}
func (unknownRun) progress(*ScenarioStatus) {}
