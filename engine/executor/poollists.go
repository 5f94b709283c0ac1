package executor

import "time"

// waiter is an arrival waiting for a VU.
type waiter struct {
	job             openJob
	since, deadline time.Time
}

// waitQueue is the arrivals waiting for a VU, oldest first. Deadlines are
// in order, since every waiter waits PoolWait from its arrival.
type waitQueue struct{ q []waiter }

func (w *waitQueue) len() int      { return len(w.q) }
func (w *waitQueue) push(x waiter) { w.q = append(w.q, x) }

// pop removes the oldest waiter.
func (w *waitQueue) pop() (waiter, bool) {
	if len(w.q) == 0 {
		return waiter{}, false
	}
	x := w.q[0]
	w.q[0] = waiter{}
	w.q = w.q[1:]
	return x, true
}

// expired removes the waiters whose deadline is not after now.
func (w *waitQueue) expired(now time.Time) []waiter {
	n := 0
	for n < len(w.q) && !w.q[n].deadline.After(now) {
		n++
	}
	gone := append([]waiter(nil), w.q[:n]...)
	clear(w.q[:n])
	w.q = w.q[n:]
	return gone
}

// drain removes every waiter.
func (w *waitQueue) drain() []waiter {
	gone := w.q
	w.q = nil
	return gone
}

func (w *waitQueue) firstDeadline() (time.Time, bool) {
	if len(w.q) == 0 {
		return time.Time{}, false
	}
	return w.q[0].deadline, true
}

func (w *waitQueue) lastDeadline() (time.Time, bool) {
	if len(w.q) == 0 {
		return time.Time{}, false
	}
	return w.q[len(w.q)-1].deadline, true
}

// freeList is the idle VUs, oldest first, so load spreads over every VU
// as a channel's queue would spread it; unlike a channel it can also give
// out one VU in particular (a session's own). Not safe for concurrent
// use: the pool's mutex guards it.
type freeList struct {
	head, tail *openVU
}

// push puts w, which must not be on the list, at its end.
func (l *freeList) push(w *openVU) {
	w.prev, w.next, w.free = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
}

// take removes and returns prefer when it is idle, else the VU idle the
// longest; nil when none is.
func (l *freeList) take(prefer *openVU) *openVU {
	w := l.head
	if prefer != nil && prefer.free {
		w = prefer
	}
	if w == nil {
		return nil
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next, w.free = nil, nil, false
	return w
}
