package executor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/servermetrics"
)

// spans records when each iteration ran.
type spans struct {
	mu   sync.Mutex
	runs []span
	last atomic.Int64 // unix nanos of the latest end
}

type span struct {
	stage      string
	start, end time.Time
}

// fn runs iterations of d, recording each.
func (s *spans) fn(d time.Duration) func(ctx context.Context, it engine.Iteration) error {
	sleep := sleepFn(d)
	return func(ctx context.Context, it engine.Iteration) error {
		start := time.Now()
		err := sleep(ctx, it)
		end := time.Now()
		s.mu.Lock()
		s.runs = append(s.runs, span{it.Stage, start, end})
		s.mu.Unlock()
		s.last.Store(end.UnixNano())
		return err
	}
}

// queueFake is a server whose queue empties a lag after the client's last
// iteration ended; never, when lag is negative; err, when set, is every
// reading's.
type queueFake struct {
	s     *spans
	lag   time.Duration
	err   error
	reads atomic.Int32
}

func (q *queueFake) Queue() (servermetrics.QueueReading, error) {
	q.reads.Add(1)
	if q.err != nil {
		return servermetrics.QueueReading{}, q.err
	}
	busy := q.lag < 0 || time.Now().Before(time.Unix(0, q.s.last.Load()).Add(q.lag))
	if busy {
		return servermetrics.QueueReading{Waiting: 3, Text: "fake_waiting 3"}, nil
	}
	return servermetrics.QueueReading{Text: "fake_waiting 0"}, nil
}

// settlePlan is a search of rates from 8/s that breaks above 5/s, whose
// iterations outlast their window: each probe leaves a backlog.
func settlePlan() plan.Plan {
	p := capPlan(plan.CapacityRate, 8, 64, 2, 0.3)
	p.Scenarios[0].Capacity.IdleTimeout = 30 * time.Second
	return p
}

func runSettle(t *testing.T, p plan.Plan, q ServerQueue, r *fakeRunner) capacity.Outcome {
	t.Helper()
	e := New(p, r, &fakeSink{})
	e.SetProbeJudge(&capJudge{c: 5})
	if q != nil {
		e.SetServerQueue(q)
	}
	if err := e.Run(t.Context()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return e.Capacity()[0]
}

// Every probe after the first starts once the iterations of the ones
// before it have ended: none of them runs into its warmup or window.
func TestCapacityProbesStartClean(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s := &spans{}
		o := runSettle(t, settlePlan(), nil, &fakeRunner{fn: s.fn(3 * time.Second)})
		if o.Stopped != "" || len(o.Probes) < 3 {
			t.Fatalf("search stopped %q after %d probes, want it to converge", o.Stopped, len(o.Probes))
		}
		if o.Probes[0].Settle.Checked {
			t.Errorf("the first probe waited: %+v", o.Probes[0].Settle)
		}
		for _, p := range o.Probes[1:] {
			st := p.Settle
			if !st.Checked || !st.Idle || st.Running != 0 || st.Waited <= 0 || st.Server != "" {
				t.Errorf("probe %d settle %+v, want a wait that ended idle, no server read", p.Index+1, st)
			}
			// From an idle server, the warmup lasts a window (2s), not 1s.
			if got, want := p.Start.Sub(st.Began), 2*time.Second; got != want {
				t.Errorf("probe %d warmed up %v after its wait, want a window's %v", p.Index+1, got, want)
			}
			for _, run := range s.runs {
				if run.start.Before(st.Began) && run.end.After(st.Began) {
					t.Errorf("probe %d began at %v while an iteration of %q (%v to %v) still ran", p.Index+1, st.Began, run.stage, run.start, run.end)
				}
			}
		}
	})
}

// With the server's metrics read, a probe also waits for the server's
// own queue to empty.
func TestCapacitySettleWaitsForTheServersQueue(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s := &spans{}
		q := &queueFake{s: s, lag: 2 * time.Second}
		o := runSettle(t, settlePlan(), q, &fakeRunner{fn: s.fn(3 * time.Second)})
		if o.Stopped != "" || len(o.Probes) < 2 {
			t.Fatalf("search stopped %q after %d probes", o.Stopped, len(o.Probes))
		}
		for _, p := range o.Probes[1:] {
			st := p.Settle
			if !st.Idle || st.Server != "fake_waiting 0" {
				t.Errorf("probe %d settle %+v, want idle on the server's reading", p.Index+1, st)
			}
		}
		// The wait outlasts the client's last iteration by the server's lag.
		p := o.Probes[1]
		var last time.Time
		for _, run := range s.runs {
			if run.end.Before(p.Settle.Began) && run.end.After(last) {
				last = run.end
			}
		}
		if d := p.Settle.Began.Sub(last); d < 2*time.Second || d > 2*time.Second+settleQueuePoll {
			t.Errorf("probe 2 began %v after the last iteration ended, want the server's 2s lag (+ one poll)", d)
		}
	})
}

