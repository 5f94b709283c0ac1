package executor

import (
	"context"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
)

// traceTree is the state of a trace whose records form trees: each
// record's children, the timers of children waiting out their delay
// after their parent's answer, and the signal that every record has run.
//
// A child is dispatched by its timer, so a slow answer delays the whole
// subtree as it would in production. A child that never gets a parent's
// answer — the parent dropped, canceled by the graceful stop, or the run
// over before its delay — is dropped and counted with its descendants,
// never lost silently.
type traceTree struct {
	kids   map[int][]int // by parent's Record: the children's indices in the segment's arrivals
	settle chan struct{} // closed once every record of the segment has run or been dropped

	mu      sync.Mutex
	closed  bool
	waiting map[int]*time.Timer // by child's index: the timer that dispatches it
}

// newTraceTree indexes arrivals' children; nil when no record has a
// parent. Parents are indices in arrivals (traceShare renumbers them).
func newTraceTree(arrivals []plan.TraceArrival) *traceTree {
	kids := map[int][]int{}
	for i, a := range arrivals {
		if a.Parent > 0 && a.Parent <= len(arrivals) {
			p := arrivals[a.Parent-1].Record
			kids[p] = append(kids[p], i)
		}
	}
	if len(kids) == 0 {
		return nil
	}
	return &traceTree{kids: kids, settle: make(chan struct{}), waiting: map[int]*time.Timer{}}
}

// answered starts the delay of a's children now that a's iteration has
// ended; a parent canceled on the way (the iterations' context ended)
// gave no answer, so its subtree is dropped instead.
func (t *traceTree) answered(r *traceRun, a *plan.TraceArrival) {
	kids := t.kids[a.Record]
	if len(kids) == 0 {
		return
	}
	t.mu.Lock()
	if t.closed || r.pool.ictx.Err() != nil {
		t.mu.Unlock()
		t.dropBelow(r, a)
		return
	}
	end := runclock.Now()
	for _, k := range kids {
		due := end.Add(r.arrivals[k].Delay)
		// fire takes t.mu, so it finds its timer registered.
		t.waiting[k] = time.AfterFunc(time.Until(due), func() { t.fire(r, k, due) })
	}
	t.mu.Unlock()
}

// fire dispatches child k, due at due, unless close has taken it. It
// dispatches under t.mu so that close cannot return while a dispatch is
// under way.
func (t *traceTree) fire(r *traceRun, k int, due time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.waiting[k]; !ok {
		return
	}
	delete(t.waiting, k)
	r.pool.dispatch(r.jobAt(&r.arrivals[k], due))
}

// dropBelow drops every descendant of a, which was never answered,
// counting each (engine.DropParent) and marking it now.
func (t *traceTree) dropBelow(r *traceRun, a *plan.TraceArrival) {
	stack := append([]int(nil), t.kids[a.Record]...)
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r.dropRecord(engine.DropParent)
		stack = append(stack, t.kids[r.arrivals[k].Record]...)
	}
}

// close ends the tree once the pool has stopped: children still waiting
// out their delay are dropped (engine.DropStopped), with their subtrees.
func (t *traceTree) close(r *traceRun) {
	t.mu.Lock()
	t.closed = true
	left := t.waiting
	t.waiting = nil
	t.mu.Unlock()
	for k, tm := range left {
		tm.Stop()
		r.dropRecord(engine.DropStopped)
		t.dropBelow(r, &r.arrivals[k])
	}
}

// dropRecord counts and marks one record dropped now for reason, and
// counts it done.
func (r *traceRun) dropRecord(reason string) {
	r.pool.count(reason)
	r.markDrop(r.sc.Stages[0].Name, runclock.Now(), reason)
	r.finish()
}

// settled is closed once every record has run or been dropped; nil for a
// trace without trees, whose window ends at its last record's time.
func (r *traceRun) settled() <-chan struct{} {
	if r.tree == nil {
		return nil
	}
	return r.tree.settle
}

// settler is an arrival source whose last stage lasts until its work is
// done, past its planned end: a trace of trees, whose children start at
// their parents' answers.
type settler interface{ settled() <-chan struct{} }

// awaitSettled extends the last stage's window past end until src has
// settled; it returns the window's end and whether it was reached (not
// cut by ctx).
func awaitSettled(ctx context.Context, src arrivalSource, end time.Time) (time.Time, bool) {
	s, ok := src.(settler)
	if !ok || s.settled() == nil {
		return end, true
	}
	select {
	case <-s.settled():
		return later(end, runclock.Now()), true
	case <-ctx.Done():
		return runclock.Now(), false
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
