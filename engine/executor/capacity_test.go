package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
)

// capJudge is a judge of known capacity: a probe passes iff its load is at
// most c. undecided, when set, leaves a probe undecided while it says so;
// stopAt stops the search at that probe (0-based); inFlight, when set,
// reports the iterations of a stage still running, which must be none.
type capJudge struct {
	c         float64
	undecided func(p capacity.Probe) bool
	stopAt    int
	inFlight  func(stage string) int

	mu    sync.Mutex
	calls []capacity.Probe
	at    []time.Time
	busy  []string // stages judged with iterations still running
}

func (j *capJudge) JudgeProbe(p capacity.Probe) capacity.Verdict {
	j.mu.Lock()
	defer j.mu.Unlock()
	p.Stages = slices.Clone(p.Stages)
	j.calls = append(j.calls, p)
	j.at = append(j.at, time.Now())
	if j.inFlight != nil {
		for _, s := range p.Stages {
			if j.inFlight(s) != 0 {
				j.busy = append(j.busy, s)
			}
		}
	}
	switch {
	case j.stopAt > 0 && p.Index == j.stopAt:
		return capacity.Verdict{Stop: "llmload could not deliver the load", Why: "dropped 12%"}
	case j.undecided != nil && j.undecided(p):
		return capacity.Verdict{Why: fmt.Sprintf("n=%d < 50", len(p.Stages))}
	}
	pass := p.Load <= j.c
	return capacity.Verdict{Decided: true, Pass: pass, Why: fmt.Sprintf("load %v vs %v", p.Load, j.c)}
}

// capPlan is one capacity scenario: constant arrivals or VUs, warmup 1s,
// windows of 2s up to 6s.
func capPlan(load string, start, maxLoad, growth, precision float64) plan.Plan {
	return plan.Plan{Seed: 7, Scenarios: []plan.Scenario{{
		Name: "cap", Executor: plan.ExecutorCapacity, Exec: "chat",
		Arrival: plan.ArrivalConstant, PreAllocatedVUs: 4, MaxVUsCap: 64,
		GracefulStop: time.Second, GracefulRampDown: time.Second,
		Capacity: &plan.CapacitySearch{
			Load: load, Start: start, Max: maxLoad, Growth: growth, Precision: precision,
			Warmup: time.Second, Window: 2 * time.Second, MaxWindow: 6 * time.Second,
		},
	}}}
}

