//go:build !linux

package executor

import "time"

// preciseSleep is a plain sleep where nanosleep is not available, so
// schedule lag there is bounded by the runtime's timer resolution. It is a
// variable, as on Linux, so tests can swap it.
var preciseSleep = time.Sleep
