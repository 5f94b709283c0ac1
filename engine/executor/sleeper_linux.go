package executor

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds; callers keep d short (see preciseWindow).
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	// An EINTR wakes early; the caller's loop sleeps the rest.
	_ = syscall.Nanosleep(&ts, nil)
}