// runCapacity runs p with judge j, on iterations of fn, and returns the
// search's one outcome.
func runCapacity(t *testing.T, p plan.Plan, j capacity.Judge, r *fakeRunner) (capacity.Outcome, *fakeSink) {
	t.Helper()
	sink := &fakeSink{}
	e := New(p, r, sink)
	e.SetProbeJudge(j)
	if err := e.Run(t.Context()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := e.Capacity()
	if len(out) != 1 {
		t.Fatalf("%d outcomes, want 1", len(out))
	}
	return out[0], sink
}

func probeLoads(o capacity.Outcome) []float64 {
	var out []float64
	for _, p := range o.Probes {
		out = append(out, p.Load)
	}
	return out
}

// checkBracket checks that the outcome brackets the judge's capacity to
// the precision asked.
func checkBracket(t *testing.T, o capacity.Outcome, c, precision float64) {
	t.Helper()
	if !(o.Lo <= c && c < o.Hi) || o.AtLeast || o.Stopped != "" {
		t.Errorf("outcome [%v, %v] (at least %v, stopped %q), want a bracket of %v", o.Lo, o.Hi, o.AtLeast, o.Stopped, c)
	}
	if w := (o.Hi - o.Lo) / o.Lo; w > precision && o.Hi-o.Lo > 1 {
		t.Errorf("bracket [%v, %v] is %.3f wide, want ≤ %v", o.Lo, o.Hi, w, precision)
	}
	if o.Capacity != (o.Lo+o.Hi)/2 {
		t.Errorf("capacity %v, want the middle of [%v, %v]", o.Capacity, o.Lo, o.Hi)
	}
}

func TestCapacitySearchOfRates(t *testing.T) {
	bubble(t, func(t *testing.T) {
		j := &capJudge{c: 13.7}
		r := &fakeRunner{fn: sleepFn(10 * time.Millisecond)}
		o, sink := runCapacity(t, capPlan(plan.CapacityRate, 1, 100, 2, 0.05), j, r)
		checkBracket(t, o, 13.7, 0.05)
		if got, want := probeLoads(o), []float64{1, 2, 4, 8, 16, 12, 14, 13, 13.5}; !slices.Equal(got, want) {
			t.Errorf("probes %v, want %v", got, want)
		}
		for i, p := range o.Probes {
			phase := capacity.ProbeBracket
			if i >= 5 {
				phase = capacity.ProbeBisect
			}
			name := fmt.Sprintf("probe-%02d", i+1)
			if p.Index != i || p.Phase != phase || !slices.Equal(p.Stages, []string{name}) || !p.Verdict.Decided || p.Extended != 0 {
				t.Errorf("probe %d = %+v, want %s in the %s", i, p, name, phase)
			}
			if p.End.Sub(p.Start) != 2*time.Second {
				t.Errorf("probe %d measured %v..%v, want its 2s window", i, p.Start, p.End)
			}
		}
		checkWindows(t, o, sink, r, true)
		if len(sink.drops) != 0 {
			t.Errorf("%d dropped", len(sink.drops))
		}
	})
}

// checkWindows checks each window's stage marks against its probe, that
// each window holds load × 2s iterations (rates, constant arrivals) or
// load VUs (VUs), and that warmup and drain iterations are flagged.
func checkWindows(t *testing.T, o capacity.Outcome, sink *fakeSink, r *fakeRunner, rate bool) {
	t.Helper()
	started, ended := sink.stageMarks("cap")
	var probes []capacity.ProbeResult
	var stages []string
	for _, p := range o.Probes {
		for _, s := range p.Stages {
			probes, stages = append(probes, p), append(stages, s)
		}
	}
	if len(started) != len(stages) || len(ended) != len(stages) {
		t.Fatalf("%d windows started, %d ended; want %d", len(started), len(ended), len(stages))
	}
	count, vus := map[string]int{}, map[string]map[int]bool{}
	for _, it := range r.its {
		name, part, _ := strings.Cut(it.Stage, " ")
		if it.Warmup != (part != "") || part != "" && part != "warmup" && part != "drain" {
			t.Fatalf("iteration in stage %q flagged warmup %v", it.Stage, it.Warmup)
		}
		if part == "" {
			count[name]++
			if vus[name] == nil {
				vus[name] = map[int]bool{}
			}
			vus[name][it.VUID] = true
		}
	}
	for i, s := range started {
		p, e := probes[i], ended[i]
		if s.Stage != stages[i] || e.Stage != s.Stage || s.Index != i || s.Planned != 2*time.Second || e.At.Sub(s.At) != 2*time.Second || e.Cut {
			t.Errorf("window %d: %+v .. %+v, want %s for 2s", i, s, e, stages[i])
		}
		if rate && (s.Rate != p.Load || s.Target != 0) || !rate && (s.Target != int(p.Load) || s.Rate != 0) {
			t.Errorf("window %s marked rate %v, target %d; want load %v", s.Stage, s.Rate, s.Target, p.Load)
		}
		if rate {
			if got, want := count[s.Stage], p.Load*2; float64(got) != want {
				t.Errorf("window %s: %d iterations, want %v at %v/s", s.Stage, got, want, p.Load)
			}
		} else if got := len(vus[s.Stage]); got != int(p.Load) {
			t.Errorf("window %s: %d VUs iterated, want %v", s.Stage, got, p.Load)
		}
	}
}

func TestCapacitySearchOfVUs(t *testing.T) {
	bubble(t, func(t *testing.T) {
		j := &capJudge{c: 11}
		r := &fakeRunner{fn: sleepFn(50 * time.Millisecond)}
		o, sink := runCapacity(t, capPlan(plan.CapacityVUs, 1, 64, 2, 0), j, r)
		checkBracket(t, o, 11, 0)
		if got, want := probeLoads(o), []float64{1, 2, 4, 8, 16, 12, 10, 11}; !slices.Equal(got, want) {
			t.Errorf("probes %v, want %v", got, want)
		}
		if o.Lo != 11 || o.Hi != 12 {
			t.Errorf("bracket [%v, %v], want [11, 12]", o.Lo, o.Hi)
		}
		checkWindows(t, o, sink, r, false)
		if got, want := r.made(), 16; got != want {
			t.Errorf("VUs made = %d, want the most a probe used, %d", got, want)
		}
	})
}

func TestCapacityHeldAtMaxIsAtLeast(t *testing.T) {
	for _, load := range []string{plan.CapacityRate, plan.CapacityVUs} {
		t.Run(load, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				o, _ := runCapacity(t, capPlan(load, 1, 10, 3, 0.1), &capJudge{c: 1000}, &fakeRunner{fn: sleepFn(10 * time.Millisecond)})
				if got, want := probeLoads(o), []float64{1, 3, 9, 10}; !slices.Equal(got, want) {
					t.Errorf("probes %v, want %v", got, want)
				}
				if !o.AtLeast || o.Capacity != 10 || o.Lo != 10 || o.Hi != 0 || o.Stopped != "" {
					t.Errorf("outcome %+v, want at least 10", o)
				}
			})
		})
	}
}

