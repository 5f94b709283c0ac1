//go:build race

package history_test

// simRace shortens the simulations under the race detector.
const simRace = true
