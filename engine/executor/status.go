package executor

import "time"

// Status is a snapshot of a run's progress, for a progress line.
type Status struct {
	Phase       string
	WarmupDone  int64
	WarmupTotal int
	Scenarios   []ScenarioStatus
}

// ScenarioStatus is one scenario's progress.
type ScenarioStatus struct {
	Name       string
	Stage      string // "" before the first stage
	StageIndex int
	Stages     int
	Elapsed    time.Duration
	Total      time.Duration
	ActiveVUs  int
	Done       bool
}

// Status returns the current progress; safe for concurrent use.
func (e *Engine) Status() Status {
	st := Status{Phase: e.phase.Load().(string), WarmupDone: e.warmupDone.Load(), WarmupTotal: e.plan.Warmup.Requests}
	for _, r := range e.scenarios {
		ss := ScenarioStatus{
			Name: r.sc.Name, Stages: len(r.sc.Stages), Total: r.sc.Duration(),
			ActiveVUs: int(r.active.Load()), Done: r.done.Load(),
		}
		i := int(r.stage.Load())
		if start := r.start.Load(); start != 0 {
			ss.Elapsed = min(time.Since(time.Unix(0, start)), ss.Total)
			ss.StageIndex = min(i, len(r.sc.Stages)-1)
			ss.Stage = r.sc.Stages[max(ss.StageIndex, 0)].Name
		}
		st.Scenarios = append(st.Scenarios, ss)
	}
	return st
}
