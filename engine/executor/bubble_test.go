package executor

import (
	"testing"
	"testing/synctest"
	"time"
)

// bubble runs f in a testing/synctest bubble, on a fake clock that only
// moves when every goroutine waits, with the arrival sleeper's nanosleep
// (a timerfd or nanosleep, which a bubble cannot fake) swapped for
// time.Sleep (which it can).
// Schedules, windows and timeouts then come out exact however busy the
// machine is. Tests using it must not run in parallel.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := newPrecise
	newPrecise = func() (func(time.Duration), func()) { return time.Sleep, func() {} }
	defer func() { newPrecise = saved }()
	synctest.Test(t, f)
}
