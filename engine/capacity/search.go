package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/llmload/llmload/engine/plan"
)

// maxBisections bounds the bisection, whatever the precision asked.
const maxBisections = 40

// ProbeFunc applies one probe's load and has it judged: pass says it held,
// stop why the search cannot go on ("" to go on).
type ProbeFunc func(ctx context.Context, load float64, phase string) (pass bool, stop string)

// Search is one capacity scenario's bracket and bisection: which load to
// probe next given the verdicts so far, and the estimate they give. It
// applies no load itself; the executor's ProbeFunc does. Outcome, Record
// and Stop are safe for concurrent use with Run.
type Search struct {
	cs   plan.CapacitySearch
	rate bool // the load is a rate, else VUs

	lo, hi float64 // the highest load that held, the lowest that broke; 0: none yet; owned by Run

	mu  sync.Mutex
	out Outcome
}

// NewSearch sets up the search of scenario; cs nil is a scenario without
// one, which Check refuses. A zero IdleTimeout takes the default.
func NewSearch(scenario string, cs *plan.CapacitySearch) *Search {
	s := &Search{out: Outcome{Scenario: scenario, Stopped: "the search did not start"}}
	if cs != nil {
		s.cs, s.out.Load = *cs, cs.Load
		if s.cs.IdleTimeout <= 0 {
			s.cs.IdleTimeout = plan.DefaultProbeIdleTimeout
		}
	}
	s.rate = s.cs.Load == plan.CapacityRate
	return s
}

// Config is the search as it runs, defaults filled in.
func (s *Search) Config() plan.CapacitySearch { return s.cs }

// Rate reports a search of arrival rates (else of VUs).
func (s *Search) Rate() bool { return s.rate }

// Check refuses a search that would not run or not end.
func (s *Search) Check() error {
	cs := s.cs
	switch {
	case cs.Load != plan.CapacityRate && cs.Load != plan.CapacityVUs:
		return fmt.Errorf("capacity load %q: want %q or %q", cs.Load, plan.CapacityRate, plan.CapacityVUs)
	case !(cs.Start > 0) || math.IsInf(cs.Start, 0) || !(cs.Max >= cs.Start) || math.IsInf(cs.Max, 0):
		return fmt.Errorf("capacity start %v and max %v: want 0 < start ≤ max", cs.Start, cs.Max)
	case !(cs.Growth > 1) || math.IsInf(cs.Growth, 0):
		return fmt.Errorf("capacity growth %v: want a factor above 1", cs.Growth)
	case cs.Window <= 0 || cs.Warmup < 0 || cs.MaxWindow < 0:
		return fmt.Errorf("capacity window %v, warmup %v, max_window %v: want a window above 0", cs.Window, cs.Warmup, cs.MaxWindow)
	case s.rate && !(cs.Precision > 0) || !(cs.Precision >= 0) || math.IsInf(cs.Precision, 0):
		return fmt.Errorf("capacity precision %v: want a relative width above 0", cs.Precision)
	case !s.rate && math.Round(cs.Start) < 1:
		return fmt.Errorf("capacity start %v: a search of VUs starts at 1 VU or more", cs.Start)
	}
	return nil
}

// Run searches with probe, then records the estimate and why it stopped
// early ("" when it converged, held at max or found no load that held).
func (s *Search) Run(ctx context.Context, probe ProbeFunc) {
	s.mu.Lock()
	s.out.Stopped = ""
	s.mu.Unlock()
	s.conclude(s.search(ctx, probe))
}

// Stop records why a search that never ran did not.
func (s *Search) Stop(reason string) {
	s.mu.Lock()
	s.out.Stopped = reason
	s.mu.Unlock()
}

// search brackets the capacity, then bisects; it returns why it stopped
// early, "" when it converged, held at max or found no load that held.
func (s *Search) search(ctx context.Context, probe ProbeFunc) string {
	load := s.startLoad()
	for {
		pass, stop := probe(ctx, load, ProbeBracket)
		if stop != "" {
			return stop
		}
		if !pass {
			s.broke(load)
			break
		}
		s.held(load)
		if load >= s.maxLoad() {
			return "" // held at max: at least max
		}
		load = s.up(load)
	}
	if s.lo == 0 {
		if stop := s.bracketDown(ctx, probe, load); stop != "" || s.lo == 0 {
			return stop
		}
	}
	return s.bisect(ctx, probe)
}

