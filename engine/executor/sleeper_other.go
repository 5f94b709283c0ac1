//go:build !linux

package executor

import "time"

// newPrecise is a plain sleep where no timerfd is available, so schedule
// lag there is bounded by the runtime's timer resolution. It is a
// variable, as on Linux, so tests can swap it.
var newPrecise = func() (sleep func(time.Duration), release func()) { return time.Sleep, func() {} }
