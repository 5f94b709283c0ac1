package executor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// traceRun replays a trace (engine.Trace): each record is an arrival at
// the scenario's start plus its At, dispatched as an arrival-rate
// scenario's are (openPool: the free list, drops, growth up to max_vus,
// the graceful stop), its iteration carrying the record (Iteration.Trace).
//
// The records of a session run in order, one at a time: a record whose
// time comes while the session's previous one still runs is held, and
// runs as soon as that one ends, on the same VU, its Scheduled still its
// own time (so the schedule lag shows the wait). A session's record whose
// time comes when the session is idle goes to the VU that ran the
// session's previous record if it is idle, else to any. Records of other
// sessions, and records of none, are never held up.
//
// A record timed by its parent (plan.TraceArrival.Parent: a trace of
// trees) is not scheduled at a time of its own: when its parent's
// iteration ends, a timer dispatches it Delay later, as the pool
// dispatches any arrival, its Scheduled that instant (traceTree). Such
// records are never held by a session.
//
// The one stage's window ends at the scenario's start plus its Duration
// (the last record's time), or, in a trace of trees, once every record
// has run or been dropped, if that is later. Held records may still start after it, in the
// graceful stop, as their sessions' previous records end; a held record
// whose session is still running when the graceful stop cancels it (or at
// an interrupt) is dropped and counted, as a record with no free VU is.
type traceRun struct {
	*scenarioBase
	arrivals []plan.TraceArrival   // the segment's own, in order of At
	sessions map[int]*traceSession // by Session; read-only once run starts
	pool     *openPool
	// due is the index in arrivals of the next record to schedule; only
	// the scheduler's goroutine uses it.
	due      int
	then     func(w *openVU, it engine.Iteration) (openJob, bool) // r.ended, bound once
	finished atomic.Int64                                         // records run to their end or dropped
	tree     *traceTree                                           // nil unless records are timed by parents
}

// traceSession is the state of one session's replay, guarded by mu.
type traceSession struct {
	mu      sync.Mutex
	running bool    // a record of the session is running (or handed to a VU)
	vu      *openVU // the VU that ran its last record
	held    []*plan.TraceArrival
}

// newTraceRun makes sc's one stage when the plan gives none (named after
// the scenario, as long as the trace) and takes the segment's share of
// the arrivals; prepare checks them.
func newTraceRun(b *scenarioBase) *traceRun {
	r := &traceRun{scenarioBase: b}
	d := b.sc.Trace.Duration()
	if len(b.sc.Stages) == 0 {
		b.sc.Stages = []plan.Stage{{Name: b.sc.Name, Duration: d}}
	} else {
		b.sc.Stages = slices.Clone(b.sc.Stages)
		b.sc.Stages[0].Duration = max(b.sc.Stages[0].Duration, d)
	}
	if b.sc.Trace != nil {
		r.arrivals = traceShare(b.sc.Trace, b.eng.seg)
		r.tree = newTraceTree(r.arrivals)
	}
	b.rates = []float64{0}
	if dur := b.sc.Stages[0].Duration; dur > 0 {
		b.rates[0] = float64(len(r.arrivals)) / dur.Seconds()
	}
	r.pool = newOpenPool(b, b.currentStage)
	r.then = r.ended
	return r
}

func (r *traceRun) prepare() error {
	t := r.sc.Trace
	if t == nil || len(t.Arrivals) == 0 {
		return fmt.Errorf("scenario %q: the trace has no records to replay", r.sc.Name)
	}
	if len(r.sc.Stages) != 1 {
		return fmt.Errorf("scenario %q: a trace scenario has one stage, not %d", r.sc.Name, len(r.sc.Stages))
	}
	for i, a := range t.Arrivals {
		if a.At < 0 || a.Session < 0 || i > 0 && a.At < t.Arrivals[i-1].At {
			return fmt.Errorf("scenario %q: trace arrival %d (record %d, at %v, session %d) is out of order: arrivals must be in order of time, from 0",
				r.sc.Name, i, a.Record, a.At, a.Session)
		}
		if a.Parent < 0 || a.Parent > i || a.Delay < 0 {
			return fmt.Errorf("scenario %q: trace arrival %d (record %d) names parent %d and delay %v: a parent comes before its child, and a delay is 0 or more",
				r.sc.Name, i, a.Record, a.Parent, a.Delay)
		}
	}
	if err := checkOpenSplit(r.sc, r.eng.seg); err != nil {
		return err
	}
	if err := checkTraceSplit(r.sc, r.eng.seg.Count); err != nil {
		return err
	}
	r.sessions = map[int]*traceSession{}
	for _, a := range r.arrivals {
		if a.Session > 0 && r.sessions[a.Session] == nil {
			r.sessions[a.Session] = &traceSession{}
		}
	}
	return nil
}

// initialVUs is the segment's share of the pre-allocated VUs.
func (r *traceRun) initialVUs() int { return r.eng.seg.Share(max(r.sc.PreAllocatedVUs, 0)) }