func TestCapacityFirstProbeFails(t *testing.T) {
	tests := map[string]struct {
		load             string
		start, c, prec   float64
		want             []float64
		lo, hi, capacity float64
		bisectFrom       int // the first bisection probe; 0: none
	}{
		"rates down, then bisect": {load: plan.CapacityRate, start: 8, c: 2.5, prec: 0.1,
			want: []float64{8, 4, 2, 3, 2.5, 2.75}, lo: 2.5, hi: 2.75, capacity: 2.625, bisectFrom: 3},
		"rates: none holds": {load: plan.CapacityRate, start: 8, c: 0.01, prec: 0.1,
			want: []float64{8, 4, 2, 1, 0.5, 0.25, 0.125}, hi: 0.125},
		"VUs down to 1": {load: plan.CapacityVUs, start: 16, c: 5, prec: 0,
			want: []float64{16, 8, 4, 6, 5}, lo: 5, hi: 6, capacity: 5.5, bisectFrom: 3},
		"VUs: none holds": {load: plan.CapacityVUs, start: 4, c: 0, prec: 0,
			want: []float64{4, 2, 1}, hi: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := capPlan(tc.load, tc.start, 100, 2, tc.prec)
				o, _ := runCapacity(t, p, &capJudge{c: tc.c}, &fakeRunner{fn: sleepFn(10 * time.Millisecond)})
				if got := probeLoads(o); !slices.Equal(got, tc.want) {
					t.Errorf("probes %v, want %v", got, tc.want)
				}
				if o.Lo != tc.lo || o.Hi != tc.hi || o.Capacity != tc.capacity || o.AtLeast || o.Stopped != "" {
					t.Errorf("outcome [%v, %v] capacity %v (at least %v, stopped %q), want [%v, %v] capacity %v",
						o.Lo, o.Hi, o.Capacity, o.AtLeast, o.Stopped, tc.lo, tc.hi, tc.capacity)
				}
				for i, pr := range o.Probes {
					bisect := tc.bisectFrom > 0 && i >= tc.bisectFrom
					if (pr.Phase == capacity.ProbeBisect) != bisect {
						t.Errorf("probe %d (%v) in the %s", i, pr.Load, pr.Phase)
					}
				}
			})
		})
	}
}

