//go:build !race

package changepoint

// raceEnabled shortens the simulations under the race detector.
const raceEnabled = false
