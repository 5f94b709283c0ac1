// Package runclock is the one timeline every instant a run records is
// read from: the wall clock as it read when the process started, plus
// the monotonic time since.
//
// A request's start_offset_ms is a monotonic difference from the run's
// start, while the result's instants (the run's start and end, a stage's
// bounds, when a capacity probe began) are written as wall times. Read
// from time.Now, the two disagree by however far the wall clock was
// stepped or slewed during the run (NTP, a virtual machine paused and
// resumed): a request could seem to start before the probe that sent it.
// Read from Now, every instant in a result and every offset in the
// request records lie on the same line.
package runclock

import "time"

// origin is the wall clock and monotonic reading the timeline starts from.
var origin = time.Now()

// Now is the current instant on the run's timeline. Like time.Now it
// carries a monotonic reading, so differences between instants are
// unchanged; only its wall time ignores steps of the system clock since
// the process started.
func Now() time.Time { return origin.Add(time.Since(origin)) }