// An undecided probe gets another window, a stage of its own, at the same
// load; the judge sees all its windows each time.
func TestCapacityExtendsUndecidedProbes(t *testing.T) {
	bubble(t, func(t *testing.T) {
		j := &capJudge{c: 3, undecided: func(p capacity.Probe) bool { return p.Index == 1 && len(p.Stages) < 3 }}
		r := &fakeRunner{fn: sleepFn(10 * time.Millisecond)}
		p := capPlan(plan.CapacityRate, 2, 100, 2, 0.5)
		o, sink := runCapacity(t, p, j, r)
		if got, want := probeLoads(o), []float64{2, 4, 3}; !slices.Equal(got, want) {
			t.Fatalf("probes %v, want %v", got, want)
		}
		ext := o.Probes[1]
		if want := []string{"probe-02", "probe-02.2", "probe-02.3"}; !slices.Equal(ext.Stages, want) || ext.Extended != 2 {
			t.Errorf("probe 2: stages %v, extended %d; want %v, 2", ext.Stages, ext.Extended, want)
		}
		if ext.End.Sub(ext.Start) < 6*time.Second || !ext.Verdict.Decided || ext.Verdict.Pass {
			t.Errorf("probe 2: measured %v, verdict %+v; want three windows and a fail", ext.End.Sub(ext.Start), ext.Verdict)
		}
		var seen [][]string
		for _, c := range j.calls {
			if c.Index == 1 {
				seen = append(seen, c.Stages)
			}
		}
		if want := [][]string{{"probe-02"}, {"probe-02", "probe-02.2"}, {"probe-02", "probe-02.2", "probe-02.3"}}; !slices.EqualFunc(seen, want, slices.Equal) {
			t.Errorf("judge saw probe 2 as %v, want %v", seen, want)
		}
		checkWindows(t, o, sink, r, true)
		for _, it := range r.its {
			if it.Stage == "probe-02.2 warmup" || it.Stage == "probe-02.3 warmup" {
				t.Fatalf("an extension window has a warmup: %q", it.Stage)
			}
		}
	})
}

func TestCapacityUndecidedAtMaxWindowStops(t *testing.T) {
	bubble(t, func(t *testing.T) {
		j := &capJudge{c: 10, undecided: func(p capacity.Probe) bool { return p.Index == 2 }}
		p := capPlan(plan.CapacityRate, 1, 100, 2, 0.1)
		p.Scenarios[0].Capacity.MaxWindow = 4 * time.Second
		o, _ := runCapacity(t, p, j, &fakeRunner{fn: sleepFn(10 * time.Millisecond)})
		if want := "probe-03 could not decide within max_window: n=2 < 50"; o.Stopped != want {
			t.Errorf("stopped %q, want %q", o.Stopped, want)
		}
		if got := len(o.Probes); got != 3 {
			t.Fatalf("%d probes, want 3", got)
		}
		last := o.Probes[2]
		if last.Verdict.Decided || !slices.Equal(last.Stages, []string{"probe-03", "probe-03.2"}) || last.Extended != 1 {
			t.Errorf("last probe %+v, want undecided after 2 windows", last)
		}
		if !o.AtLeast || o.Lo != 2 || o.Capacity != 2 {
			t.Errorf("outcome %+v, want at least 2, what held before", o)
		}
	})
}

func TestCapacityJudgeStopsTheSearch(t *testing.T) {
	bubble(t, func(t *testing.T) {
		j := &capJudge{c: 100, stopAt: 2}
		o, _ := runCapacity(t, capPlan(plan.CapacityRate, 1, 100, 2, 0.1), j, &fakeRunner{fn: sleepFn(10 * time.Millisecond)})
		if o.Stopped != "llmload could not deliver the load" || len(o.Probes) != 3 || o.Probes[2].Verdict.Stop == "" {
			t.Errorf("outcome %+v, want stopped at the third probe", o)
		}
		if o.Lo != 2 || !o.AtLeast {
			t.Errorf("outcome [%v, %v] at least %v, want at least 2", o.Lo, o.Hi, o.AtLeast)
		}
	})
}

// Ctrl-C stops the search at once: the window is cut, the outcome says
// interrupted and keeps what was found, and Capacity reads it after Run.
func TestCapacityInterrupt(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		// Probe 1 takes 3s (1s warmup, 2s window; the window's 10ms
		// iterations end with it); probes 2 and 3 start after the wait for
		// the last probe's iterations (10ms or so) with a warmup as long as
		// a window: probe 3's window is about [9s, 11s).
		cancelAt := 10*time.Second + 500*time.Millisecond
		time.AfterFunc(cancelAt, cancel)
		sink := &fakeSink{}
		e := New(capPlan(plan.CapacityVUs, 1, 100, 2, 0), &fakeRunner{fn: sleepFn(10 * time.Millisecond)}, sink)
		e.SetProbeJudge(&capJudge{c: 50})
		t0 := time.Now()
		err := e.Run(ctx)
		if !errors.Is(err, context.Canceled) || time.Since(t0) != cancelAt {
			t.Errorf("Run: %v after %v, want canceled at once, after %v", err, time.Since(t0), cancelAt)
		}
		o := e.Capacity()[0]
		if o.Stopped != "interrupted" || len(o.Probes) != 3 || o.Lo != 2 || !o.AtLeast {
			t.Errorf("outcome %+v, want interrupted in probe 3, at least 2", o)
		}
		if v := o.Probes[2].Verdict; v.Decided || v.Why != "interrupted" {
			t.Errorf("interrupted probe's verdict %+v", v)
		}
		_, ended := sink.stageMarks("cap")
		if last := ended[len(ended)-1]; last.Stage != "probe-03" || !last.Cut || !last.At.Equal(t0.Add(cancelAt)) {
			t.Errorf("last window ended %+v, want probe-03 cut at the interrupt", last)
		}
	})
}

