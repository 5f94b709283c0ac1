package backoff

import (
	"maps"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
)

// What counts as an outage: a lone reset, or a few refusals while a server
// restarts a worker, must not fail a run.
const (
	// MinOutage is how long the target must go unanswering — from the
	// first unreachable failure to the first response after it, or to the
	// end of the run — for the gap to count as an outage.
	MinOutage = time.Second
	// MinOutageAttempts is how many unreachable failures, with no response
	// between them, an outage needs besides its length.
	MinOutageAttempts = 3
)

// Outage is a stretch of the run in which the target answered nothing.
type Outage struct {
	// Start is the first unreachable failure after the last response (for
	// a request that waited its TTFT bound unanswered, when it was sent).
	Start time.Time `json:"start"`
	// End is the first response after Start; zero when none came before
	// the run ended.
	End time.Time `json:"end,omitzero"`
	// Last is the last unreachable failure of the outage.
	Last time.Time `json:"last"`
	// Attempts counts the unreachable failures, by error class in Classes.
	Attempts int64            `json:"attempts"`
	Classes  map[string]int64 `json:"classes"`
}

// Recovered reports whether the target answered again before the run ended.
func (o *Outage) Recovered() bool { return !o.End.IsZero() }

// until is when the outage ended, or runEnd when it did not.
func (o *Outage) until(runEnd time.Time) time.Time {
	if o.Recovered() {
		return o.End
	}
	return later(runEnd, o.Last)
}

// Duration is how long the target did not answer, up to runEnd for an
// outage that had not ended.
func (o *Outage) Duration(runEnd time.Time) time.Duration { return o.until(runEnd).Sub(o.Start) }

// counts applies MinOutage and MinOutageAttempts.
func (o *Outage) counts(runEnd time.Time) bool {
	return o.Attempts >= MinOutageAttempts && o.Duration(runEnd) >= MinOutage
}

// Tracker records, run-wide, when the target stopped answering and whether
// it came back. It is an Observer; safe for concurrent use.
type Tracker struct {
	mu   sync.Mutex
	cur  *Outage // the gap going on now; nil while the target answers
	done []Outage
}

// NewTracker returns a tracker that has seen nothing.
func NewTracker() *Tracker { return &Tracker{} }

// Observe implements Observer. Outcomes that say nothing about reachability
// (a canceled request, a request never sent) are ignored.
func (t *Tracker) Observe(r *engine.Result, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case Unreachable(r) || Unanswered(r):
		// A request that waited its TTFT bound unanswered was sent into
		// the silence: the outage began when it was sent.
		from := at
		if Unanswered(r) && !r.Start.IsZero() {
			from = r.Start
		}
		if t.cur == nil {
			t.cur = &Outage{Start: from, Classes: map[string]int64{}}
		}
		if from.Before(t.cur.Start) {
			t.cur.Start = from
		}
		t.cur.Attempts++
		t.cur.Classes[r.Err.Class]++
		t.cur.Last = later(t.cur.Last, at)
	case Answered(r) && t.cur != nil:
		// A stream whose headers came before the outage began (cut off by
		// the server's death) says nothing about the target since.
		began := answeredAt(r, at)
		if began.Before(t.cur.Start) {
			return
		}
		// The target was back when its headers came, not when the answer
		// they began was over: a 2 s answer must not make the outage 2 s
		// longer.
		t.cur.End = later(began, t.cur.Last)
		// A gap too short to count is forgotten once the target answers.
		if t.cur.counts(t.cur.End) {
			t.done = append(t.done, *t.cur)
		}
		t.cur = nil
	}
}

// Outages lists the outages in the order they began; one still going on
// at runEnd is last, unrecovered, and measured up to runEnd.
func (t *Tracker) Outages(runEnd time.Time) []Outage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Outage, 0, len(t.done)+1)
	for _, o := range t.done {
		o.Classes = maps.Clone(o.Classes)
		out = append(out, o)
	}
	if t.cur != nil && t.cur.counts(runEnd) {
		o := *t.cur
		o.Classes = maps.Clone(o.Classes)
		out = append(out, o)
	}
	return out
}

// answeredAt is when r's response began: t0 plus TTFB, or at when r does
// not say.
func answeredAt(r *engine.Result, at time.Time) time.Time {
	if r.Start.IsZero() || r.TTFB <= 0 {
		return at
	}
	return r.Start.Add(r.TTFB)
}

// later returns the later of a and b: VUs report out of order by a hair.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
