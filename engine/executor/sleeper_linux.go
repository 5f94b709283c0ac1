package executor

import (
	"syscall"
	"time"
)

// preciseSleep finishes the sleeper's short waits. It is a variable so
// tests can swap in time.Sleep, which a testing/synctest bubble fakes; a
// nanosleep it cannot.
var preciseSleep = nanosleep

// nanosleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds; callers keep d short (see preciseWindow).
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	// An EINTR wakes early; the caller's loop sleeps the rest.
	_ = syscall.Nanosleep(&ts, nil)
}
