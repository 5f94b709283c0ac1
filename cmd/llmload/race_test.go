//go:build race

package main

// raceEnabled loosens the timing bounds of the end-to-end tests under
// the race detector, which slows every channel operation and goroutine
// hand-off the scheduler times.
const raceEnabled = true
