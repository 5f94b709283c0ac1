package openai

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine"
)

// timeoutCause is the cause a watchdog cancels a request with. Cancellation
// surfaces as an ordinary read or dial error; context.Cause recovers which
// deadline it was, so the class is right whatever the transport reports.
type timeoutCause struct{ class string }

func (t *timeoutCause) Error() string { return t.class }

var (
	causeTTFT    = &timeoutCause{engine.ErrTimeoutTTFT}
	causeIdle    = &timeoutCause{engine.ErrTimeoutIdle}
	causeTotal   = &timeoutCause{engine.ErrTimeoutTotal}
	causeDrained = &timeoutCause{"drained"} // never reported: the result is already final
)

// timeouts are a request's deadlines, all measured from t0 or from the
// latest event.
type timeouts struct {
	ttft, idle, total time.Duration
}

// watchdog enforces the TTFT, idle and total deadlines of one request with
// a single timer. Events only store their time in an atomic; the timer, when
// it fires, works out which deadline is next and either cancels the request
// or re-arms itself, so the per-event cost is one atomic store.
// activity is called by the reading goroutine; the timer runs on its own.
type watchdog struct {
	start  time.Time
	t      timeouts
	cancel context.CancelCauseFunc
	// last is when the latest event arrived, in ns after start, once text
	// has begun; 0 while the request still waits for its first text.
	last atomic.Int64

	mu      sync.Mutex // serialises fire, drain and stop
	timer   *time.Timer
	drainBy time.Duration
	stopped bool
}

// startWatchdog arms a watchdog for a request sent at start.
func startWatchdog(start time.Time, t timeouts, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{start: start, t: t, cancel: cancel}
	due, _ := w.due()
	w.mu.Lock()
	w.timer = time.AfterFunc(due, w.fire)
	w.mu.Unlock()
	return w
}

// activity records an event at time at, once text has begun (before it,
// only the TTFT deadline applies). The first call re-arms the timer, since
// the idle deadline may come before the TTFT deadline it was armed for;
// later calls only move the deadline later, which the timer finds out when
// it fires.
func (w *watchdog) activity(at time.Time) {
	d := max(int64(at.Sub(w.start)), 1)
	if w.last.Swap(d) == 0 {
		w.rearm()
	}
}

// rearm sets the timer to the current deadline.
func (w *watchdog) rearm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	due, _ := w.due()
	w.timer.Reset(max(due-time.Since(w.start), 0))
}

// due returns the next deadline, as an offset from start, and its cause.
func (w *watchdog) due() (time.Duration, error) {
	if w.drainBy > 0 {
		return w.drainBy, causeDrained
	}
	last := time.Duration(w.last.Load())
	if last == 0 {
		if w.t.ttft < w.t.total {
			return w.t.ttft, causeTTFT
		}
		return w.t.total, causeTotal
	}
	if last+w.t.idle < w.t.total {
		return last + w.t.idle, causeIdle
	}
	return w.t.total, causeTotal
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	now := time.Since(w.start)
	due, cause := w.due()
	if now >= due {
		w.stopped = true
		w.cancel(cause)
		return
	}
	w.timer.Reset(due - now)
}

// drain replaces every deadline with a short one: the result is final and
// only the rest of the body is being read so the connection can be reused.
func (w *watchdog) drain(grace time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.drainBy = time.Since(w.start) + grace
	w.timer.Reset(grace)
}

// stop disarms the watchdog; after it returns the request is never canceled by it.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