func (r *traceRun) progress(st *ScenarioStatus) {
	r.pool.progress(st)
	if r.start.Load() != 0 && !r.done.Load() {
		st.Rate = r.rates[0]
	}
	st.IterationsDone = r.finished.Load()
	st.IterationsTotal = int64(len(r.arrivals))
}

// run dispatches every record at its time, then lets in-flight iterations
// (and held session records) finish within GracefulStop; children still
// waiting for their delay then are dropped.
func (r *traceRun) run(ctx context.Context) {
	r.runOpen(ctx, r)
	if r.tree != nil {
		r.tree.close(r)
	}
}

// window is the one stage's: from the start to its Duration, at least the
// last record's time.
func (r *traceRun) window(int) (start, end time.Duration) { return 0, r.sc.Stages[0].Duration }

// next is the next record as an arrival of the one stage; its seq is the
// record's index in r.arrivals.
func (r *traceRun) next() (arrival, bool) {
	for r.due < len(r.arrivals) && r.arrivals[r.due].Parent != 0 {
		r.due++ // a child: its parent's end dispatches it
	}
	i := r.due
	if i >= len(r.arrivals) {
		return arrival{}, false
	}
	r.due++
	return arrival{at: r.arrivals[i].At, seq: int64(i)}, true
}

// dispatch hands a's record, which is due, to arrive.
func (r *traceRun) dispatch(a arrival, _ time.Time) { r.arrive(&r.arrivals[a.seq]) }

// arrive dispatches a record that is due, or holds it while its session's
// previous record runs (or waits for a VU).
func (r *traceRun) arrive(a *plan.TraceArrival) {
	if a.Session == 0 || a.Parent != 0 {
		r.send(a, nil)
		return
	}
	s := r.sessions[a.Session]
	s.mu.Lock()
	if s.running {
		s.held = append(s.held, a)
		s.mu.Unlock()
		return
	}
	// No VU touches the session until its record is handed out.
	s.running = true
	prefer := s.vu
	s.mu.Unlock()
	r.send(a, prefer)
}

// send hands a's iteration to the pool, to prefer when it is idle.
func (r *traceRun) send(a *plan.TraceArrival, prefer *openVU) {
	j := r.job(a)
	j.prefer = prefer
	r.pool.dispatch(j)
}

// job is a's iteration, scheduled at its own time.
func (r *traceRun) job(a *plan.TraceArrival) openJob {
	return r.jobAt(a, r.startAt.Add(a.At))
}

// jobAt is a's iteration, scheduled at at.
func (r *traceRun) jobAt(a *plan.TraceArrival, at time.Time) openJob {
	return openJob{it: engine.Iteration{
		Scenario: r.sc.Name, Stage: r.sc.Stages[0].Name, Exec: r.sc.Exec,
		Scheduled: at, Trace: a, Warmup: a.Warm,
	}, then: r.then, dropped: r.lost}
}

// finish counts a record done (run to its end, or dropped); the last one
// settles a trace of trees.
func (r *traceRun) finish() {
	if r.finished.Add(1) == int64(len(r.arrivals)) && r.tree != nil {
		close(r.tree.settle)
	}
}

// ended runs on w's goroutine once a record's iteration has ended: it
// counts the record done and, in a session, runs the session's next
// record at once on the same VU when that one is already due (held).
func (r *traceRun) ended(w *openVU, it engine.Iteration) (openJob, bool) {
	if r.tree != nil {
		r.tree.answered(r, it.Trace)
	}
	r.finish()
	if it.Trace.Session == 0 || it.Trace.Parent != 0 {
		return openJob{}, false
	}
	s := r.sessions[it.Trace.Session]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vu = w
	if a, ok := r.nextHeld(s); ok {
		return r.job(a), true
	}
	return openJob{}, false
}

// lost records a record that found no VU: marked dropped and counted
// done. In a session, the session's next held record, already due, is
// sent in its place.
func (r *traceRun) lost(it engine.Iteration, reason string) {
	r.markDrop(it.Stage, it.Scheduled, reason)
	if r.tree != nil {
		r.tree.dropBelow(r, it.Trace)
	}
	r.finish()
	if it.Trace.Session == 0 || it.Trace.Parent != 0 {
		return
	}
	s := r.sessions[it.Trace.Session]
	s.mu.Lock()
	a, ok := r.nextHeld(s)
	prefer := s.vu
	s.mu.Unlock()
	if ok {
		r.send(a, prefer)
	}
}

// nextHeld takes s's next held record, which keeps the session running;
// with none, or once the iterations' context has ended (held records that
// can no longer run are dropped and counted), the session goes idle.
// s.mu is held.
func (r *traceRun) nextHeld(s *traceSession) (*plan.TraceArrival, bool) {
	if len(s.held) > 0 && r.pool.ictx.Err() == nil {
		a := s.held[0]
		s.held = s.held[1:]
		return a, true
	}
	for _, a := range s.held {
		r.pool.count(engine.DropStopped)
		r.markDrop(r.sc.Stages[0].Name, r.startAt.Add(a.At), engine.DropStopped)
		if r.tree != nil {
			r.tree.dropBelow(r, a)
		}
		r.finish()
	}
	s.held, s.running = nil, false
	return nil, false
}