func TestCapacityInterruptedBeforeItStarts(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := capPlan(plan.CapacityRate, 1, 100, 2, 0.1)
		p.Scenarios[0].StartTime = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e := New(p, &fakeRunner{fn: noop}, &fakeSink{})
		e.SetProbeJudge(&capJudge{c: 1})
		if err := e.Run(ctx); err == nil {
			t.Fatal("Run returned no error")
		}
		if o := e.Capacity()[0]; o.Stopped != "context deadline exceeded" || len(o.Probes) != 0 {
			t.Errorf("outcome %+v, want stopped before any probe", o)
		}
	})
}

// The judge is asked once every iteration that started in the window has
// ended; one that never ends holds it for max(window, ProbeDrainTimeout).
func TestCapacityJudgesAfterTheDrain(t *testing.T) {
	for _, load := range []string{plan.CapacityRate, plan.CapacityVUs} {
		t.Run(load, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var mu sync.Mutex
				running := map[string]int{}
				r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
					mu.Lock()
					running[it.Stage]++
					mu.Unlock()
					defer func() { mu.Lock(); running[it.Stage]--; mu.Unlock() }()
					return sleepFn(700*time.Millisecond)(ctx, it)
				}}
				j := &capJudge{c: 1, inFlight: func(s string) int { mu.Lock(); defer mu.Unlock(); return running[s] }}
				o, _ := runCapacity(t, capPlan(load, 1, 100, 2, 0.1), j, r)
				if len(j.busy) != 0 || len(o.Probes) < 2 {
					t.Errorf("judged %v with iterations running; %d probes", j.busy, len(o.Probes))
				}
			})
		})
	}
	bubble(t, func(t *testing.T) {
		r := &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
			if it.Stage == "probe-01" {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}}
		j := &capJudge{c: 0.5}
		t0 := time.Now()
		p := capPlan(plan.CapacityRate, 1, 100, 2, 0.1)
		p.Scenarios[0].GracefulStop = 0
		runCapacity(t, p, j, r)
		if got, want := j.at[0].Sub(t0), 3*time.Second+ProbeDrainTimeout; got != want {
			t.Errorf("first probe judged at %v, want after its window and the drain bound, %v", got, want)
		}
	})
}

