//go:build !linux

package executor

import "time"

// preciseSleep is a plain sleep where nanosleep is not available, so
// schedule lag there is bounded by the runtime's timer resolution.
func preciseSleep(d time.Duration) { time.Sleep(d) }
