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
	Executor   string
	Stage      string // "" before the first stage
	StageIndex int
	Stages     int
	Elapsed    time.Duration
	// Total is the stage time; the max_duration bound for iteration
	// counts; 0 for a capacity search, whose stages are made as it runs.
	Total time.Duration
	// StartsIn is the time left before the scenario's start_time, 0 once
	// it has started (and before load starts).
	StartsIn time.Duration
	// ActiveVUs are the VUs iterating: active slots (closed model), busy
	// VUs (open model) or VUs not yet done (iteration counts).
	ActiveVUs int
	Done      bool

	// Rate is the target rate now, in iterations per second (open model).
	Rate float64
	// BusyVUs are the VUs running an iteration now.
	BusyVUs int
	// AllocatedVUs are the VUs the scenario holds; open models grow them
	// from pre_allocated_vus up to max_vus.
	AllocatedVUs int
	// Dropped counts open-model iterations that found no free VU.
	Dropped int64

	// IterationsDone and IterationsTotal are the iteration-count executors'
	// progress, and a trace's: records done (ended or dropped) of those it
	// replays; IterationsTotal is 0 for other executors.
	IterationsDone  int64
	IterationsTotal int64

	// Probe is a capacity search's current probe (1-based; 0 before the
	// first), ProbeLoad its load (iterations/s or VUs, as Capacity.Load)
	// and ProbePart what it does now: ProbeWarmup, ProbeWindow or
	// ProbeDrain. Stage is then the stage its iterations are labelled with
	// ("probe-03 warmup", "probe-03", "probe-03 drain"); Stages counts the
	// measurement windows so far, the one a warmup leads to included, and
	// StageIndex is the last one's.
	Probe     int
	ProbeLoad float64
	ProbePart string
}

// Status returns the current progress; safe for concurrent use.
func (e *Engine) Status() Status {
	st := Status{Phase: e.phase.Load().(string), WarmupDone: e.warmupDone.Load(), WarmupTotal: e.warmupRequests()}
	for _, s := range e.scenarios {
		b := s.base()
		ss := ScenarioStatus{
			Name: b.sc.Name, Executor: b.sc.Executor, Stages: len(b.sc.Stages), Total: b.sc.Duration(),
			Done: b.done.Load(),
		}
		if start := b.start.Load(); start != 0 {
			ss.Elapsed = min(time.Since(time.Unix(0, start)), ss.Total)
			if len(b.sc.Stages) > 0 {
				ss.StageIndex = min(max(int(b.stage.Load()), 0), len(b.sc.Stages)-1)
				ss.Stage = b.sc.Stages[ss.StageIndex].Name
			}
		} else if due := b.due.Load(); due != 0 && !ss.Done {
			ss.StartsIn = max(time.Until(time.Unix(0, due)), 0)
		}
		s.progress(&ss)
		st.Scenarios = append(st.Scenarios, ss)
	}
	return st
}