func TestCapacityStatus(t *testing.T) {
	bubble(t, func(t *testing.T) {
		e := New(capPlan(plan.CapacityRate, 4, 100, 2, 0.1), &fakeRunner{fn: sleepFn(10 * time.Millisecond)}, &fakeSink{})
		e.SetProbeJudge(&capJudge{c: 10})
		done := make(chan error)
		go func() { done <- e.Run(context.Background()) }()
		time.Sleep(500 * time.Millisecond)
		st := e.Status().Scenarios[0]
		if st.Probe != 1 || st.ProbeLoad != 4 || st.Stage != "probe-01 warmup" || st.ProbePart != ProbeWarmup || st.Rate != 4 || st.Stages != 1 || st.StageIndex != 0 {
			t.Errorf("in the warmup: %+v", st)
		}
		time.Sleep(time.Second) // 1.5s
		st = e.Status().Scenarios[0]
		if st.Stage != "probe-01" || st.ProbePart != ProbeWindow || st.Stages != 1 || st.StageIndex != 0 || st.Elapsed != 1500*time.Millisecond {
			t.Errorf("in the window: %+v", st)
		}
		time.Sleep(2 * time.Second) // 3.5s: probe 2's warmup, from 3s
		st = e.Status().Scenarios[0]
		if st.Probe != 2 || st.ProbeLoad != 8 || st.ProbePart != ProbeWarmup || st.Stage != "probe-02 warmup" || st.Stages != 2 || st.StageIndex != 1 {
			t.Errorf("in probe 2: %+v", st)
		}
		if o := e.Capacity()[0]; len(o.Probes) != 1 || o.Lo != 4 || !o.AtLeast {
			t.Errorf("outcome so far %+v, want probe 1 held", o)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if st := e.Status().Scenarios[0]; !st.Done || st.Probe != 0 || st.Stages != len(e.Capacity()[0].Probes) {
			t.Errorf("after Run: %+v", st)
		}
	})
}

// The plan's warmup runs before the search, with the scenario's exec
// function, and every probe's warmup and drain iterations are flagged.
func TestCapacityAfterThePlansWarmup(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := capPlan(plan.CapacityVUs, 2, 2, 2, 0)
		p.Warmup.Requests = 3
		r := &fakeRunner{fn: sleepFn(10 * time.Millisecond)}
		o, _ := runCapacity(t, p, &capJudge{c: 5}, r)
		if !o.AtLeast || o.Capacity != 2 {
			t.Errorf("outcome %+v", o)
		}
		for i, it := range r.its[:3] {
			if it.Stage != WarmupStage || !it.Warmup || it.Exec != "chat" {
				t.Errorf("iteration %d: %+v, want the plan's warmup", i, it)
			}
		}
		parts := map[string]bool{}
		for _, it := range r.its[3:] {
			parts[it.Stage] = it.Warmup
		}
		if want := map[string]bool{"probe-01 warmup": true, "probe-01": false, "probe-01 drain": true}; !maps.Equal(parts, want) {
			t.Errorf("stages %v, want %v", parts, want)
		}
	})
}

func TestCapacityThatCannotRunIsAnError(t *testing.T) {
	search := func(f func(cs *plan.CapacitySearch)) plan.Plan {
		p := capPlan(plan.CapacityRate, 1, 10, 2, 0.1)
		f(p.Scenarios[0].Capacity)
		return p
	}
	tests := map[string]struct {
		plan  plan.Plan
		judge bool
		want  string
	}{
		"no judge":  {capPlan(plan.CapacityRate, 1, 10, 2, 0.1), false, `scenario "cap": a capacity search needs a probe judge`},
		"load":      {search(func(cs *plan.CapacitySearch) { cs.Load = "tokens" }), true, `capacity load "tokens"`},
		"growth":    {search(func(cs *plan.CapacitySearch) { cs.Growth = 1 }), true, "capacity growth 1: want a factor above 1"},
		"max":       {search(func(cs *plan.CapacitySearch) { cs.Max = 0.5 }), true, "want 0 < start ≤ max"},
		"window":    {search(func(cs *plan.CapacitySearch) { cs.Window = 0 }), true, "want a window above 0"},
		"precision": {search(func(cs *plan.CapacitySearch) { cs.Precision = 0 }), true, "capacity precision 0"},
		"no search": {func() plan.Plan { p := capPlan("", 0, 0, 0, 0); p.Scenarios[0].Capacity = nil; return p }(), true, "needs its search"},
		"segment": {func() plan.Plan {
			p := capPlan(plan.CapacityRate, 1, 10, 2, 0.1)
			p.Segment = plan.Segment{Index: 0, Count: 2}
			return p
		}(), true, `scenario "cap": a capacity search cannot be split into 2 segments: each probe is judged on all of its load, so run it as one process`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &fakeRunner{fn: noop}
			e := New(tc.plan, r, &fakeSink{})
			if tc.judge {
				e.SetProbeJudge(&capJudge{c: 1})
			}
			err := e.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if r.made() != 0 {
				t.Errorf("%d VUs made", r.made())
			}
			if o := e.Capacity(); len(o) != 1 || o[0].Stopped == "" {
				t.Errorf("outcome %+v, want one that says the search did not run", o)
			}
		})
	}
	if err := CheckSplit(capPlan(plan.CapacityVUs, 1, 10, 2, 0), 3); err == nil || !strings.Contains(err.Error(), "cannot be split into 3 segments") {
		t.Errorf("CheckSplit: %v", err)
	}
	if err := CheckSplit(capPlan(plan.CapacityVUs, 1, 10, 2, 0), 1); err != nil {
		t.Errorf("CheckSplit into 1: %v", err)
	}
}
