package sim

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// scheduler models a continuous-batching engine: MaxBatch slots handed out
// first come, first served, one prefill at a time, and a decode step whose
// length grows with the number of running sequences. It keeps no goroutine
// of its own: each request's goroutine sleeps until the absolute times the
// scheduler computes for it. Safe for concurrent use.
type scheduler struct {
	cfg *Config

	mu          sync.Mutex
	running     int          // sequences holding a slot (prefill or decode)
	queue       list.List    // of *waiter, oldest first
	prefillFree time.Time    // when the prefill lane is next idle
	stall       atomic.Int64 // total batch stall caused by prefills, in ns
}

// waiter is a request queued for a slot.
type waiter struct {
	ready   chan struct{}
	granted bool // set under scheduler.mu when a slot is handed over
}

func newScheduler(cfg *Config) *scheduler {
	return &scheduler{cfg: cfg}
}

// acquire blocks until the caller holds a slot or ctx ends. A nil error
// obliges the caller to release.
func (s *scheduler) acquire(ctx context.Context) error {
	s.mu.Lock()
	if s.running < s.cfg.MaxBatch && s.queue.Len() == 0 {
		s.running++
		s.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	e := s.queue.PushBack(w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		if ctx.Err() == nil {
			return nil
		}
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.granted { // the slot arrived as ctx ended: pass it on
		s.releaseLocked()
	} else {
		s.queue.Remove(e)
	}
	return ctx.Err()
}

// release gives the caller's slot to the oldest waiter, or frees it.
func (s *scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *scheduler) releaseLocked() {
	front := s.queue.Front()
	if front == nil {
		s.running--
		return
	}
	w := s.queue.Remove(front).(*waiter)
	w.granted = true
	close(w.ready)
}

// booking is a prefill's time on the lane.
type booking struct{ start, end time.Time }

// prefill books the prefill of a prompt on the single prefill lane and
// returns its booking, whose end is when the first token exists. The
// running batch is stalled by PrefillInterference of its cost.
func (s *scheduler) prefill(promptTokens int) booking {
	cost := s.cfg.PrefillBase + time.Duration(promptTokens)*s.cfg.PrefillPerToken
	s.mu.Lock()
	start := time.Now()
	if s.prefillFree.After(start) {
		start = s.prefillFree
	}
	s.prefillFree = start.Add(cost)
	end := s.prefillFree
	s.mu.Unlock()
	s.stall.Add(int64(float64(cost) * s.cfg.PrefillInterference))
	return booking{start, end}
}

// cancel gives the lane back the part of b not yet run, as an engine
// drops an aborted request's prefill. Without it a burst of requests the
// client gave up on (a warmup's end, a timeout) would hold the lane for
// their whole prefills, and the next requests would wait for work that
// is never done. Later bookings keep their times; the ones after them
// start earlier.
func (s *scheduler) cancel(b booking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	left := b.end.Sub(maxTime(b.start, now))
	if left <= 0 {
		return
	}
	s.prefillFree = maxTime(s.prefillFree.Add(-left), now)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// step is the current length of one decode step.
func (s *scheduler) step() time.Duration {
	s.mu.Lock()
	n := s.running
	s.mu.Unlock()
	return s.cfg.DecodeBase + time.Duration(max(n-1, 0))*s.cfg.DecodePerSeq
}

// counts reports the running and waiting requests.
func (s *scheduler) counts() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.queue.Len()
}

// clock is one sequence's token clock. Deadlines are absolute and each one
// builds on the previous deadline, not on when the goroutine woke, so
// scheduling delays never accumulate into drift. Not safe for concurrent use.
type clock struct {
	s         *scheduler
	next      time.Time
	stallSeen int64
}

// newClock starts a sequence whose first token exists at first. Prefill
// stalls booked before that, including its own, do not delay it.
func (s *scheduler) newClock(first time.Time) *clock {
	return &clock{s: s, next: first, stallSeen: s.stall.Load()}
}

// tick returns when the next token exists: one decode step at the current
// batch size later, plus whatever prefill stalls hit the batch meanwhile.
func (c *clock) tick() time.Time {
	stall := c.s.stall.Load()
	c.next = c.next.Add(c.s.step() + time.Duration(stall-c.stallSeen))
	c.stallSeen = stall
	return c.next
}

// sleeper waits for absolute deadlines with one reusable timer.
type sleeper struct{ t *time.Timer }

// until returns at deadline, or with ctx's error once ctx ends.
func (z *sleeper) until(ctx context.Context, deadline time.Time) error {
	d := time.Until(deadline)
	if d <= 0 {
		return ctx.Err()
	}
	if z.t == nil {
		z.t = time.NewTimer(d)
	} else {
		z.t.Reset(d)
	}
	select {
	case <-z.t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop releases the timer.
func (z *sleeper) stop() {
	if z.t != nil {
		z.t.Stop()
	}
}