// bracketDown lowers the load from the first probe's, which broke, until
// one holds: for VUs down to 1, for rates down to start/growth⁶. It
// leaves lo at 0 when none held.
func (s *Search) bracketDown(ctx context.Context, probe ProbeFunc, load float64) string {
	for k := 1; ; k++ {
		next, ok := s.down(load, k)
		if !ok {
			return ""
		}
		load = next
		pass, stop := probe(ctx, load, ProbeBracket)
		if stop != "" {
			return stop
		}
		if pass {
			s.held(load)
			return ""
		}
		s.broke(load)
	}
}

// bisect halves [lo, hi] until it is within the precision.
func (s *Search) bisect(ctx context.Context, probe ProbeFunc) string {
	for n := 0; !s.converged() && n < maxBisections; n++ {
		mid := s.mid()
		pass, stop := probe(ctx, mid, ProbeBisect)
		if stop != "" {
			return stop
		}
		if pass {
			s.held(mid)
		} else {
			s.broke(mid)
		}
	}
	return ""
}

// startLoad is the first probe's load: start, whole for VUs, within max.
func (s *Search) startLoad() float64 {
	if s.rate {
		return s.cs.Start
	}
	return min(math.Round(s.cs.Start), s.maxLoad())
}

// maxLoad is the bracket's bound: max, whole for VUs.
func (s *Search) maxLoad() float64 {
	if s.rate {
		return s.cs.Max
	}
	return max(math.Floor(s.cs.Max), 1)
}

// up is the bracket's next load after load held: load × growth (at
// least one VU more), or max when that would pass it.
func (s *Search) up(load float64) float64 {
	next := load * s.cs.Growth
	if !s.rate {
		next = max(load+1, math.Round(next))
	}
	if next >= s.maxLoad()*(1-1e-9) {
		return s.maxLoad()
	}
	return next
}

// down is the k-th load below a first probe that broke: load ÷ growth (at
// least one VU less, down to 1), or for rates start ÷ growth^k down to
// k = 6; ok is false below that.
func (s *Search) down(load float64, k int) (float64, bool) {
	if s.rate {
		return s.cs.Start / math.Pow(s.cs.Growth, float64(k)), k <= 6
	}
	if load <= 1 {
		return 0, false
	}
	return max(min(load-1, math.Round(load/s.cs.Growth)), 1), true
}

// mid is the next bisection load: the middle of [lo, hi], whole for VUs.
func (s *Search) mid() float64 {
	if s.rate {
		return (s.lo + s.hi) / 2
	}
	return math.Floor((s.lo + s.hi) / 2)
}

// converged reports whether [lo, hi] is narrow enough: within the
// precision, or for VUs one VU wide.
func (s *Search) converged() bool {
	width := s.hi - s.lo
	if !s.rate && width <= 1 {
		return true
	}
	return s.cs.Precision > 0 && width/s.lo <= s.cs.Precision
}

// held and broke narrow [lo, hi] with a probe's verdict, so the outcome
// shows the estimate as the search goes.
func (s *Search) held(load float64)  { s.lo = load; s.conclude("") }
func (s *Search) broke(load float64) { s.hi = load; s.conclude("") }

// conclude records the estimate from [lo, hi] and why the search stopped.
func (s *Search) conclude(stopped string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &s.out
	o.Lo, o.Hi, o.Stopped = s.lo, s.hi, stopped
	o.Capacity, o.AtLeast = 0, false
	switch {
	case s.lo > 0 && s.hi > 0:
		o.Capacity = (s.lo + s.hi) / 2
	case s.lo > 0:
		o.Capacity, o.AtLeast = s.lo, true
	}
}

// Outcome is a copy of what the search has found so far.
func (s *Search) Outcome() Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.out
	o.Probes = slices.Clone(o.Probes)
	return o
}

// Record appends a judged probe to the outcome.
func (s *Search) Record(p Probe, v Verdict) {
	p.Stages = slices.Clone(p.Stages)
	s.mu.Lock()
	s.out.Probes = append(s.out.Probes, ProbeResult{Probe: p, Verdict: v})
	s.mu.Unlock()
}