// A server that never drains stops the search, saying so: no later probe
// could be judged on its own load.
func TestCapacityStopsWhenTheServerDoesNotDrain(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s := &spans{}
		p := settlePlan()
		p.Scenarios[0].Capacity.IdleTimeout = 5 * time.Second
		o := runSettle(t, p, &queueFake{s: s, lag: -1}, &fakeRunner{fn: s.fn(100 * time.Millisecond)})
		want := "the server did not drain within idle_timeout 5s after probe-01: fake_waiting 3"
		if !strings.Contains(o.Stopped, want) || len(o.Probes) != 1 {
			t.Errorf("stopped %q after %d probes, want %q after 1", o.Stopped, len(o.Probes), want)
		}
	})
}

// Iterations that outlast idle_timeout stop the search too.
func TestCapacityStopsWhenTheLoadDoesNotDrain(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s := &spans{}
		p := settlePlan()
		p.Scenarios[0].Capacity.IdleTimeout = 2 * time.Second
		o := runSettle(t, p, nil, &fakeRunner{fn: s.fn(time.Minute)})
		if !strings.Contains(o.Stopped, "the load did not drain within idle_timeout 2s after probe-01") {
			t.Errorf("stopped %q, want the load not drained", o.Stopped)
		}
	})
}

// A server whose metrics have no queue gauge, or cannot be read, is taken
// as idle once llmload's own iterations have ended.
func TestCapacitySettleWithoutQueueGauges(t *testing.T) {
	for name, tt := range map[string]struct {
		err  error
		want string
	}{
		"no gauge":   {servermetrics.ErrNoQueue, "no queue gauge in the server's metrics"},
		"unreadable": {errors.New("HTTP 503 Service Unavailable"), "could not be read (HTTP 503 Service Unavailable)"},
	} {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				s := &spans{}
				o := runSettle(t, settlePlan(), &queueFake{s: s, err: tt.err}, &fakeRunner{fn: s.fn(time.Second)})
				if o.Stopped != "" || len(o.Probes) < 2 {
					t.Fatalf("stopped %q after %d probes", o.Stopped, len(o.Probes))
				}
				if st := o.Probes[1].Settle; !st.Idle || !strings.Contains(st.Server, tt.want) {
					t.Errorf("settle %+v, want idle with %q", st, tt.want)
				}
			})
		})
	}
}

// A rate so low that max_window cannot hold min_samples arrivals is
// judged on 90% of what it holds, at least 5; its windows stay Window
// long, so the judge can fail it after the first.
func TestCapacityLowRatesLowerTheSampleTarget(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := capPlan(plan.CapacityRate, 0.5, 0.5, 2, 0.05)
		p.Scenarios[0].Capacity.MinSamples = 8
		p.Scenarios[0].Capacity.MaxWindow = 20 * time.Second
		sink := &fakeSink{}
		j := &capJudge{c: 100}
		e := New(p, &fakeRunner{fn: noop}, sink)
		e.SetProbeJudge(j)
		if err := e.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := sink.started[0].Planned, 2*time.Second; got != want {
			t.Errorf("a probe at 0.5/s measured %v, want the window's %v", got, want)
		}
		if got, want := j.calls[0].MinSamples, 8; got != want {
			t.Errorf("a probe at 0.5/s is judged on %d requests, want min_samples %d (20 s hold 10)", got, want)
		}
		c := &capacityRun{cs: *p.Scenarios[0].Capacity, rate: true}
		for _, tt := range []struct {
			load float64
			min  int
		}{{100, 8}, {0.5, 8}, {0.4, 7}, {0.25, 5}, {0.01, 5}} {
			if m := c.minSamples(tt.load); m != tt.min {
				t.Errorf("at %v/s: min_samples %d, want %d", tt.load, m, tt.min)
			}
		}
	})
}
