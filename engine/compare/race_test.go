//go:build race

package compare

// raceEnabled shortens the simulations under the race detector.
const raceEnabled = true
